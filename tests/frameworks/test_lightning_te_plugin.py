"""Lightning's TransformerEnginePrecision plugin as scripts write it (Fabric(plugins=...) and
Trainer(plugins=[...]), Lightning 2.1's TransformerEnginePrecisionPlugin(dtype=...) too), a
plugin chosen in a branch (decided when the flag is known, Unknown otherwise: holdout21
cerestrain), and a precision plugin the reader does not know (Unknown, never "no")."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths


def _values(tmp_path: Path, text: str) -> tuple[dict[str, Any], dict[str, str]]:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text))
    read = read_paths([str(path)])
    return intent.derive(Facts(read.facts, read.provenance))


BRANCH = """
    import os
    import torch
    from lightning.fabric import Fabric
    from lightning.fabric.plugins import TransformerEnginePrecision
    USE_FP8 = {flag}
    if USE_FP8:
        recipe = {{"fp8_format": "E4M3", "amax_history_len": 16}}
        precision = TransformerEnginePrecision(weights_dtype=torch.bfloat16, recipe=recipe)
        fabric = Fabric(plugins=precision, devices=4)
    else:
        fabric = Fabric(precision="bf16-mixed", devices=4)
    fabric.launch()
"""


def test_plugin_in_a_branch_taken_is_fp8(tmp_path: Path) -> None:
    values, prov = _values(tmp_path, BRANCH.format(flag="True"))
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.format"] == "e4m3" and values["intent.precision"] == "bf16"
    assert prov["intent.fp8"].endswith("train.py:10")


def test_plugin_in_a_branch_not_taken_is_no_fp8(tmp_path: Path) -> None:
    values, _ = _values(tmp_path, BRANCH.format(flag="False"))
    assert values["intent.fp8"] is False


def test_flag_from_the_environment_is_unknown_not_yes(tmp_path: Path) -> None:
    values, _ = _values(tmp_path, BRANCH.format(flag='os.environ.get("USE_FP8") == "1"'))
    assert isinstance(values["intent.fp8"], Unknown)


def test_lightning_21_plugin_name_and_dtype(tmp_path: Path) -> None:
    values, _ = _values(tmp_path, """
        import torch
        from lightning.pytorch import Trainer
        from lightning.pytorch.plugins.precision import TransformerEnginePrecisionPlugin
        Trainer(devices=8, plugins=[TransformerEnginePrecisionPlugin(dtype=torch.float16)])
    """)
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.precision"] == "fp16"


@pytest.mark.parametrize("plugin, fp8", [("MyFP8Precision", None), ("MixedPrecision", False)])
def test_other_precision_plugins(tmp_path: Path, plugin: str, fp8: bool | None) -> None:
    values, _ = _values(tmp_path, f"""
        from lightning.fabric import Fabric
        from lightning.fabric.plugins import MixedPrecision
        class MyFP8Precision(MixedPrecision):
            pass
        Fabric(devices=2, precision="bf16-mixed", plugins=[{plugin}("bf16-mixed", "cuda")])
    """)
    if fp8 is None:
        assert isinstance(values["intent.fp8"], Unknown)
    else:
        assert values["intent.fp8"] is fp8
