"""A Megatron-Bridge recipe's config changed in ways the script reader does not follow
(redteam4, issue 21; frameworks/megatron_bridge_py.py). Each left the recipe's preset (BF16 for
``llama3_8b_pretrain_config`` at v0.6.0) standing, so a script that turns FP8 on read as FP8
"no": the config bound to another name, given to a function of the script, ``setattr``,
``dataclasses.replace``, ``__dict__.update``, ``exec``, and a precision argument of the recipe
call (older recipes took ``precision_config=``; v0.6.0's ``llama3_8b_pretrain_config()`` takes
none: src/megatron/bridge/recipes/llama/llama3.py l.225 at NVIDIA-NeMo/Megatron-Bridge v0.6.0).
The example scripts' own calls (``create_omegaconf_dict_config``, ``apply_overrides``,
``pretrain``, logging) still leave it decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

HEAD = """import dataclasses
import logging
from megatron.bridge.recipes.llama import llama3_8b_pretrain_config as pretrain_config
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.pretrain import pretrain
from megatron.bridge.training.utils.omegaconf_utils import (apply_overrides,
                                                            create_omegaconf_dict_config)
logger = logging.getLogger(__name__)
"""
FP8 = "'bf16_with_mxfp8_mixed'"


def _fp8(folder: Path, body: str) -> object:
    (folder / "pretrain.py").write_text(HEAD + body + "pretrain(cfg, forward_step)\n")
    read = read_paths([str(folder / "pretrain.py")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("body", [
    f"cfg = pretrain_config()\nc2 = cfg\nc2.mixed_precision = {FP8}\n",
    "cfg = pretrain_config()\nm = cfg.model\nm.fp8 = 'hybrid'\n",
    f"def enable_fp8(c):\n    c.mixed_precision = {FP8}\ncfg = pretrain_config()\n"
    "enable_fp8(cfg)\n",
    f"cfg = pretrain_config()\nsetattr(cfg, 'mixed_precision', {FP8})\n",
    f"cfg = pretrain_config()\nfor k, v in {{'mixed_precision': {FP8}}}.items():\n"
    "    setattr(cfg, k, v)\n",
    f"cfg = pretrain_config()\ncfg = dataclasses.replace(cfg, mixed_precision={FP8})\n",
    "cfg = pretrain_config()\ncfg.model.__dict__.update(fp8='hybrid')\n",
    f"cfg = pretrain_config()\nexec(\"cfg.mixed_precision = {FP8}\")\n",
    f"cfg = pretrain_config(precision_config={FP8})\n",
])
def test_a_change_the_reader_does_not_follow_is_no_bf16_verdict(tmp_path: Path,
                                                                 body: str) -> None:
    assert isinstance(_fp8(tmp_path, body), Unknown)


def test_the_example_scripts_own_calls_still_decide(tmp_path: Path) -> None:
    common = ("cfg.print_yaml()\nlogger.info(cfg)\nmerged, excluded = "
              "create_omegaconf_dict_config(cfg)\napply_overrides(cfg, {}, excluded)\n"
              "iters = cfg.train.train_iters\n")
    assert _fp8(tmp_path, "cfg = pretrain_config()\n" + common) is False
    assert _fp8(tmp_path, f"cfg = pretrain_config()\ncfg.mixed_precision = {FP8}\n" +
                common) is True
