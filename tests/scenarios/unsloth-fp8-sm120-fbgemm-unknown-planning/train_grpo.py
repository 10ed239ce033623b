# Reduced from the code quoted in unslothai/unsloth issue 3902 (2026-01-18): unsloth GRPO with
# load_in_fp8 on an RTX PRO 6000 / RTX 5090 (sm_120); from_pretrained stopped with
# "RuntimeError: cutlass cannot initialize" from torch.ops.fbgemm.f8f8bf16_rowwise.
import os

os.environ["UNSLOTH_VLLM_STANDBY"] = "1"

from unsloth import FastLanguageModel  # noqa: I001 - unsloth patches trl: imported first, as in the issue
from trl import GRPOConfig, GRPOTrainer


def main():
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name="/models/Qwen3-8B",
        max_seq_length=2048,
        load_in_4bit=False,
        fast_inference=True,
        load_in_fp8=True,
        local_files_only=True,
    )
    model = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=64)
    args = GRPOConfig(learning_rate=5e-6, per_device_train_batch_size=1, num_generations=4,
                      max_prompt_length=512, max_completion_length=1536, output_dir="outputs")
    GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[], args=args).train()


if __name__ == "__main__":
    main()
