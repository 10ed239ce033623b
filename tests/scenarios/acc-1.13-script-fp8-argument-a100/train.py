"""FP8 asked in the script itself: Accelerator(mixed_precision="fp8") on an A100."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp8")
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096))
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
for step in range(10):
    x = torch.randn(16, 4096, device=accelerator.device)
    loss = model(x).float().pow(2).mean()
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
