"""No entry point imports code from the job folder or the current folder (issue 21 item 1).

A stranger's repository holding ``json.py``, ``yaml.py``, ``typing.py``, ``__future__.py``, a
``torch/`` or a ``preflight/`` package (each appends to a marker file when imported) is both the
job and the current folder, and ``PYTHONPATH`` names folders inside it. Each command runs for
real (the import probe, the smoke step on the CPU, the speedup child, the multi-rank mode with its
gloo collectives child) and must have done its work with the real modules; the marker must never
appear. Before the fix the children started Python with the working directory on ``sys.path``.

What cannot be covered (docs/reliability.md): ``python -m preflight`` in a folder holding a
``preflight/`` package runs that package (Python imports it before any code of ours), and an
empty or ``.`` entry in ``PYTHONPATH`` does the same to any console script; so the ``python -m``
runs below plant every shadow but ``preflight/`` in the current folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from console_script import write_script

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SHADOWS = ("json.py", "yaml.py", "typing.py", "__future__.py", "torch/__init__.py",
           "preflight/__init__.py")
MODEL = {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 1000, "model_type": "llama"}


def _plant(folder: Path, marker: Path, names: tuple[str, ...] = SHADOWS) -> None:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(marker)!r}, 'a').write({str(path)!r} + '\\n')\n")


@pytest.fixture
def stranger(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the current folder, the job inside it, the marker file): both folders planted."""
    marker = tmp_path / "imported.txt"
    here = tmp_path / "repo"
    job = here / "job"
    (job / "lib").mkdir(parents=True)
    for example in (REPO / "preflight" / "examples").glob("*.*"):
        if example.suffix in (".yaml", ".json"):
            (job / example.name).write_text(example.read_text())
    (job / "config.json").write_text(json.dumps(MODEL))
    _plant(here, marker)
    _plant(job, marker)
    _plant(job / "lib", marker, ("yaml.py", "json.py"))
    return here, job, marker


def _env(job: Path, *unsafe: str, named: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVTE_", "FP8_DOCTOR"))}
    # PYTHONPATH entries inside the job, ahead of what the test runs with: relative ones, and an
    # absolute one where the job folder is named on the command line (one the user points into
    # a folder not named as the job is their environment, and kept: base/isolate.py)
    inside = [str(job / "lib")] if named else []
    entries = [*unsafe, "job/lib", "lib", *inside, env.get("PYTHONPATH", ""), str(REPO)]
    env["PYTHONPATH"] = os.pathsep.join(e for e in entries if e or e in unsafe)
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str],
         timeout: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _script(tmp: Path) -> list[str]:
    return write_script(tmp / "bin")


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def _check(res: subprocess.CompletedProcess[str], out: Path) -> None:
    assert res.returncode in (0, 1), res.stderr[-3000:]
    facts = json.loads(res.stdout)["facts"]
    assert facts["import.torch.version"] == _torch_version()   # the real torch, in a child


def _smoke(res: subprocess.CompletedProcess[str], out: Path) -> None:
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    assert json.loads(res.stdout)["facts"]["smoke.torch_version"] == _torch_version()


def _speedup(res: subprocess.CompletedProcess[str], out: Path) -> None:
    assert res.returncode in (0, 1), res.stderr[-3000:]
    doc = json.loads(res.stdout)
    # The child imported the real torch: it timed the GEMMs, or said it sees no CUDA device.
    assert doc.get("prediction") or "CUDA" in str(doc.get("why_not")), doc


def _python_m(res: subprocess.CompletedProcess[str], out: Path) -> None:
    assert res.returncode in (0, 1), res.stderr[-3000:]
    assert json.loads(res.stdout)["facts"]["config.files"]       # the YAML was read (yaml)
    assert "json.py" in res.stderr and "yaml.py" in res.stderr   # the warning names them


def _cluster(res: subprocess.CompletedProcess[str], out: Path) -> None:
    assert res.returncode in (0, 1), res.stderr[-3000:]
    facts = json.loads(out.read_text())["facts"]
    assert facts["cluster.collectives.status"] == "ok"   # the child ran gloo with real torch


FP8 = "fp8-doctor"
PY_M = "python -m"
RUNS = {   # name: (how it is started, arguments, run in the job (else in the repo), check)
    "check --deep job": (FP8, ["check", "--deep", "--no-smoke", "--format", "json", "job"],
                         False, _check),
    "check --deep .": (FP8, ["check", "--deep", "--no-smoke", "--format", "json", "."],
                       True, _check),
    "smoke": (FP8, ["smoke", "--device", "cpu", "--backend", "scaled_mm", "--no-speed",
                    "--format", "json"], True, _smoke),
    # --quick: the GEMM-timing child, which imports torch first on any machine (the trial's
    # child stops at a missing backend on this one)
    "speedup .": (FP8, ["speedup", ".", "--quick", "--model-config", "config.json", "--seq",
                        "64", "--micro-batch", "1", "--format", "json"], True, _speedup),
    "python -m preflight check": (PY_M, ["preflight", "check", "--no-smoke", "--format", "json",
                                         "job"], False, _python_m),
    "python -m preflight.cluster": (PY_M, ["preflight.cluster", "job", "--collectives",
                                           "--collectives-backend", "gloo",
                                           "--collectives-mib", "1", "--format", "json", "-o",
                                           "OUT"], False, _cluster),
}


@pytest.mark.parametrize("name", list(RUNS))
def test_no_entry_point_imports_from_the_job_or_the_cwd(
        name: str, stranger: tuple[Path, Path, Path], tmp_path: Path) -> None:
    here, job, marker = stranger
    how, args, in_job, check = RUNS[name]
    out = tmp_path / "out.json"
    args = [str(out) if a == "OUT" else a for a in args]
    if how == FP8:
        argv, env = [*_script(tmp_path), *args], _env(job, named=name != "smoke")
    else:
        # Python imports `preflight` itself before our code runs: no preflight/ in the cwd
        # here; PYTHONPATH entries that mean the current folder are added instead.
        for path in sorted((here / "preflight").iterdir()):
            path.unlink()
        (here / "preflight").rmdir()
        argv, env = [sys.executable, "-m", *args], {**_env(job, "", "."), "OMP_NUM_THREADS": "1"}
    res = _run(argv, job if in_job else here, env)
    check(res, out)
    assert not marker.exists(), marker.read_text()
