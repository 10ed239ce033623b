# fp8-doctor holdout20 (eval21): verdimrc/playground-nemo-2.0-gh @ 6129a1ad5d345ee9628fa6fba4bbdc48a7d3bce3,
# 05-byoc-te-mb/with-ngc-pytorch-25.06-cleanup.md section 2.4: the file the author writes with
# `cat << 'EOF' > /workspace/train.py`, copied verbatim below this header.
# https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/892
from megatron.bridge.recipes.llama import llama32_1b_pretrain_config
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.pretrain import pretrain

if __name__ == "__main__":
    # The recipe uses the Llama 3.2 1B model configuration from HuggingFace
    cfg = llama32_1b_pretrain_config(mock=True, seq_length=1024, tensor_parallelism=8)  # HAHA

    # Override training parameters
    cfg.train.train_iters = 10
    cfg.scheduler.lr_decay_iters = 10000
    cfg.model.vocab_size = 8192
    cfg.tokenizer.vocab_size = cfg.model.vocab_size

    pretrain(cfg, forward_step)
