# RECONSTRUCTION around the code quoted in huggingface/transformers issue 37927 (2025-05-02): "I was trying to fine tune
# unsloth/Qwen3-4B-FP8 with unsloth". The SFTTrainer block below is the issue's code verbatim; the model/tokenizer load,
# LoRA wrap, dataset and max_seq_length lines are reconstructed from unsloth's Qwen3 notebook pattern of that month
# (FastLanguageModel.from_pretrained / get_peft_model), which the code presupposes but does not show.
from unsloth import FastLanguageModel
from datasets import load_dataset

max_seq_length = 2048
model, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "unsloth/Qwen3-4B-FP8",
    max_seq_length = max_seq_length,
    load_in_4bit = False,
    load_in_8bit = False,
    full_finetuning = False,
)
model = FastLanguageModel.get_peft_model(
    model,
    r = 16,
    target_modules = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    lora_alpha = 16,
    lora_dropout = 0,
    bias = "none",
    use_gradient_checkpointing = "unsloth",
    random_state = 3407,
)
dataset = load_dataset("json", data_files = "train.jsonl", split = "train")
dataset_val = load_dataset("json", data_files = "val.jsonl", split = "train")

# --- verbatim from the issue ---
from trl import SFTTrainer
from transformers import TrainingArguments
from unsloth import is_bfloat16_supported

trainer = SFTTrainer(
    model = model,
    tokenizer = tokenizer,
    train_dataset = dataset,
    eval_dataset = dataset_val,
    dataset_text_field = "text",
    max_seq_length = max_seq_length,
    
    dataset_num_proc = 2,
    args = TrainingArguments(
        per_device_train_batch_size = 2,
        gradient_accumulation_steps = 4,
        eval_on_start=True,
        eval_steps=1,
        num_train_epochs = 4, 
        warmup_ratio=0.1,
        #max_steps = 60,
        learning_rate = 2e-4,
        fp16 = not is_bfloat16_supported(),
        bf16 = is_bfloat16_supported(),
        logging_steps = 1,
        optim = "adamw_8bit",
        weight_decay = 0.01,
        lr_scheduler_type = "linear",
        seed = 3407,
        output_dir = "outputs",
        report_to = "none", # Use this for WandB etc
    ),
)
# --- end of the code ---
trainer.train()
