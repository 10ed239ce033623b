# fp8-doctor holdout15 (eval16): RECONSTRUCTION of the script in hpcaitech/ColossalAI issue 6390
# (https://github.com/hpcaitech/ColossalAI/issues/6390, "`use_fp8=True` in HybridParallelPlugin causes runtime error
# `Expected both dimensions of mat2 to be divisible by 16 but got torch.Size([768, 2])`"). VERBATIM from the issue:
# the imports, the constants and the start of tokenize_batch (down to `encoded = tokenizer(texts, return_tensors="pt",`,
# where the stored copy of the issue is cut). RECONSTRUCTED: the rest, after ColossalAI's own GPT-2 GLUE example
# examples/language/gpt/hybridparallelism/finetune.py @ 4f9953be335ef371b3848719ddafe596c01ecd37 (same imports, same
# constants, GPT2ForSequenceClassification from AutoConfig with num_labels, HybridAdam, booster.boost), with the
# plugin the title names: HybridParallelPlugin(..., use_fp8=True). MRPC (sentence1/sentence2/label, as the issue's
# tokenize_batch reads) has 2 labels, so the score head is nn.Linear(768, 2): the [768, 2] of the error.
from functools import partial
import json
import os
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import colossalai
from colossalai.booster import Booster
from colossalai.nn.optimizer import HybridAdam
import datasets
from typing import Callable, Optional
import torch
import torch.nn as nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import _LRScheduler as LRScheduler
from tqdm import tqdm
from transformers import AutoConfig, GPT2ForSequenceClassification, get_linear_schedule_with_warmup
from transformers import AutoTokenizer

import colossalai
from colossalai.booster import Booster
from colossalai.booster.plugin import HybridParallelPlugin
from colossalai.cluster import DistCoordinator
from colossalai.nn.optimizer import HybridAdam


TEST_GEMINI = False
NUM_EPOCHS = 1
BATCH_SIZE = 32
LEARNING_RATE = 2.4e-5
WEIGHT_DECAY = 0.01
WARMUP_FRACTION = 0.1

def tokenize_batch(batch, tokenizer: Optional[AutoTokenizer] = None, max_length: int = 512):
    texts = [sample["sentence1"] + " " + sample["sentence2"] for sample in batch]
    labels = torch.tensor([sample["label"] for sample in batch], dtype=torch.long)
    encoded = tokenizer(
        texts,
        return_tensors="pt",
        # --- reconstructed from here on ---
        padding="max_length",
        truncation=True,
        max_length=max_length,
    )
    encoded["labels"] = labels
    return encoded


def main():
    colossalai.launch_from_torch(seed=42)
    coordinator = DistCoordinator()
    lr = LEARNING_RATE * coordinator.world_size

    plugin = HybridParallelPlugin(
        tp_size=1,
        pp_size=1,
        zero_stage=1,
        precision="bf16",
        use_fp8=True,
    )
    booster = Booster(plugin=plugin)

    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    tokenizer.pad_token = tokenizer.eos_token
    dataset = datasets.load_dataset("glue", "mrpc", split="train")
    train_dataloader = plugin.prepare_dataloader(
        dataset, batch_size=BATCH_SIZE, shuffle=True, drop_last=True,
        collate_fn=partial(tokenize_batch, tokenizer=tokenizer, max_length=512),
    )

    cfg = AutoConfig.from_pretrained("gpt2", num_labels=2, pad_token_id=tokenizer.pad_token_id)
    model = GPT2ForSequenceClassification.from_pretrained("gpt2", config=cfg).cuda()

    optimizer = HybridAdam(model.parameters(), lr=lr, eps=1e-8, weight_decay=WEIGHT_DECAY)
    total_steps = len(train_dataloader) * NUM_EPOCHS
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=int(WARMUP_FRACTION * total_steps), num_training_steps=total_steps
    )

    def _criterion(outputs, inputs):
        return outputs.loss

    model, optimizer, _criterion, train_dataloader, lr_scheduler = booster.boost(
        model, optimizer, criterion=_criterion, dataloader=train_dataloader, lr_scheduler=lr_scheduler
    )

    model.train()
    for epoch in range(NUM_EPOCHS):
        for batch in tqdm(train_dataloader, disable=not coordinator.is_master()):
            batch = {k: v.cuda() for k, v in batch.items()}
            outputs = model(**batch)
            loss = _criterion(outputs, None)
            booster.backward(loss, optimizer)
            optimizer.step()
            optimizer.zero_grad()
            lr_scheduler.step()


if __name__ == "__main__":
    main()
