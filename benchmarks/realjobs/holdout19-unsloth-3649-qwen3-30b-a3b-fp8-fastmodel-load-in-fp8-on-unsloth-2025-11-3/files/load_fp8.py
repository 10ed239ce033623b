# fp8-doctor holdout19 (eval20): code quoted in unslothai/unsloth issue 3649 (2025-11-27), copied as quoted; the
# reporter's lines 6-19 (a `fourbit_models = [...]` list of model names, shown elided in the traceback) are left out.
from unsloth import FastLanguageModel, FastModel
import torch

max_seq_length = 1024*32

model, tokenizer = FastModel.from_pretrained(
    model_name = "unsloth/Qwen3-30B-A3B-Instruct-2507-FP8",
    max_seq_length = max_seq_length, # Choose any for long context!
    load_in_4bit = False,  # 4 bit quantization to reduce memory
    load_in_fp8 = True
)
