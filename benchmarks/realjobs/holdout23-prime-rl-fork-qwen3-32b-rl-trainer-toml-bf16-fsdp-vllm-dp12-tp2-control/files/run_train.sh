# Source: aghyad-deeb/prime-rl @ 063ad2d5b0a7fe4d9a35493953cfb7a41c8adc2c run_train.sh
uv run torchrun \
    --nproc-per-node 8 \
    --local-ranks-filter 0 \
    src/prime_rl/trainer/rl/train.py  @ trainer.toml \
        --model.name "Qwen/Qwen3-32b" \
        --output-dir $OUTPUT_DIR \
        --log.level debug \
