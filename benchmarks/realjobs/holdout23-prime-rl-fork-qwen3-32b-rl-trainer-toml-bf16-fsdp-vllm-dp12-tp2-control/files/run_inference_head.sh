# Source: aghyad-deeb/prime-rl @ 063ad2d5b0a7fe4d9a35493953cfb7a41c8adc2c run_inference_head.sh
uv run inference @ infer.toml \
    --api-key $INFERENCE_SERVER_API_KEY
    --model.name "Qwen/Qwen3-32b" \
    --data-parallel-size 12 \
    --tensor-parallel-size 2 \
    --data-parallel-size-local 4 \
    --data-parallel-address $DATA_PARALLEL_ADDRESS \
    --data-parallel-rpc-port $DATA_PARALLEL_RPC_PORT \
