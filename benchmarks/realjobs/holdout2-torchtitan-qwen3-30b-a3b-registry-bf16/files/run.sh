# Launch line per pytorch/torchtitan run_train.sh usage (MODULE / CONFIG variables) @ 73aed7f6c09c04041dae2d2c185bb4c6384ebb3f:
# the Qwen3-30B-A3B entry of torchtitan/models/qwen3/config_registry.py.
NGPU=8 MODULE=qwen3 CONFIG=qwen3_30b_a3b ./run_train.sh
