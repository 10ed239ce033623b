# RECONSTRUCTION around public text of huggingface/accelerate@0413cf9f1551 (see job.yaml source.outcome).
"""Reconstruction: a plain transformers Trainer script, as the HF docs show it, launched under
accelerate's TE FP8 config. TrainingArguments(bf16=True) is what every transformers example passes
(and what users keep when they add an FP8 accelerate config)."""
from datasets import load_dataset
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer,
                          TrainingArguments)

model_name = "Qwen/Qwen2.5-1.5B"
tokenizer = AutoTokenizer.from_pretrained(model_name)
model = AutoModelForCausalLM.from_pretrained(model_name)

ds = load_dataset("wikitext", "wikitext-103-raw-v1", split="train[:1%]")
ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=1024), batched=True, remove_columns=["text"])

args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=8,
    gradient_accumulation_steps=2,
    learning_rate=2e-5,
    max_steps=500,
    bf16=True,
    logging_steps=10,
    report_to="none",
)
trainer = Trainer(model=model, args=args, train_dataset=ds,
                  data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
trainer.train()
