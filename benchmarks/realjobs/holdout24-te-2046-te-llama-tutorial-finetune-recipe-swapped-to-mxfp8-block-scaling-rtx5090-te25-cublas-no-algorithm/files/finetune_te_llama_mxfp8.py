# RECONSTRUCTION (eval25) from NVIDIA/TransformerEngine issue 2046 ("Unable to find suitable cuBLAS GEMM algorithm, when
# using MXFP8BlockScaling in llama finetune demo code", 2025-08-08): the reporter followed
# docs/examples/te_llama/tutorial_accelerate_hf_llama_with_te.ipynb on an RTX 5090 (CUDA 12.8); training works with
# DelayedScaling and Float8CurrentScaling, and fails once the recipe is switched to MXFP8BlockScaling (forward runs, the
# cuBLAS error comes after). The tutorial's TE Llama model and data pipeline, with the FP8 recipe passed explicitly.
import torch
from torch.optim import AdamW
from transformers import AutoConfig, get_linear_schedule_with_warmup

import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling

from te_llama import TELlamaForCausalLM
from utils import hyperparams, get_dataloaders
from accelerate import Accelerator

hyperparams.model_name = "meta-llama/Llama-2-7b-hf"
hyperparams.mixed_precision = "bf16"
hyperparams.batch_size = 8
hyperparams.max_seq_length = 256

# Before: DelayedScaling() and Float8CurrentScaling() both trained fine on this GPU.
fp8_recipe = MXFP8BlockScaling()

config = AutoConfig.from_pretrained(hyperparams.model_name)
config._attn_implementation = "flash_attention_2"
model = TELlamaForCausalLM.from_pretrained_local(
    hyperparams.model_name, config=config, torch_dtype=torch.bfloat16
).cuda()
model.config.use_cache = False

accelerator = Accelerator(mixed_precision="bf16")
train_dataloader = get_dataloaders(accelerator, hyperparams)
optimizer = AdamW(params=model.parameters(), lr=hyperparams.learning_rate, fused=True)
lr_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=100,
                                               num_training_steps=hyperparams.num_training_steps)
model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
    model, optimizer, train_dataloader, lr_scheduler
)

model.train()
for step, batch in enumerate(train_dataloader):
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        outputs = model(**batch)
    loss = outputs.loss
    accelerator.backward(loss)
    optimizer.step()
    lr_scheduler.step()
    optimizer.zero_grad()
    if step + 1 >= hyperparams.num_training_steps:
        break
