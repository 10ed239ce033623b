"""A plain HF Trainer script (newcomer review, issue 22): bf16=True wins over the launcher's fp8."""
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def main() -> None:
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")
    args = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=4,
        bf16=True,
        gradient_checkpointing=True,
    )
    Trainer(model=model, args=args).train()


if __name__ == "__main__":
    main()
