# fp8-doctor holdout14 (eval15): THUDM/slime @ 624b824a898ab0ec1fcb4d373004c7f3852bf515, scripts/models/mimo-7B-rl.sh (verbatim below this header line)
MODEL_ARGS=(
    --swiglu
    --num-layers 36
    --hidden-size 4096
    --ffn-hidden-size 11008
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --use-rotary-position-embeddings
    --disable-bias-linear
    --add-qkv-bias
    --normalization "RMSNorm"
    --norm-epsilon 1e-05
    --rotary-base 640000
    --vocab-size 151680
    --untie-embeddings-and-output-weights
    --max-position-embeddings 32768
    --mtp-num-layers 1
)
