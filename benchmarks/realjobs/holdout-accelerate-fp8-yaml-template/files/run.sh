# Launch line from huggingface/accelerate examples/config_yaml_templates (README usage:
# `accelerate launch --config_file <template>.yaml run_me.py`), commit 847ae58c74a0984329a17330c56ba494c1082d53.
accelerate launch --config_file fp8.yaml run_me.py
