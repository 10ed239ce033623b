# fp8-doctor holdout25 (eval26): hpcaitech/ColossalAI issue 6387 ("LowLevelZeroPlugin with use_fp8=true causes
# shape mismatch error: shape [32, 512] is invalid for input of size 512"). Imports, the dataset class and the plugin
# call are as quoted in the issue; the model, optimizer and loop are reconstructed from the error's shapes
# (batch 32, a 1024 -> 512 Linear) and the imports the issue lists.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import Dataset, DataLoader
import colossalai
from colossalai.booster import Booster
from colossalai.nn.optimizer import CPUAdam, Lamb
from colossalai.booster.plugin import GeminiPlugin, LowLevelZeroPlugin


class RandomDataset(Dataset):
    def __init__(self, num_samples=32 * 100, input_dim=1024, num_classes=10):
        self.x = torch.randn(num_samples, input_dim)
        self.y = torch.randint(0, num_classes, (num_samples,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class MLP(nn.Module):
    def __init__(self, input_dim=1024, hidden=512, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def main():
    colossalai.launch_from_torch()
    plugin = LowLevelZeroPlugin(use_fp8=True)
    booster = Booster(plugin=plugin)

    model = MLP()
    optimizer = Lamb(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    dataloader = plugin.prepare_dataloader(RandomDataset(), batch_size=32, shuffle=True)

    model, optimizer, criterion, dataloader, _ = booster.boost(model, optimizer, criterion, dataloader)

    model.train()
    for epoch in range(2):
        for x, y in dataloader:
            x, y = x.cuda(), y.cuda()
            out = model(x)
            loss = criterion(out, y)
            booster.backward(loss, optimizer)
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
