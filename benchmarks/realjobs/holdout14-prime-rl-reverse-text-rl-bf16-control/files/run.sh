#!/bin/bash
# fp8-doctor holdout14 (eval15): PrimeIntellect-ai/prime-rl @ 559b44772e471d1538537b8805cc77f3824a5e64, README.md:166 and configs/basic/reverse-text/README.md:8 (verbatim).
uv run rl @ configs/basic/reverse-text/rl.toml
