"""A launch script's ``-m pkg.mod`` read as the job's own script (issue 22), and FP8 the job
writes itself: nanochat's ``torchrun -m scripts.base_train -- --fp8`` (karpathy/nanochat @
92d63d4e, reduced in tests/jobs/nanochat_job.py) is FP8 on the job's own ``torch._scaled_mm``
linear, its miniseries without ``--fp8`` is not FP8; and the hostile variants: a module out of
the job, a folder, a decoy ``fp8.py`` never imported, a conversion defined but never called,
modules importing each other, a framework's own entry module left to its reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from tests.jobs.nanochat_job import BASE_TRAIN, FP8, SPEEDRUN, write


def _read(path: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_speedrun_is_fp8_on_the_jobs_own_scaled_mm(tmp_path: Path) -> None:
    root = write(tmp_path)
    read, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is True
    assert values["intent.backend"] == "scaled_mm"
    assert read.facts["config.pytorch.own_fp8.convert"] is True
    assert "torch._scaled_mm" in read.facts["config.pytorch.own_fp8.how"]
    assert "only on CUDA" in read.facts["config.pytorch.own_fp8.how"]
    # where: the call in the job's script, found from the checkout's top
    line = BASE_TRAIN.splitlines().index(
        "        convert_to_float8_training(model, config=fp8_config, "
        "module_filter_fn=fp8_module_filter)") + 1
    assert read.provenance["config.pytorch.own_fp8.convert"].endswith(
        f"scripts/base_train.py:{line}")
    assert read.facts["config.pytorch.compile"] is True
    assert values["intent.num_gpus"] == 8      # torchrun --nproc_per_node=8 before the module
    files = {Path(p).relative_to(root).as_posix() for p, _ in read.files}
    assert "scripts/base_train.py" in files
    # python -m nanochat.dataset / scripts.tok_train: the job's, not here -> said, not guessed
    assert any("scripts.tok_train" in p.message and p.level == "warning" for p in read.problems)


def test_miniseries_without_fp8_is_not_fp8(tmp_path: Path) -> None:
    root = write(tmp_path)
    read, values = _read(root / "runs" / "miniseries.sh")
    assert values["intent.fp8"] is False
    assert "config.pytorch.own_fp8.convert" not in read.facts


def test_without_the_module_the_launch_is_not_read_as_fp8_no(tmp_path: Path) -> None:
    # before issue 22's change the same job was unread: no file held the switch
    root = write(tmp_path, {"scripts/base_train.py": None})
    read, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is not False
    assert any("was not found here" in p.message for p in read.problems)


def test_the_conversion_module_not_in_the_job_is_unknown_never_no(tmp_path: Path) -> None:
    root = write(tmp_path, {"nanochat/fp8.py": None})
    read, values = _read(root / "runs" / "speedrun.sh")
    assert isinstance(values["intent.fp8"], Unknown)
    assert "convert_to_float8_training" in values["intent.fp8"].reason


def test_fp8_switch_by_hand_is_its_default_with_the_note(tmp_path: Path) -> None:
    # the script run by hand (no launch line): read as `python scripts/base_train.py`, --fp8
    # its default (off), and the note saying so (jobs/pyjob.py; session 44, holdout20)
    root = write(tmp_path)
    read, values = _read(root / "scripts" / "base_train.py")
    assert values["intent.fp8"] is not True
    assert any(p.code == "runtime_args" and "--fp8" in p.message for p in read.problems)


def test_cd_in_the_script_decides_the_folder(tmp_path: Path) -> None:
    root = write(tmp_path, {"runs/speedrun.sh": "cd ..\n" + SPEEDRUN})
    read, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is True
    # a cd to a folder only the run knows: which file runs is not guessed
    root2 = write(tmp_path / "b", {"runs/speedrun.sh": 'cd "$(mktemp -d)"\n' + SPEEDRUN})
    read2, values2 = _read(root2 / "runs" / "speedrun.sh")
    assert values2["intent.fp8"] is not True
    assert any(p.code == "reference" for p in read2.problems)


def test_a_module_that_is_a_folder_runs_its_main(tmp_path: Path) -> None:
    root = write(tmp_path, {"scripts/base_train.py": None, "scripts/base_train/__init__.py": "",
                            "scripts/base_train/__main__.py": BASE_TRAIN})
    _, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is True
    # a package without __main__.py cannot be run: not read, said
    root2 = write(tmp_path / "b", {"scripts/base_train.py": None,
                                   "scripts/base_train/__init__.py": BASE_TRAIN})
    read2, values2 = _read(root2 / "runs" / "speedrun.sh")
    assert values2["intent.fp8"] is not True
    assert any("__main__.py" in p.message for p in read2.problems)


def test_a_module_linked_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "base_train.py").write_text(BASE_TRAIN)
    root = write(tmp_path / "job", {"scripts/base_train.py": None})
    (root / "scripts").mkdir()
    (root / "scripts" / "base_train.py").symlink_to(outside / "base_train.py")
    read, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is not True
    assert any(p.code == "outside_job" for p in read.problems)
    assert not any("outside" in p for p, _ in read.files)


def test_a_decoy_fp8_module_never_imported_is_not_read(tmp_path: Path) -> None:
    script = BASE_TRAIN.replace("from nanochat.fp8 import", "from nanochat.fp8_off import")
    root = write(tmp_path, {"scripts/base_train.py": script,
                            "nanochat/fp8_off.py": FP8.replace("torch._scaled_mm", "torch.mm")})
    read, values = _read(root / "runs" / "speedrun.sh")
    # the module it imports converts nothing to FP8; nanochat/fp8.py beside it is never run
    assert "config.pytorch.own_fp8.convert" not in read.facts
    assert values["intent.fp8"] is not True


def test_a_conversion_defined_but_never_called_is_not_fp8(tmp_path: Path) -> None:
    script = BASE_TRAIN.replace(
        "        convert_to_float8_training(model, config=fp8_config, "
        "module_filter_fn=fp8_module_filter)\n", "")
    root = write(tmp_path, {"scripts/base_train.py": script})
    read, values = _read(root / "runs" / "speedrun.sh")
    assert "config.pytorch.own_fp8.convert" not in read.facts
    assert values["intent.fp8"] is False


def test_a_single_file_job_with_its_own_fp8_linear(tmp_path: Path) -> None:
    script = (FP8.replace("from nanochat.common import COMPUTE_DTYPE", "COMPUTE_DTYPE = None") +
              "\nimport argparse\np = argparse.ArgumentParser()\n"
              "p.add_argument('--fp8', action='store_true')\nargs = p.parse_args()\n"
              "model = make()\nif args.fp8:\n    convert_to_float8_training(model)\n"
              "model = torch.compile(model)\n")
    root = write(tmp_path, {"train.py": script, "runs/go.sh": "python -m train --fp8\n",
                            "runs/bf16.sh": "python -m train\n"})
    _, values = _read(root / "runs" / "go.sh")
    assert values["intent.fp8"] is True and values["intent.backend"] == "scaled_mm"
    _, values = _read(root / "runs" / "bf16.sh")
    assert values["intent.fp8"] is False
    # a method of the job's FP8 class is no call of it: the class alone converts nothing
    decoy = script.replace("if args.fp8:\n    convert_to_float8_training(model)\n", "")
    root2 = write(tmp_path / "b", {"train.py": decoy, "runs/go.sh": "python -m train --fp8\n"})
    _, values = _read(root2 / "runs" / "go.sh")
    assert values["intent.fp8"] is not True


def test_modules_importing_each_other_end(tmp_path: Path) -> None:
    root = write(tmp_path, {
        "nanochat/fp8.py": "from nanochat.loop import back\n" + FP8 +
                           "\ndef again(m):\n    return back(m)\n",
        "nanochat/loop.py": "from nanochat.fp8 import again\n\ndef back(m):\n    return again(m)\n",
    })
    _, values = _read(root / "runs" / "speedrun.sh")
    assert values["intent.fp8"] is True


@pytest.mark.parametrize("entry, kind", [
    ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo", "verl"),
    ("torchrun -m torchtitan.train --job.config_file x.toml", "torchtitan"),
])
def test_a_frameworks_entry_module_stays_its_readers(tmp_path: Path, entry: str,
                                                     kind: str) -> None:
    # the job is a checkout holding the framework's own module: still not read as a script
    rel = entry.split()[2].replace(".", "/") + ".py"
    root = write(tmp_path, {"run.sh": entry + "\n", rel: BASE_TRAIN})
    read = read_paths([str(root / "run.sh")])
    assert not any(p.endswith(rel) for p, _ in read.files)
    assert not any(n.startswith("config.pytorch.") for n in read.facts)


def test_a_namespace_package_of_the_job_is_followed(tmp_path: Path) -> None:
    # `from pkg import conv` with no pkg/__init__.py: Python loads pkg/conv.py from sys.path[0]
    # (the folder `python -m pkg.train` runs from), and so does the read
    root = write(tmp_path, {
        "pkg/conv.py": "import torch\n\ndef enable_fp8(m):\n    return torch._scaled_mm(m, m)\n",
        "pkg/train.py": "import argparse\nimport torch\nfrom pkg import conv\n"
                        "p = argparse.ArgumentParser()\np.add_argument('--fp8', action='store_true')\n"
                        "args = p.parse_args()\nmodel = torch.compile(None)\n"
                        "if args.fp8:\n    conv.enable_fp8(model)\n",
        "go.sh": "python -m pkg.train --fp8\n", "bf16.sh": "python -m pkg.train\n"})
    _, values = _read(root / "go.sh")
    assert values["intent.fp8"] is True and values["intent.backend"] == "scaled_mm"
    # without --fp8 nothing of the job is a PyTorch FP8 setting (the script names none): not
    # read as a job, so not FP8 either
    _, values = _read(root / "bf16.sh")
    assert values["intent.fp8"] is not True


@pytest.mark.parametrize("flag, fp8", [("--fp8", True), ("", "not"), (None, "not")])
def test_a_library_conversion_in_a_job_module_takes_the_calls_condition(
        tmp_path: Path, flag: str | None, fp8: Any) -> None:
    # the job's own enable_fp8 wraps torchao's conversion; the script calls it under `if
    # args.fp8:` -- decided by the launch line, or (run by hand) by --fp8's default (off): never
    # the "yes" the helper's unconditional call inside said
    root = write(tmp_path, {
        "mylib/conv.py": "from torchao.float8 import convert_to_float8_training\n\n"
                         "def enable_fp8(model):\n    convert_to_float8_training(model)\n",
        "train.py": "import argparse\nimport torch\nfrom mylib import conv\n"
                    "p = argparse.ArgumentParser()\np.add_argument('--fp8', action='store_true')\n"
                    "args = p.parse_args()\nmodel = torch.compile(None)\n"
                    "if args.fp8:\n    conv.enable_fp8(model)\n",
        "run.sh": f"python -m train {flag or ''}\n"})
    _, values = _read(root / ("train.py" if flag is None else "run.sh"))
    if fp8 == "unknown":
        assert isinstance(values["intent.fp8"], Unknown)
        assert "args.fp8" in values["intent.fp8"].reason
    elif fp8 == "not":              # nothing of the job's is an FP8 setting then
        assert values["intent.fp8"] is not True
    else:
        assert values["intent.fp8"] is fp8


_COLOSSAL = """import argparse
from colossalai.booster import Booster
from colossalai.booster.plugin import HybridParallelPlugin

