"""The built wheel works on its own: non-editable install into a fresh venv, rules included.

Builds a wheel from this checkout, installs it (core dependencies only, from the registry) into a
new virtual environment, and runs the console script from a folder outside the repo, so nothing
can be imported from the source tree. Slow (a venv and a pip install), but it runs in CI: it is
the only test that sees what users get from ``pip install .``.
"""

from __future__ import annotations

import email
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hostenv import require_exec

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
# What the README's first command finds on the bundled example job (preflight/examples/): the
# FP8-under-DeepSpeed conflict and DeepSpeed's fp16 next to accelerate's fp8.
EXAMPLE_ERRORS = {"FP8D-ACC-0003", "FP8D-DS-0002"}


def _console_script(venv: Path) -> str:
    """The installed ``fp8-doctor`` (the test skips where the venv's folder may not run it)."""
    require_exec(venv)
    return str(venv / "bin" / "fp8-doctor")


def _readme_bash_blocks() -> list[str]:
    """The README's ```bash blocks, in order (the first two are the README's own contract)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [b.strip() for b in re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)]


def _run(argv: list[str], cwd: Path, timeout: float = 600,
         tmpdir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "")
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def build_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory (TMPDIR) of the wheel build, to see what the build leaves there."""
    return tmp_path_factory.mktemp("build-tmp")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory, build_tmp: Path) -> Path:
    out = tmp_path_factory.mktemp("dist")
    res = _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
               cwd=out, tmpdir=build_tmp)
    assert res.returncode == 0, f"wheel build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    wheels = list(out.glob("fp8_doctor-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "v"
    res = _run([sys.executable, "-m", "venv", str(root)], cwd=root.parent)
    assert res.returncode == 0, res.stderr
    res = _run([str(root / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
               cwd=root.parent)
    assert res.returncode == 0, f"pip install failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return root


def test_the_build_leaves_no_temporary_folder(wheel: Path, build_tmp: Path) -> None:
    # issue 21: the build hook wrote the rule index to an fp8-doctor-index-* folder it never
    # removed, one per wheel built.
    assert not list(build_tmp.glob("fp8-doctor-index-*"))


def test_wheel_ships_the_rules(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("preflight/_rules/") and n.endswith(".yaml"))
    in_repo = sorted((REPO / "rules").rglob("*.yaml"))
    assert in_repo, "the repo has no rules/**/*.yaml"
    assert len(shipped) == len(in_repo)
    assert {Path(n).name for n in shipped} == {p.name for p in in_repo}
    assert "preflight/probes/gpu.py" in names and "preflight/cli.py" in names
    assert not any(n.startswith(("tests/", "fixtures/")) for n in names)


def test_wheel_ships_the_json_report_schema(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "preflight/render/report.schema.json" in names


def test_wheel_ships_the_plan_release_data(wheel: Path) -> None:
    assert "preflight/data/releases.json" in zipfile.ZipFile(wheel).namelist()


def test_installed_not_editable(venv: Path, tmp_path: Path) -> None:
    res = _run([str(venv / "bin" / "python"), "-c", "import preflight; print(preflight.__file__)"],
               cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert Path(res.stdout.strip()).is_relative_to(venv), res.stdout
    res = _run([str(venv / "bin" / "python"), "-c",
                "import importlib.util as u; print(u.find_spec('torch'))"], cwd=tmp_path)
    assert res.stdout.strip() == "None"  # core install: torch is never a dependency


def test_rules_list_from_the_wheel(venv: Path, tmp_path: Path) -> None:
    res = _run([_console_script(venv), "rules", "list", "--format", "json"],
               cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    rules = doc["rules"] if isinstance(doc, dict) else doc
    # one rule per file, rules/<area>/<ID>.yaml: every rule of the repo was found in the wheel
    assert {r["id"] for r in rules} == {p.stem for p in (REPO / "rules").rglob("*.yaml")}
    assert all(r["severity"] in ("error", "warning", "info") for r in rules)


def test_check_from_the_wheel(venv: Path, tmp_path: Path) -> None:
    res = _run([_console_script(venv), "check", "--no-smoke", "--format", "json"],
               cwd=tmp_path)
    assert res.returncode in (0, 1), f"exit {res.returncode}:\n{res.stderr[-3000:]}"
    doc = json.loads(res.stdout)
    assert {"schema_version", "facts", "findings", "summary", "exit_code"} <= set(doc)
    assert doc["exit_code"] == res.returncode
    assert "host.python" in doc["facts"] and "gpu.count" in doc["facts"]


def test_wheel_ships_a_rule_index_for_every_rule(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        doc = json.loads(zf.read("preflight/_rules_index.json"))
    in_repo = {p.relative_to(REPO / "rules").as_posix() for p in (REPO / "rules").rglob("*.yaml")}
    assert set(doc["rules"]) == in_repo


def test_check_from_the_wheel_uses_the_index_and_finds_what_the_source_finds(
        venv: Path, tmp_path: Path) -> None:
    """With the index, a check that reads no YAML config never imports PyYAML; its findings
    are the source tree's (which parses the rules' YAML) on the same facts."""
    # One set of facts for both runs (a snapshot of the example job on a planned H100), so
    # only the way the rules are loaded differs.
    snap = tmp_path / "snap.json"
    made = _run([sys.executable, "-m", "preflight", "snapshot", "--example", "--assume",
                 "gpu=H100", "-o", str(snap)], cwd=REPO)
    assert made.returncode == 0, made.stderr[-2000:]
    argv = ["check", "--format", "json", "--snapshot", str(snap)]
    res = _run([str(venv / "bin" / "python"), "-X", "importtime", "-m", "preflight", *argv],
               cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in res.stderr.splitlines()
                if line.startswith("import time:")}
    assert "yaml" not in imported and "preflight.base.yamlsafe" not in imported
    src = _run([sys.executable, "-m", "preflight", *argv], cwd=REPO)
    ids = lambda out: sorted(f["id"] for f in json.loads(out)["findings"])  # noqa: E731
    assert ids(res.stdout) == ids(src.stdout) and ids(res.stdout)   # the example has findings
    undetermined = lambda out: sorted(u["id"] for u in json.loads(out)["undetermined"])  # noqa
    assert undetermined(res.stdout) == undetermined(src.stdout)


def test_readme_first_command_from_the_wheel(venv: Path, tmp_path: Path) -> None:
    """The README's first command, its check part exactly, on a non-editable install."""
    first = _readme_bash_blocks()[0]
    install, check = [part.strip() for part in first.split("&&")][-2:]
    assert shlex.split(install)[1:] == ["install", "-q", "."], install  # non-editable, as here
    argv = shlex.split(check)
    assert argv[0] == ".venv/bin/fp8-doctor", check
    res = _run([_console_script(venv), *argv[1:]], cwd=tmp_path)
    assert res.returncode == 1, f"exit {res.returncode}:\n{res.stdout[-3000:]}{res.stderr[-3000:]}"
    as_json = _run([_console_script(venv), *argv[1:], "--format", "json"],
                   cwd=tmp_path)
    doc = json.loads(as_json.stdout)
    assert as_json.returncode == doc["exit_code"] == 1
    errors = {f["id"] for f in doc["findings"] if f["severity"] == "error"}
    assert EXAMPLE_ERRORS <= errors, errors
    # The text report names every finding the JSON report has.
    # Ids of rules (FP8D-DS-0002) and of built-in findings (FP8D-ENV-NOT-TRAINING) alike.
    shown = set(re.findall(r"FP8D-[A-Z0-9-]*[A-Z0-9]", res.stdout))
    missing = {f["id"] for f in doc["findings"]} - shown
    assert not missing, res.stdout[-3000:]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_cmd = _readme_bash_blocks()[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1].strip() == test_cmd
    # CI's torch is the CPU build named explicitly, not the [torch] extra (a floor, which would
    # pull the default CUDA build); the only extra it installs is [test].
    assert re.search(r"(?<![\w.-])torch==2\.13\.0(?![\w.])", test_cmd), test_cmd
    assert re.findall(r"\.\[([^\]]*)\]", test_cmd) == ["test"], test_cmd


def test_optional_extras_in_the_wheel(wheel: Path) -> None:
    """torch, transformer-engine, deepspeed and torchao are extras; none is a core dependency."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(zf.read(name))
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"torch", "torchao", "transformer-engine", "deepspeed", "test"} <= extras
    requires = meta.get_all("Requires-Dist") or []
    by_extra: dict[str, list[str]] = {}
    for req in requires:
        m = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", req)
        by_extra.setdefault(m.group(1) if m else "", []).append(req.split(";")[0].strip())
    heavy = ("torch", "torchao", "transformer-engine", "transformer_engine", "deepspeed")
    assert not [r for r in by_extra[""] if re.split(r"[\s\[<>=!~;]", r)[0] in heavy]
    assert by_extra["transformer-engine"] == ["transformer-engine[pytorch]"]
    assert by_extra["deepspeed"] == ["deepspeed"]
    # A floor, not a pin: `pip install fp8-doctor[torch]` must not replace the user's torch.
    (torch_req,) = by_extra["torch"]
    assert torch_req.startswith("torch>=") and "==" not in torch_req, torch_req


def test_wheel_is_typed_and_names_its_urls(wheel: Path) -> None:
    """PEP 561: py.typed in the package, so mypy checks code that imports preflight; and the
    [project.urls] of pyproject.toml reach the metadata (Project-URL)."""
    with zipfile.ZipFile(wheel) as zf:
        assert "preflight/py.typed" in zf.namelist()
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(zf.read(name))
    labels = {u.split(",")[0].strip().lower() for u in meta.get_all("Project-URL") or []}
    assert {"source", "issues", "documentation"} <= labels, labels
