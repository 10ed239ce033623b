# fp8-doctor holdout11 (eval12), RECONSTRUCTION of unslothai/unsloth issue 3902 (2026-01-18, "FP8
# RTX5090 / RTX5080 / RTX PRO 6000 report: cutlass cannot initialize"). The lines the issue quotes are
# kept verbatim (the UNSLOTH_VLLM_STANDBY switch and the from_pretrained call with load_in_fp8 = True,
# fast_inference = True); what the issue elides with "..." (model path, LoRA and GRPOConfig values,
# the reward function, the dataset) is filled in with the shape of unsloth's Qwen3 FP8 GRPO notebook.
# The traceback ends in torch.ops.fbgemm.f8f8bf16_rowwise -> "RuntimeError: cutlass cannot initialize"
# inside FastLanguageModel.from_pretrained (train_grpo_with_probe.py line 309 in the user's file).
import os

os.environ['UNSLOTH_VLLM_STANDBY'] = "1"

from unsloth import FastLanguageModel
from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

MODEL_NAME = "/hy-tmp/models/Qwen3-8B"
MAX_SEQ_LENGTH = 2048
LORA_RANK = 32


def correctness_reward(prompts, completions, answer, **kwargs):
    return [1.0 if a in c[0]["content"] else 0.0 for c, a in zip(completions, answer)]


def main():
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name = MODEL_NAME,
        max_seq_length = MAX_SEQ_LENGTH,
        load_in_4bit = False,
        fast_inference = True,
        load_in_fp8 = True,
        local_files_only=True,
    )
    model = FastLanguageModel.get_peft_model(
        model,
        r = LORA_RANK,
        target_modules = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        lora_alpha = LORA_RANK * 2,
        use_gradient_checkpointing = "unsloth",
        random_state = 3407,
    )
    dataset = load_dataset("openai/gsm8k", "main", split = "train")
    training_args = GRPOConfig(
        learning_rate = 5e-6,
        per_device_train_batch_size = 1,
        gradient_accumulation_steps = 4,
        num_generations = 4,
        max_prompt_length = 512,
        max_completion_length = MAX_SEQ_LENGTH - 512,
        max_steps = 100,
        output_dir = "outputs",
    )
    trainer = GRPOTrainer(
        model = model,
        processing_class = tokenizer,
        reward_funcs = [correctness_reward],
        args = training_args,
        train_dataset = dataset,
    )
    trainer.train()


if __name__ == "__main__":
    main()
