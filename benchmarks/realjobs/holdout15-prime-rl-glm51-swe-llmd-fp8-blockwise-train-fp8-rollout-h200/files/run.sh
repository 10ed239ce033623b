#!/bin/bash
# fp8-doctor holdout15 (eval16): PrimeIntellect-ai/prime-rl @ 559b44772e471d1538537b8805cc77f3824a5e64. README.md:166's launch form applied to this example config.
uv run rl @ examples/advanced/glm-5.2/swe-llmd.toml
