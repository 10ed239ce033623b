#!/bin/bash
# fp8-doctor holdout25 (eval26): PrimeIntellect-ai/prime-rl @ 559b44772e471d1538537b8805cc77f3824a5e64; the README's
# launch form for an example config (`uv run rl @ <config>`).
uv run rl @ examples/advanced/minimax-m2.5/swe.toml
