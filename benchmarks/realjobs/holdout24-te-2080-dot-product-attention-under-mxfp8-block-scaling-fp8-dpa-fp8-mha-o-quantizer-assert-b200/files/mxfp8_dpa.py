# Reproduction from NVIDIA/TransformerEngine issue 2080 ("[PyTorch] DotProductAttention with MXFP8BlockScaling raises:
# 'Assertion failed: O_quantizer_fp8 != nullptr'"), as posted by the reporter on 2025-08-16.

import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import Format, MXFP8BlockScaling

mxfp8_format = Format.E4M3
mxfp8_recipe = MXFP8BlockScaling(fp8_format=mxfp8_format, fp8_dpa=True, fp8_mha=True)

self_attention = te.DotProductAttention(
    num_attention_heads=10,
    kv_channels=128,
    attention_dropout=0.0,
    qkv_format="bshd",
    attn_mask_type="no_mask",
    window_size=None,
    sequence_parallel=False,
    tp_size=1,
    get_rng_state_tracker=None,
    tp_group=None,
)

q = torch.rand((1, 4096, 10, 128), dtype=torch.bfloat16).cuda()
k = torch.rand((1, 4096, 10, 128), dtype=torch.bfloat16).cuda()
v = torch.rand((1, 4096, 10, 128), dtype=torch.bfloat16).cuda()

with te.fp8_autocast(enabled=True, fp8_recipe=mxfp8_recipe):
    out = self_attention(q, k, v)

print(out)
