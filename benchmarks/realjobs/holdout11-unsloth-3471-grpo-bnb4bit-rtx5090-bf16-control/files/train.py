# fp8-doctor holdout11 (eval12), RECONSTRUCTION of the script in unslothai/unsloth issue 3471
# (2025-10-17, GRPOTrainer with vLLM fast inference on one RTX 5090; unsloth 2025.10.4, trl 0.22.2,
# transformers 4.55.4, torch 2.8.0+cu128, vllm 0.10.2). The imports and the constants block are the
# issue's, verbatim; the stored copy of the issue is cut after LOGGING_, so the from_pretrained /
# get_peft_model / GRPOConfig calls below are written from those constants the way the linked
# Qwen3-VL GRPO notebook uses them. No FP8 anywhere: a 4-bit bitsandbytes base, LoRA, bf16 compute.
import os
import pandas as pd
import torch
from datasets import Dataset
from unsloth import FastLanguageModel, is_bfloat16_supported
from trl import GRPOConfig, GRPOTrainer


MODEL_NAME = "unsloth/DeepSeek-R1-Distill-Llama-8B-unsloth-bnb-4bit"
TRAINING_FILE = "some/training_data.parquet"
OUTPUT_DIR = "output"
MAX_SEQ_LENGTH = 10240
R = 16
LORA_ALPHA = 32
LORA_DROPOUT = 0.1
FAST_INFERENCE = True
GPU_MEMORY_UTILIZATION = 0.6
RESUME_TRAINING = True
TEMPERATURE = 1.0
MASK_TRUNCATED_COMPLETIONS = True
EPSILON_HIGH = 0.28
LEARNING_RATE = 5e-6
ADAM_BETA1 = 0.9
ADAM_BETA2 = 0.99
WEIGHT_DECAY = 0.01
WARMUP_RATIO = 0.05
NUM_TRAIN_EPOCHS = 1
LR_SCHEDULER_TYPE = "cosine"
OPTIM = "paged_adamw_8bit"
LOGGING_STEPS = 1


def reward_len(completions, **kwargs):
    return [-abs(200 - len(c[0]["content"])) / 200.0 for c in completions]


model, tokenizer = FastLanguageModel.from_pretrained(
    model_name=MODEL_NAME,
    max_seq_length=MAX_SEQ_LENGTH,
    load_in_4bit=True,
    fast_inference=FAST_INFERENCE,
    max_lora_rank=R,
    gpu_memory_utilization=GPU_MEMORY_UTILIZATION,
)
model = FastLanguageModel.get_peft_model(
    model,
    r=R,
    lora_alpha=LORA_ALPHA,
    lora_dropout=LORA_DROPOUT,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    use_gradient_checkpointing="unsloth",
)

train_dataset = Dataset.from_pandas(pd.read_parquet(TRAINING_FILE))

training_args = GRPOConfig(
    output_dir=OUTPUT_DIR,
    learning_rate=LEARNING_RATE,
    adam_beta1=ADAM_BETA1,
    adam_beta2=ADAM_BETA2,
    weight_decay=WEIGHT_DECAY,
    warmup_ratio=WARMUP_RATIO,
    lr_scheduler_type=LR_SCHEDULER_TYPE,
    optim=OPTIM,
    logging_steps=LOGGING_STEPS,
    num_train_epochs=NUM_TRAIN_EPOCHS,
    temperature=TEMPERATURE,
    epsilon_high=EPSILON_HIGH,
    mask_truncated_completions=MASK_TRUNCATED_COMPLETIONS,
    bf16=is_bfloat16_supported(),
    fp16=not is_bfloat16_supported(),
)
trainer = GRPOTrainer(
    model=model,
    processing_class=tokenizer,
    reward_funcs=[reward_len],
    args=training_args,
    train_dataset=train_dataset,
)
trainer.train(resume_from_checkpoint=RESUME_TRAINING)
