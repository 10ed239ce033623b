"""Which Megatron a launch line's training script runs, from its imports (issue 23): a job's own
``train.py`` that imports only ``megatron.core`` builds its TransformerConfig itself, so neither
Megatron-LM's parser (FP8D-MEG-0006) nor ``validate_args`` (FP8D-MEG-0001 ...) sees its flags;
one importing ``megatron.training`` runs both (pretrain_gpt.py:53-62 @ core_v0.19.0); imports
that cannot be read leave both Unknown. The script is read, never imported or run."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.frameworks import megatron_args
from preflight.jobs.read import read_paths

VALIDATED = "config.megatron.validated_args"
PARSED = "config.megatron.parsed_args"
DROPS = "config.megatron.drops_unknown"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.10.0",
        "pkg.megatron-core": "0.11.0", "pkg.torch": "2.9.1+cu129", "cuda.torch_build": "12.9"}
# --fp8-param-gather without the distributed optimizer (validate_args refuses it: MEG-0001) and
# --fp8-recipe, which megatron-core 0.11's parser does not know (MEG-0006)
LAUNCH = ("torchrun --nproc_per_node 8 train.py --num-layers 24 --fp8-format hybrid "
          "--fp8-recipe tensorwise --fp8-param-gather --bf16\n")
CORE_ONLY = """\
import argparse

import torch
from megatron.core.transformer.transformer_config import TransformerConfig
from megatron.core.models.gpt import GPTModel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp8-format")
    args, _ = parser.parse_known_args()
    config = TransformerConfig(num_layers=24, hidden_size=1024, num_attention_heads=16,
                               fp8=args.fp8_format)
