"""torchao ``Float8LinearConfig(emulate=True)`` in a training loop (holdout18: a fused-MoE LoRA
ablation): ``config.pytorch.torchao.emulate`` from the config passed to
``convert_to_float8_training`` (inline or through a variable), and FP8D-TAO-0016 on it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import preflight
from preflight.jobs.read import read_paths

SCRIPT = """
    import os
    import torch.nn as nn
    from torchao.float8 import convert_to_float8_training
    from torchao.float8.config import Float8LinearConfig
    model = nn.Sequential(nn.Linear(1024, 4096), nn.Linear(4096, 1024))
    {config}
    convert_to_float8_training(model, config=cfg)
"""
H100 = {"gpu": "H100", "pkg.torch": "2.9.1", "pkg.torchao": "0.16.0", "cuda.torch_build": "12.8"}


def _job(folder: Path, config: str) -> Path:
    (folder / "train.py").write_text(textwrap.dedent(SCRIPT.format(config=config)))
    return folder / "train.py"


@pytest.mark.parametrize("config, value", [
    ("cfg = Float8LinearConfig(enable_fsdp_float8_all_gather=True, emulate=True)", True),
    ("cfg = Float8LinearConfig(emulate=False)", False),
    ("cfg = Float8LinearConfig()", None),
])
def test_emulate_is_read(tmp_path: Path, config: str, value: bool | None) -> None:
    facts = read_paths([str(_job(tmp_path, config))]).facts
    assert facts.get("config.pytorch.torchao.emulate") is value
    assert facts["config.pytorch.torchao.convert"] is True


def test_emulate_from_the_environment_is_not_read_as_false(tmp_path: Path) -> None:
    facts = read_paths([str(_job(tmp_path, 'cfg = Float8LinearConfig(emulate=os.environ["E"] '
                                 '== "1")'))]).facts
    assert facts.get("config.pytorch.torchao.emulate") is not False


def test_rule_fires_on_emulated_float8(tmp_path: Path) -> None:
    on = _job(tmp_path, "cfg = Float8LinearConfig(emulate=True)")
    hit = [f for f in preflight.check([str(on)], smoke=False, assume=H100).findings
           if f.rule_id == "FP8D-TAO-0016"]
    assert hit and hit[0].location is not None and hit[0].location.line == 7
    off = _job(tmp_path, "cfg = Float8LinearConfig(enable_fsdp_float8_all_gather=True)")
    assert "FP8D-TAO-0016" not in {
        f.rule_id for f in preflight.check([str(off)], smoke=False, assume=H100).findings}


