#!/bin/bash
# fp8-doctor holdout14 (eval15): PrimeIntellect-ai/prime-rl @ 559b44772e471d1538537b8805cc77f3824a5e64. The launch form of the repository's README
# (README.md:166 `uv run rl @ configs/basic/reverse-text/rl.toml`) applied to this example config.
uv run rl @ examples/advanced/glm-4.5-air/swe.toml
