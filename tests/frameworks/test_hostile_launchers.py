"""Last session's launchers and names against hostile input (issue 21, redteam7): a miles /
slime Python launcher whose command line is built past the piece bound (5,000 ``+=``, 60
doublings), unsloth's ``load_in_fp8`` given a value its loader refuses, a Megatron training
script whose Megatron-LM import never runs (``if TYPE_CHECKING:``, ``if False:``) or is made by
code the text does not name (``exec``, ``runpy``), ``ignore_unknown_args`` not a literal, and
checkpoint names that say FP8 as torchao and others spell it (``-float8dq``, ``-FP8E4M3``) or
leave through ``..``. Each is read as the framework reads it, or Unknown, never a wrong verdict;
nothing is imported or run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks.ckptname import says_fp8
from preflight.intent import derive
from preflight.jobs.read import read_paths
from tests.cputime import cpu_seconds
from tests.frameworks.test_megatron_script import CORE_ONLY, LAUNCH
from tests.frameworks.test_miles_py import _FP8, _SLIME
from tests.frameworks.test_unsloth import SCRIPT

_I = "\n    "


def _intent(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(path)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values, read.facts


@pytest.mark.parametrize("built", [
    _I.join(['misc_args += "--attention-dropout 0.0 "'] * 5000) + _I + _FP8,
    _I.join(["misc_args = misc_args + misc_args"] * 60) + _I + _FP8,
])
def test_a_command_line_past_the_piece_bound_is_never_no(tmp_path: Path, built: str) -> None:
    (tmp_path / "t.py").write_text(_SLIME.replace("{fp8}", built))
    (tmp_path / "run.sh").write_text("python t.py\n")
    start = cpu_seconds()
    values, facts = _intent(tmp_path / "run.sh")
    assert cpu_seconds() - start < 30
    assert values["intent.fp8"] is not False        # the FP8 flags follow the cut
    assert isinstance(facts["config.slime.unread_args"], Unknown)


@pytest.mark.parametrize(("value", "fp8"), [
    ("True", True), ('"block"', True), ("False", False), ("0", False), ("0.0", False),
    ("None", None), ('"False"', None), ('""', None), ('"row"', None), ("1", None)])
def test_load_in_fp8_as_unsloths_loader_takes_it(tmp_path: Path, value: str,
                                                 fp8: bool | None) -> None:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(cls="FastLanguageModel", name="unsloth/Qwen3-8B-Base",
                                  extra=f"    load_in_fp8 = {value},"))
    got = _intent(path)[0]["intent.fp8"]
    if fp8 is None:     # the loader stops (assert / ValueError): no verdict
        assert isinstance(got, Unknown) and "unsloth" in got.reason
    else:
        assert got is fp8


def _megatron(tmp_path: Path, script: str) -> dict[str, Any]:
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + LAUNCH)
    return dict(read_paths([str(tmp_path / "run.sh")], None).facts)


@pytest.mark.parametrize("dead", [
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from megatron.training import get_args\n",
    "import typing\nif typing.TYPE_CHECKING:\n    import megatron.training\n",
    "if False:\n    from megatron.training import pretrain\n",
])
def test_an_import_that_never_runs_is_no_megatron_lm_parser(tmp_path: Path, dead: str) -> None:
    facts = _megatron(tmp_path, dead + CORE_ONLY)
    assert facts["config.megatron.parsed_args"] is False


@pytest.mark.parametrize("dynamic", [
    "exec('from megatron.training import pretrain')\n",
    "import runpy\nrunpy.run_path('/opt/Megatron-LM/pretrain_gpt.py')\n",
    "import importlib, sys\nm = importlib.import_module(sys.argv[1])\n",
])
def test_code_the_text_does_not_name_leaves_the_parser_unknown(tmp_path: Path,
                                                               dynamic: str) -> None:
    facts = _megatron(tmp_path, dynamic + CORE_ONLY)
    assert isinstance(facts["config.megatron.parsed_args"], Unknown)


@pytest.mark.parametrize("dynamic", [
    "import importlib\npretrain = importlib.import_module('megatron.training').pretrain\n",
    "import sys\nsys.path.insert(0, '/opt/Megatron-LM')\nimport pretrain_gpt\n",
])
def test_megatron_lm_loaded_by_name_is_its_parser(tmp_path: Path, dynamic: str) -> None:
    assert _megatron(tmp_path, dynamic + CORE_ONLY)["config.megatron.parsed_args"] is True


_LM = "from megatron.training import pretrain\n"


@pytest.mark.parametrize(("call", "drops"), [
    ("if False:\n    initialize_megatron(ignore_unknown_args=True)\n", False),
    ("IGNORE = True\ninitialize_megatron(ignore_unknown_args=IGNORE)\n", None),
    ("initialize_megatron(**{'ignore_unknown_args': True})\n", None),
    ("initialize_megatron(ignore_unknown_args=True)\n", True),
])
def test_ignore_unknown_args_as_the_text_gives_it(tmp_path: Path, call: str,
                                                  drops: bool | None) -> None:
    got = _megatron(tmp_path, _LM + call)["config.megatron.drops_unknown"]
    assert got is drops if drops is not None else isinstance(got, Unknown)


@pytest.mark.parametrize(("name", "fp8"), [
    ("/root/Qwen3-8B-float8dq", True), ("Qwen3-8B-Float8", True), ("Qwen3-8B-FP8E4M3", True),
    ("Qwen3-8B-fp8e5m2", True), ("Qwen3-30B-A3B-MXFP8", True),
    ("/data/Qwen3-8B-FP8/../Qwen3-8B", False), ("Qwen3-8B-fp8x", False)])
def test_checkpoint_names(name: str, fp8: bool) -> None:
    assert says_fp8(name) is fp8


_POST = "        apply_true_on_policy_script_defaults(self)\n"


@pytest.mark.parametrize(("post", "fp8"), [
    ("        self.__dict__.update(train_fp8=True)\n", None),
    ("        self.__dict__['train_fp8'] = True\n", None),
    ("        vars(self).update(train_fp8=True)\n", None),
    ("        (y := setattr(self, 'train_fp8', True))\n", None),
    ("        if self.hardware == 'H100':\n            return\n        self.train_fp8 = True\n",
     False),
    ("        if self.hardware != 'H100':\n            pass\n        else:\n            return\n"
     "        self.train_fp8 = True\n", False),
    ("        self.train_fp8 = True\n", True),
])
def test_what_post_init_does_to_the_dataclass(tmp_path: Path, post: str,
                                              fp8: bool | None) -> None:
    from tests.frameworks.test_miles_py import _QWEN, _read

    script = _QWEN.replace(_POST, _POST + post)
    got, _ = _read(tmp_path, "python scripts/run_qwen3_4b.py --no-train-fp8\n", script,
                   "scripts/run_qwen3_4b.py")
    assert got["intent.fp8"] is fp8 if fp8 is not None else \
        isinstance(got["intent.fp8"], Unknown), got["intent.fp8"]


@pytest.mark.parametrize("quoted", ['"--fp8-format e4m3"',
                                    "'--fp8-format hybrid --fp8-recipe delayed'"])
def test_a_flag_inside_a_quoted_value_is_text(tmp_path: Path, quoted: str) -> None:
    # argparse gets one word: the value of --wandb-exp-name, no --fp8-format (megatron_args)
    (tmp_path / "run.sh").write_text("#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2 "
                                     f"--wandb-exp-name {quoted} --bf16\n")
    values, facts = _intent(tmp_path / "run.sh")
    assert "config.megatron.fp8_format" not in facts
    assert facts["config.megatron.wandb_exp_name"] == quoted[1:-1]
    assert values["intent.fp8"] is False
    (tmp_path / "t.py").write_text(_SLIME.replace(
        "{fp8}", f"misc_args += \"--wandb-group {quoted.replace(chr(34), chr(92) + chr(34))} \""))
    (tmp_path / "run.sh").write_text("python t.py\n")
    assert _intent(tmp_path / "run.sh")[0]["intent.fp8"] is False


@pytest.mark.parametrize("line", ["arctic_training train.cfg", "arctic_training train.YAML",
                                  "arctic_training config", "arctic_training --num_gpus 8"])
def test_an_arctic_config_of_any_name_is_never_fp8_no(tmp_path: Path, line: str) -> None:
    from tests.frameworks.test_arctic_training import PR331

    for name in ("train.cfg", "train.YAML", "config"):
        (tmp_path / name).write_text(PR331)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    fp8 = _intent(tmp_path / "run.sh")[0]["intent.fp8"]
    assert fp8 is True or isinstance(fp8, Unknown), fp8


@pytest.mark.parametrize("flags", ["--num_gpus -1", "--num_gpus 8 --num_nodes -1",
                                   "--num_gpus 0"])
def test_deepspeeds_every_gpu_is_no_world_size(tmp_path: Path, flags: str) -> None:
    from tests.frameworks.test_arctic_training import PR331

    (tmp_path / "train.yaml").write_text(PR331)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\narctic_training {flags} train.yaml\n")
    gpus = _intent(tmp_path / "run.sh")[0].get("intent.num_gpus")
    assert not (isinstance(gpus, int) and gpus <= 0), gpus
