"""A class's ``__init__`` runs where the class is made: the calls inside the ``__init__`` of a class
the job never builds pass nothing (reading/pycallers.py ``reached``).

The shape of NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624,
bionemo-recipes/recipes/esm2_native_te/modeling_esm_te.py, reduced: ``NVEsmForMaskedLM.__init__``
(l.518-539) and ``NVEsmForTokenClassification.__init__`` (l.782-803) both build
``NVEsmModel(config, fp8_recipe=fp8_recipe, ...)``, whose encoder keeps the recipe for
``transformer_engine.pytorch.autocast(recipe=self._fp8_recipe)`` (l.312); train_fsdp2.py builds
only the masked-LM model (l.114). The token-classification head made the recipe unknown.
"""

from __future__ import annotations

from pathlib import Path

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths

_MODEL = '''\
import transformer_engine.pytorch


class Encoder:
    def __init__(self, fp8_recipe=None):
        self._fp8_recipe = fp8_recipe

    def forward(self, x):
        with transformer_engine.pytorch.autocast(enabled=True, recipe=self._fp8_recipe):
            return x


class Base:
    def __init__(self, config):
        self.config = config


class ForMaskedLM(Base):
    def __init__(self, config, fp8_recipe=None):
        super().__init__(config)
        self.model = Encoder(fp8_recipe=fp8_recipe)


class ForTokenClassification(Base):
    def __init__(self, config, fp8_recipe=None):
        super().__init__(config)
        self.model = Encoder(fp8_recipe=fp8_recipe)
'''
_TRAIN = '''\
from transformer_engine.common.recipe import MXFP8BlockScaling

from model import {cls}

model = {cls}(None, fp8_recipe=MXFP8BlockScaling())
'''


def _intent(tmp_path: Path, cls: str) -> dict[str, object]:
    (tmp_path / "model.py").write_text(_MODEL)
    (tmp_path / "train.py").write_text(_TRAIN.format(cls=cls))
    (tmp_path / "run.sh").write_text("python train.py\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}


def test_the_recipe_reaches_the_model_the_job_builds(tmp_path: Path) -> None:
    intent = _intent(tmp_path, "ForMaskedLM")
    assert intent["fp8"] is True and intent["recipe"] == "mxfp8"


def test_either_head_alone(tmp_path: Path) -> None:
    assert _intent(tmp_path, "ForTokenClassification")["recipe"] == "mxfp8"
