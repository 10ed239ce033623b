# RECONSTRUCTION of huggingface/trl issue 3860 (2025-08-06, "bf16 Option in Training Config
# Prevents FP8 Training"): the issue quotes SFTConfig.__post_init__ (bf16 = not fp16 when bf16 is
# None) and its environment (TRL 0.19.0, transformers 4.53.0, accelerate 1.8.1, 8 x H100) but no
# script. This is the minimal SFTTrainer job it describes: an SFTConfig that leaves bf16 unset,
# launched with ACCELERATE_MIXED_PRECISION=fp8 (run.sh).
# https://github.com/huggingface/trl/issues/3860
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

dataset = load_dataset("trl-lib/Capybara", split="train")

args = SFTConfig(
    output_dir="Qwen2.5-7B-SFT-fp8",
    per_device_train_batch_size=2,
    gradient_accumulation_steps=8,
    learning_rate=2.0e-5,
    num_train_epochs=1,
    logging_steps=10,
)

trainer = SFTTrainer(model="Qwen/Qwen2.5-7B", args=args, train_dataset=dataset)
trainer.train()
