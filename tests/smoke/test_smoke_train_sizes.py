"""The training check's model on a GPU: its FP8 layers take the TE numerics check's shapes (so
Transformer Engine reuses the kernels it compiled for that check) and it still trains at its
learning rate. Real torch on the CPU, with the GPU's sizes (``like="cuda"``)."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("torch")

from preflight.smoke import te_check  # noqa: E402
from preflight.smoke import train as tr  # noqa: E402


def test_gpu_layers_take_the_numerics_checks_shapes() -> None:
    features, tokens = te_check.dims("cuda:0")
    n_in, hidden, _ = tr.sizes("cuda:0")
    assert n_in == hidden == features and tr.BATCH == tokens
    assert tr.sizes("cpu") == (tr.IN, tr.HIDDEN, tr.LR)


def _losses(model, lr: float) -> list[float]:  # noqa: ANN001
    x, y = tr.batch("cpu", like="cuda")
    res = tr.train(model, x, y, tr.nullctx, lr=lr)
    assert res["finite"]
    return res["losses"]


def test_the_gpu_sized_model_trains_at_its_learning_rate() -> None:
    reference = tr.build_reference("cpu", like="cuda")
    assert reference.fc1.in_features == tr.GPU_IN and reference.fc1.out_features == tr.GPU_HIDDEN
    losses = _losses(copy.deepcopy(reference), tr.sizes("cuda")[2])
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_the_gpu_sized_model_trains_in_emulated_fp8() -> None:
    pytest.importorskip("torchao")
    from preflight.smoke import torchao_check

    config, _ = torchao_check.make_config(emulate=True)
    model, converted, _ = torchao_check.convert(
        copy.deepcopy(tr.build_reference("cpu", like="cuda")), config)
    assert converted == ["fc1", "fc2"]
    x, y = tr.batch("cpu", like="cuda")
    res = tr.train(model, x, y, tr.nullctx, lr=tr.sizes("cuda")[2])
    assert res["finite"] and res["loss_decreased"], res["losses"]
