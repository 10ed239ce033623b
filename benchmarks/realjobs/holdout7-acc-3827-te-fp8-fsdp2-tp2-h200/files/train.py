# Reduction of the code quoted in huggingface/accelerate issue 3827 (2025-11-01), Llama-style model,
# TE FP8 with FSDP2 and tensor parallelism (tp_size=2) through ParallelismConfig.
import torch
from accelerate import Accelerator
from accelerate.parallelism_config import ParallelismConfig
from accelerate.utils import FullyShardedDataParallelPlugin, TERecipeKwargs
from transformers import AutoModelForCausalLM

fsdp_plugin = FullyShardedDataParallelPlugin(
    fsdp_version=2,
    auto_wrap_policy="transformer_based_wrap",
    transformer_cls_names_to_wrap=["LlamaDecoderLayer"],
    reshard_after_forward=True,
    activation_checkpointing=False,
)
parallelism_config = ParallelismConfig(dp_shard_size=4, tp_size=2)

accelerator = Accelerator(
    mixed_precision="fp8",
    kwargs_handlers=[TERecipeKwargs()],
    parallelism_config=parallelism_config,
    fsdp_plugin=fsdp_plugin,
)

model = AutoModelForCausalLM.from_pretrained(
    "meta-llama/Llama-3.2-1B",
    torch_dtype=torch.bfloat16,
    tp_size=parallelism_config.tp_size,
    tp_plan="auto",
    device_mesh=accelerator.torch_device_mesh,
)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
model, optimizer = accelerator.prepare(model, optimizer)
