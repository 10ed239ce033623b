"""Reconstruction: Lightning Trainer with an explicit TransformerEnginePrecision plugin and recipe.

The plugin lines are verbatim from Lightning-AI/pytorch-lightning 73f1ab85585743899e2e19e75e728eb380b0dfac
docs/source-pytorch/common/precision_intermediate.rst:146-151 (the docs import it from
lightning.trainer.plugins; the class lives in lightning.pytorch.plugins, used here).
"""
import lightning as L
import torch
from lightning.pytorch.plugins import TransformerEnginePrecision
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    recipe = {"fp8_format": "HYBRID", "amax_history_len": 16, "amax_compute_algo": "max"}
    precision = TransformerEnginePrecision(weights_dtype=torch.bfloat16, recipe=recipe)
    trainer = L.Trainer(accelerator="cuda", devices=1, plugins=precision, max_steps=100)
    data = TensorDataset(torch.randn(2048, 1024), torch.randn(2048, 1024))
    trainer.fit(LitModel(), DataLoader(data, batch_size=64))