parser = argparse.ArgumentParser()
parser.add_argument("--fp8", action="store_true")
args = parser.parse_args()
plugin = HybridParallelPlugin(tp_size=2, pp_size=1, precision="bf16", use_fp8=args.fp8)
booster = Booster(plugin=plugin)
"""


@pytest.mark.parametrize("line, fp8", [
    ("colossalai run --nproc_per_node 8 -m pkg.train --fp8", True),
    ("colossalai run -m pkg.train --nproc_per_node 8", False),    # click takes its own option
    ("colossalai run -m pkg.train -- --fp8", True),
])
def test_colossalai_run_module_is_the_jobs_script(tmp_path: Path, line: str, fp8: bool) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(_COLOSSAL)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    read, values = _read(tmp_path / "run.sh")
    assert read.facts["config.colossalai.plugin"] == "HybridParallelPlugin"
    assert values["intent.fp8"] is fp8
    assert read.provenance["config.colossalai.use_fp8"].endswith("pkg/train.py:8")


def test_colossalai_run_module_missing_or_outside_is_unknown(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "train.py").write_text(_COLOSSAL)
    job = tmp_path / "job"
    (job / "pkg").mkdir(parents=True)
    (job / "pkg" / "__init__.py").write_text("")
    (job / "pkg" / "train.py").symlink_to(outside / "train.py")
    (job / "run.sh").write_text("#!/bin/bash\ncolossalai run -m pkg.train --fp8\n")
    (job / "miss.sh").write_text("#!/bin/bash\ncolossalai run -m pkg.gone --fp8\n")
    read, values = _read(job / "run.sh")
    assert values["intent.fp8"] is not True
    assert any(p.code == "outside_job" for p in read.problems)
    read, values = _read(job / "miss.sh")
    assert values["intent.fp8"] is not True
    assert any(p.code == "reference" and p.line == 2 and "pkg.gone" in p.message
               for p in read.problems)
