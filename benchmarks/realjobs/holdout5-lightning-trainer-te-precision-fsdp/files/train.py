"""Reconstruction: Lightning Trainer with the transformer-engine precision flag under FSDP.

precision="transformer-engine" is the documented flag (Lightning-AI/pytorch-lightning
73f1ab85585743899e2e19e75e728eb380b0dfac docs/source-pytorch/common/precision_intermediate.rst:140-141);
strategy="fsdp" is what a user adds to shard a larger model (Lightning issue #18820 asks for it).
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(4096, 4096), torch.randn(4096, 4096))
    trainer = L.Trainer(accelerator="cuda", devices=8, strategy="fsdp", precision="transformer-engine", max_steps=100)
    trainer.fit(LitModel(), DataLoader(data, batch_size=32))
