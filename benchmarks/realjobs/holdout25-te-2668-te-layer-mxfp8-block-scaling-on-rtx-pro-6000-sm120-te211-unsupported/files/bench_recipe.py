# fp8-doctor holdout25 (eval26): reconstructed from NVIDIA/TransformerEngine issue 2668 ("Support status and roadmap
# for MXFP8 on SM120"): the reporter trains TE layers on an SM120 GPU with the Float8BlockScaling recipe ("functions
# correctly on SM120") and asks about MXFP8BlockScaling. This file is the reporter's setup with the recipe named below.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import Format, MXFP8BlockScaling

torch.manual_seed(0)
hidden, ffn, heads, seq, batch = 2048, 8192, 16, 2048, 4

layer = te.TransformerLayer(
    hidden_size=hidden,
    ffn_hidden_size=ffn,
    num_attention_heads=heads,
    params_dtype=torch.bfloat16,
).cuda()
optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-4)
recipe = MXFP8BlockScaling(fp8_format=Format.E4M3)

for step in range(20):
    x = torch.randn(seq, batch, hidden, dtype=torch.bfloat16, device="cuda")
    with te.autocast(enabled=True, recipe=recipe):
        out = layer(x)
    loss = out.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