"""
TRAINING = """\
from megatron.core.models.gpt import GPTModel
from megatron.training import pretrain
"""


def _job(tmp_path: Path, script: str, launch: str = LAUNCH,
         more: dict[str, str] | None = None) -> Path:
    (tmp_path / "train.py").write_text(script)
    for name, text in (more or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run = tmp_path / "run.sh"
    run.write_text(launch)
    return run


def _fired(path: Path) -> dict[str, str]:
    """Rule id -> "fire" / "undetermined" for the rules that did not stay quiet."""
    report = preflight.check(str(path), smoke=False, assume=H100)
    return {**{u.rule_id: "undetermined" for u in report.undetermined},
            **{f.rule_id: "fire" for f in report.findings}}


def test_a_script_importing_only_megatron_core_runs_neither(tmp_path: Path) -> None:
    run = _job(tmp_path, CORE_ONLY)
    read = read_paths([str(run)])
    assert read.facts[VALIDATED] is False and read.facts[PARSED] is False
    # the evidence is the script's own import, file and line
    assert str(read.provenance[PARSED]).endswith("train.py:4")
    fired = _fired(run)
    assert "FP8D-MEG-0001" not in fired and "FP8D-MEG-0006" not in fired


def test_a_script_importing_megatron_training_runs_both(tmp_path: Path) -> None:
    run = _job(tmp_path, TRAINING)
    read = read_paths([str(run)])
    assert read.facts[VALIDATED] is True and read.facts[PARSED] is True
    assert read.facts[DROPS] is False
    fired = _fired(run)
    assert "FP8D-MEG-0001" in fired and "FP8D-MEG-0006" in fired


@pytest.mark.parametrize("line", [
    "import megatron.training.arguments",
    "from megatron import training",
    "from megatron.initialize import initialize_megatron",   # Megatron-LM 23.x layout
    "def main():\n    from megatron.training.initialize import initialize_megatron",
])
def test_every_form_of_the_training_import(tmp_path: Path, line: str) -> None:
    run = _job(tmp_path, "from megatron.core import mpu\n" + line + "\n")
    assert read_paths([str(run)]).facts[PARSED] is True


def test_ignore_unknown_args_drops_an_unknown_flag(tmp_path: Path) -> None:
    run = _job(tmp_path, "from megatron.training.initialize import initialize_megatron\n"
                         "initialize_megatron(ignore_unknown_args=True)\n")
    read = read_paths([str(run)])
    assert read.facts[PARSED] is True and read.facts[DROPS] is True
    assert str(read.provenance[DROPS]).endswith("train.py:2")
    fired = _fired(run)
    # --fp8-recipe is not refused by megatron-core 0.11: it is dropped (MEG-0061)
    assert "FP8D-MEG-0006" not in fired and "FP8D-MEG-0061" in fired


def test_the_jobs_own_modules_are_followed(tmp_path: Path) -> None:
    # train.py -> mylib/run.py -> megatron.training: the parser runs
    run = _job(tmp_path, "from megatron.core import mpu\nfrom mylib.run import go\n",
               more={"mylib/__init__.py": "",
                     "mylib/run.py": "from megatron.training import pretrain\n"})
    assert read_paths([str(run)]).facts[PARSED] is True
    # the helper imports only megatron.core: neither runs
    (tmp_path / "mylib" / "run.py").write_text("from megatron.core import tensor_parallel\n")
    assert read_paths([str(run)]).facts[PARSED] is False
    # a relative import inside the package is followed too
    (tmp_path / "mylib" / "run.py").write_text("from .boot import start\n")
    (tmp_path / "mylib" / "boot.py").write_text("from megatron.training import pretrain\n")
    assert read_paths([str(run)]).facts[PARSED] is True


@pytest.mark.parametrize(("launch", "script", "why"), [
    ("torchrun $WORK/train.py --fp8-format hybrid\n", CORE_ONLY, "set at launch"),
    ("torchrun other_train.py --fp8-format hybrid\n", CORE_ONLY, "not in the job"),
    (LAUNCH, "from megatron.core import mpu\nfrom megatron import get_args\n",
     "neither megatron.training nor megatron.core"),
    (LAUNCH, "import torch\nimport mylib\n", "import no megatron module"),
    (LAUNCH, "from megatron.core import mpu\ndef f(:\n", "could not be read"),
])
def test_imports_that_cannot_be_read_leave_both_unknown(tmp_path: Path, launch: str,
                                                        script: str, why: str) -> None:
    run = _job(tmp_path, script, launch)
    out = megatron_args.read_args_text(str(run), launch, {})
    assert isinstance(out.facts[PARSED], Unknown) and why in out.facts[PARSED].reason
    assert isinstance(out.facts[VALIDATED], Unknown)
    if "megatron" in script:            # (a script without `import megatron` is no Megatron job)
        fired = _fired(run)
        assert fired.get("FP8D-MEG-0006") in (None, "undetermined")
        assert fired.get("FP8D-MEG-0001") in (None, "undetermined")


def test_megatron_lms_own_entry_points_outside_the_job(tmp_path: Path) -> None:
    text = "torchrun $MEGATRON/pretrain_gpt.py --fp8-format hybrid --fp8-recipe tensorwise\n"
    out = megatron_args.read_args_text(str(tmp_path / "run.sh"), text, {})
    assert out.facts[PARSED] is True and out.facts[VALIDATED] is True
    assert out.facts[DROPS] is False


def test_an_argument_file_states_what_megatron_lm_does(tmp_path: Path) -> None:
    # no script on it: the flags are Megatron-LM's (argparse @file, a sourced ARGS file)
    out = megatron_args.read_args_text(str(tmp_path / "args.txt"),
                                       "--fp8-format hybrid\n--fp8-recipe tensorwise\n", {})
    assert out.facts[PARSED] is True and out.facts[VALIDATED] is True


def test_a_script_link_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    job = tmp_path / "job"
    outside.mkdir()
    job.mkdir()
    (outside / "helper.py").write_text("from megatron.training import pretrain\n")
    (job / "helper.py").symlink_to(outside / "helper.py")
    run = _job(job, "from megatron.core import mpu\nimport helper\n")
    out = read_paths([str(run)])
    assert isinstance(out.facts[PARSED], Unknown)
    assert "not read" in out.facts[PARSED].reason


def test_bounds_leave_it_unknown(tmp_path: Path) -> None:
    # train.py -> m1 -> m2 -> m3 -> m4 -> megatron.training: past MAX_DEPTH levels
    more = {f"m{n}.py": f"import m{n + 1}\n" for n in range(1, 4)}
    more["m4.py"] = "from megatron.training import pretrain\n"
    run = _job(tmp_path, "from megatron.core import mpu\nimport m1\n", more=more)
    out = read_paths([str(run)])
    assert isinstance(out.facts[PARSED], Unknown) and "levels" in out.facts[PARSED].reason
    # within the bound the chain is followed
    more["m3.py"] = "from megatron.training import pretrain\n"
    run = _job(tmp_path, "from megatron.core import mpu\nimport m1\n", more=more)
    assert read_paths([str(run)]).facts[PARSED] is True
