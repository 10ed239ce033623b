# Launch line per pytorch/torchtitan run_train.sh usage (MODULE / CONFIG variables), commit 5c0b804cecd54313d7cfea41a386b3da1a1d19dc:
# the DeepSeek-V3 671B float8 entry of torchtitan/models/deepseek_v3/config_registry.py.
NGPU=8 MODULE=deepseek_v3 CONFIG=deepseek_v3_671b_float8 ./run_train.sh
