"""``python -m pkg.mod`` in a script below the repository's top, where the package sits in a
folder between the script and the job root (holdout20's RL2 fork: `torchrun -m RL2.trainer.ppo`
from a script under examples/; the docs run it from the repository's top)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

TRAIN = ('from accelerate import Accelerator\n\n\ndef main():\n'
         '    acc = Accelerator(mixed_precision="fp8")\n    return acc\n\n\n'
         'if __name__ == "__main__":\n    main()\n')


def _job(root: Path, pkg_at: str) -> Path:
    (root / ".git").mkdir(parents=True)
    pkg = root / pkg_at / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(TRAIN)
    script = root / "proj" / "examples" / "run.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/bash\ntorchrun --nproc_per_node=8 -m mypkg.train\n")
    return script


def _read(script: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_a_package_in_a_folder_between_the_script_and_the_root_is_read(tmp_path: Path) -> None:
    script = _job(tmp_path / "repo", "proj")
    read, values = _read(script)
    files = {Path(p).name for p, _ in read.files}
    assert "train.py" in files
    assert values["intent.fp8"] is True


def test_the_root_still_works(tmp_path: Path) -> None:
    script = _job(tmp_path / "repo", ".")
    read, values = _read(script)
    assert "train.py" in {Path(p).name for p, _ in read.files}


def test_never_above_the_job_root(tmp_path: Path) -> None:
    # the package sits above the checkout (its parent folder): not the job's, never opened
    outer = tmp_path / "outer"
    pkg = outer / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(TRAIN)
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    script = repo / "examples" / "run.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/bash\ntorchrun -m mypkg.train\n")
    read, values = _read(script)
    assert all(not p.startswith(str(pkg)) for p, _ in read.files)
    assert values["intent.fp8"] is not True or isinstance(values["intent.fp8"], Unknown)
