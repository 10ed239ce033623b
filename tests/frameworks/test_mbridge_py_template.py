"""A Megatron-Bridge ``ConfigContainer`` a job builds in its own function from a base template
of ``recipes/common.py`` (frameworks/megatron_bridge_py.py ``TEMPLATE``): the shape of
awslabs/awsome-distributed-ai 4ee69021 3.test_cases/megatron/megatron-bridge/dsv3/conf/
dsv3_sft.py (l.42, 51-54, 116, 130-132, 220, 247-255; held-out set 22), reduced. The module is
mounted by a PyTorchJob and handed to ``finetune()`` elsewhere; its ``__main__`` calls it too.
``_sft_common`` sets ``bf16_mixed`` at every release that has it (v0.3.1-v0.6.0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.intent import derive
from preflight.jobs.read import read_paths

_CONF = """\
import os
import torch
from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import {template}
from megatron.bridge.training.config import ConfigContainer
try:
    from megatron.bridge.training.flex_dispatcher_backend import apply_flex_dispatcher_backend
except (ImportError, AttributeError):
    apply_flex_dispatcher_backend = None


def sft_config() -> ConfigContainer:
    cfg = {template}()
    cfg.model = AutoBridge.from_hf_pretrained(
        "deepseek-ai/DeepSeek-V3-Base", trust_remote_code=True
    ).to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size = 8
    if apply_flex_dispatcher_backend is not None:
        apply_flex_dispatcher_backend(cfg.model, "deepep")
{edits}
    cfg.ddp.use_distributed_optimizer = True
    cfg.optimizer.use_precision_aware_optimizer = False
    cfg.optimizer.exp_avg_dtype = torch.float32
    return cfg


if __name__ == "__main__":
    from megatron.bridge.training.finetune import finetune
    from megatron.bridge.training.gpt_step import forward_step
    finetune(config=sft_config(), forward_step_func=forward_step)
"""


def _intent(tmp_path: Path, edits: str = "", template: str = "_sft_common",
            version: str | None = "0.4.2") -> dict[str, Any]:
    (tmp_path / "sft.py").write_text(_CONF.format(template=template, edits=edits or "    pass"))
    read = read_paths([str(tmp_path / "sft.py")], None)
    assert read.files[0][1] == "megatron_bridge"
    facts = dict(read.facts)
    if version is not None:
        facts["pkg.megatron-bridge.version"] = version
    values, _ = derive(Facts(facts, read.provenance))
    return {k[7:]: v for k, v in values.items()} | {
        k: v for k, v in read.facts.items() if k.startswith("config.")}


def test_the_bf16_control_is_read_no_fp8(tmp_path: Path) -> None:
    intent = _intent(tmp_path, '    cfg.mixed_precision = "bf16_mixed"')
    assert intent["config.megatron_bridge.recipe"] == "_sft_common"
    assert intent["fp8"] is False and intent["precision"] == "bf16"
    assert intent["config.megatron_bridge.model.tensor_model_parallel_size"] == 8
    # the provider call's own keyword is no model field
    assert "config.megatron_bridge.model.load_weights" not in intent


@pytest.mark.parametrize("version", ["0.4.2", "0.3.1", "0.6.0", None])
def test_the_template_alone_is_bf16_at_every_release_that_has_it(tmp_path: Path,
                                                                 version: str | None) -> None:
    intent = _intent(tmp_path, version=version)
    assert intent["fp8"] is False and intent["precision"] == "bf16"


@pytest.mark.parametrize(("edit", "recipe"), [
    ('    cfg.mixed_precision = "bf16_with_fp8_current_scaling_mixed"', "tensorwise"),
    ('    cfg.mixed_precision = "bf16_with_mxfp8_mixed"', "mxfp8"),
    ("    from megatron.bridge.training.mixed_precision import get_mixed_precision_config\n"
     '    cfg.mixed_precision = get_mixed_precision_config("bf16_with_fp8_subchannel_scaling_mixed")',
     "blockwise"),
])
def test_an_fp8_preset_set_on_the_container_is_fp8_with_its_recipe(tmp_path: Path, edit: str,
                                                                   recipe: str) -> None:
    intent = _intent(tmp_path, edit)
    assert intent["fp8"] is True and intent["recipe"] == recipe


def test_model_fp8_on_the_built_provider_is_asked_and_replaced(tmp_path: Path) -> None:
    intent = _intent(tmp_path, '    cfg.model.fp8 = "hybrid"')
    assert intent["config.megatron_bridge.model.fp8"] == "hybrid"
    assert intent["fp8"] is False and intent["fp8_source"]    # asked, then overridden


def test_each_template_is_tabled_bf16_from_v0_3_1() -> None:
    for name in ("_pretrain_common", "_sft_common", "_peft_common"):
        hit = presets.for_recipe(name, "0.3.1")
        assert isinstance(hit, tuple) and hit[0]["fp8"] is None
    hit = presets.for_recipe("_sft_common_vlm", "0.5.1")
    assert isinstance(hit, tuple) and hit[0]["fp8"] is None


def test_a_private_helper_of_another_module_is_no_template(tmp_path: Path) -> None:
    """``_nemotronh_common`` is a model module's helper, not recipes/common.py's template."""
    (tmp_path / "sft.py").write_text(_CONF.format(template="_sft_common", edits="    pass")
                                     .replace("from megatron.bridge.recipes.common import "
                                              "_sft_common", "from mylib import _sft_common"))
    read = read_paths([str(tmp_path / "sft.py")], None)
    assert "config.megatron_bridge.recipe" not in read.facts


def test_a_local_rebinding_of_the_guarded_import_is_followed_as_a_change(tmp_path: Path) -> None:
    """The guarded import is the library's only when nothing else binds the name: a job's own
    function of that name may set anything on the config."""
    edits = ('    cfg.mixed_precision = "bf16_mixed"\n'
             "    apply_flex_dispatcher_backend(cfg, 'deepep')")
    text = _CONF.format(template="_sft_common", edits=edits).replace(
        "apply_flex_dispatcher_backend = None",
        "def apply_flex_dispatcher_backend(c, b):\n        c.mixed_precision = 'bf16_with_mxfp8_mixed'")
    (tmp_path / "sft.py").write_text(text)
    read = read_paths([str(tmp_path / "sft.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not False
    assert isinstance(values["intent.fp8"], Unknown) or values["intent.fp8"] is True


def test_none_before_the_library_import_is_still_the_library(tmp_path: Path) -> None:
    text = _CONF.format(template="_sft_common", edits='    cfg.mixed_precision = "bf16_mixed"')
    text = text.replace("import os\n", "import os\napply_flex_dispatcher_backend = None\n", 1)
    (tmp_path / "sft.py").write_text(text)
    read = read_paths([str(tmp_path / "sft.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False


def test_many_calls_given_the_config_are_read(tmp_path: Path) -> None:
    edits = "\n".join(["    apply_flex_dispatcher_backend(cfg.model, 'deepep')"] * 1000)
    (tmp_path / "sft.py").write_text(_CONF.format(
        template="_sft_common", edits=edits + '\n    cfg.mixed_precision = "bf16_mixed"'))
    read = read_paths([str(tmp_path / "sft.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False or isinstance(values["intent.fp8"], Unknown)
    assert read.files and read.files[0][1] == "megatron_bridge"
