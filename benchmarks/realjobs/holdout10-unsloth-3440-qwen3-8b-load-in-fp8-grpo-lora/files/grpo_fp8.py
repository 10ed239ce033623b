# RECONSTRUCTION from unslothai/unsloth PR 3440 (2025-10-12, 'Enable FP8 + RL training for bf16
# models'): the from_pretrained call is the PR's example usage (load_in_fp8=True: frozen base
# weights in FP8 via torchao Float8Tensor / fbgemm rowwise GEMMs, LoRA adapters in BF16, vLLM
# generation from the FP8 weights); the LoRA and GRPO settings are filled in.
from unsloth import FastLanguageModel
from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "unsloth/Qwen3-8B-Base",
    max_seq_length = 2048,
    load_in_4bit = False,
    fast_inference = True,
    max_lora_rank = 32,
    load_in_fp8 = True,  # set this to True
)

model = FastLanguageModel.get_peft_model(
    model,
    r = 32,
    target_modules = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    lora_alpha = 64,
    use_gradient_checkpointing = "unsloth",
    random_state = 3407,
)

dataset = load_dataset("openai/gsm8k", "main", split = "train")

def correctness_reward(prompts, completions, answer, **kwargs):
    return [1.0 if a in c[0]["content"] else 0.0 for c, a in zip(completions, answer)]

training_args = GRPOConfig(
    learning_rate = 5e-6,
    per_device_train_batch_size = 4,
    gradient_accumulation_steps = 1,
    num_generations = 4,
    max_prompt_length = 512,
    max_completion_length = 1024,
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
