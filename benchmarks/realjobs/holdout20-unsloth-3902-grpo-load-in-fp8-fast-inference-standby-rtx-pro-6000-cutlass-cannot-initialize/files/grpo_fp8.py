# RECONSTRUCTION for fp8-doctor holdout20 (eval21) from unslothai/unsloth issue 3902 (2026-01-18):
# the reporter's GRPO script as quoted ("this is my code: ..."). The quote elides everything but the environment
# variable and the from_pretrained call; those lines are verbatim, the rest is the minimum around them (the names
# MODEL_NAME / MAX_SEQ_LENGTH are the reporter's; their values are not quoted) and is marked as such.
import os

os.environ['UNSLOTH_VLLM_STANDBY'] = "1"

from unsloth import FastLanguageModel  # reconstruction: the import the call needs
from trl import GRPOConfig, GRPOTrainer  # reconstruction: the issue names GRPOTrainer as the trainer

MODEL_NAME = os.environ.get("MODEL_NAME", "Qwen/Qwen3-8B")  # reconstruction: value not quoted
MAX_SEQ_LENGTH = 2048  # reconstruction: value not quoted


def main():
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name = MODEL_NAME,
        max_seq_length = MAX_SEQ_LENGTH,
        load_in_4bit = False,
        fast_inference = True,
        load_in_fp8 = True,
        local_files_only=True,
    )
    # reconstruction: the quote stops here ("..."); LoRA, dataset, reward functions and
    # GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(...), ...) follow in the reporter's script.


if __name__ == "__main__":
    main()
