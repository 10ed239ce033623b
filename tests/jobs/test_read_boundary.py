"""The read boundary (issue 21 item 2, docs/reliability.md "Read boundary"): a run reads what the
user named and what those files reference inside the job, never a file outside it.

Each case plants a secret in a file outside the job (the home directory's ``.bashrc``, an
absolute path, ``../``, a symlink out of the job) that a launch script sources or a config names.
Before, the secret reached the facts (and so text, JSON, Markdown and snapshots); now the file is
not read, and a warning names the file and line that reference it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cfg_helpers import FIXTURES

from preflight.jobs.read import read_paths
from preflight.reading.boundary import boundary_for

SECRET = "hf_SECRETabcdefghijklmnopqrstuvwxyz0123"
LAUNCH = "accelerate launch --mixed_precision ${PREC:-bf16} train.py\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """home/ (HOME) with a .bashrc, outside/ with a script and configs, job/ (empty), cwd
    elsewhere."""
    home, outside, job, elsewhere = (tmp_path / n for n in ("home", "outside", "job", "cwd"))
    for d in (home, outside, job, elsewhere):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    secret_sh = f"PREC=fp8\nexport HF_TOKEN={SECRET}\nsource ./more.sh\n"
    (home / ".bashrc").write_text(secret_sh)
    (outside / "secret.sh").write_text(secret_sh)
    (outside / "more.sh").write_text(f"PASSWORD_HASH={SECRET}\n")
    (outside / "ds.json").write_text(json.dumps({
        "train_batch_size": 8, "zero_optimization": {"stage": 3}, "wandb": {"api": SECRET}}))
    (outside / "acc.yaml").write_text(f"distributed_type: DEEPSPEED\nmixed_precision: fp8\n"
                                      f"num_processes: 8\nnote: {SECRET}\n")
    (outside / "cfg.yaml").write_text(f"fp8: hybrid\nnote: {SECRET}\n")
    return tmp_path


def _leaks(read) -> bool:
    return SECRET in json.dumps(read.facts, default=str) or SECRET in repr(read.problems)


def _outside(read, path: Path, line: int) -> None:
    found = [p for p in read.problems if p.code == "outside_job"]
    assert [(p.path, p.line, p.level) for p in found] == [(str(path), line, "warning")], found
    assert "outside the job" in found[0].message and "not read" in found[0].message


SOURCES = {
    "home-tilde": "source ~/.bashrc",
    "home-var": ". $HOME/.bashrc",
    "absolute": "source {outside}/secret.sh",
    "dot-dot": ". ../outside/secret.sh",
    "dot-dot-from-script-dir": "source $(dirname $0)/../outside/secret.sh",
    "symlink-out": "source ./env.sh",
}


@pytest.mark.parametrize("form", SOURCES.values(), ids=SOURCES.keys())
def test_source_outside_the_job_is_not_read(world: Path, form: str) -> None:
    job = world / "job"
    (job / "env.sh").symlink_to(world / "outside" / "secret.sh")
    script = job / "run.sh"
    script.write_text("#!/bin/bash\n" + form.format(outside=world / "outside") + "\n" + LAUNCH)
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    assert not _leaks(read)
    assert [p for p, _ in read.files] == [str(script)]
    if "$HOME" not in form:        # a path built from a variable is never followed at all
        _outside(read, script, 2)


def test_source_inside_the_job_is_still_followed(world: Path) -> None:
    job = world / "job"
    (job / "common").mkdir()
    (job / "common" / "env.sh").write_text("PREC=fp8\n")
    script = job / "run.sh"
    script.write_text("#!/bin/bash\nsource ./common/env.sh\n" + LAUNCH)
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert read.problems == []


# (file name, text naming the outside file, the line naming it)
REFERENCES = {
    "accelerate-deepspeed_config_file": (
        "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
        "deepspeed_config:\n  deepspeed_config_file: ../outside/ds.json\n  zero3_init_flag: true\n"
        "mixed_precision: bf16\nnum_processes: 8\n", 4),
    "hf-deepspeed-absolute": (
        "args.yaml", "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\n"
        "deepspeed: {outside}/ds.json\nlearning_rate: 1.0e-5\n", 4),
    "llamafactory-deepspeed": (
        "sft.yaml", "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\ndo_train: true\n"
        "finetuning_type: full\ndeepspeed: ../../outside/ds.json\noutput_dir: out\nbf16: true\n",
        5),
    "accelerate-launch-config_file": (
        "run.sh", "#!/bin/bash\naccelerate launch --config_file ../outside/acc.yaml train.py\n", 2),
    "launch-deepspeed-flag": (
        "run.sh", "#!/bin/bash\ntorchrun train.py --deepspeed ~/../outside/ds.json "
        "--output_dir out --per_device_train_batch_size 4 --bf16\n", 2),
    "megatron-yaml-cfg": (
        "run.sh", "#!/bin/bash\ntorchrun pretrain_gpt.py --yaml-cfg ../outside/cfg.yaml "
        "--num-layers 2 --bf16\n", 2),
    "swift-deepspeed": (
        "run.sh", "#!/bin/bash\nswift sft --model Qwen/Qwen2.5-7B --train_type full "
        "--deepspeed ../outside/ds.json --torch_dtype bfloat16\n", 2),
}


@pytest.mark.parametrize("name,text,line", REFERENCES.values(), ids=REFERENCES.keys())
def test_a_reference_that_leaves_the_job_is_not_read(world: Path, name: str, text: str,
                                                     line: int) -> None:
    path = world / "job" / name
    if "../../" in text:
        (world / "job" / "sub").mkdir()
        path = world / "job" / "sub" / name
    path.write_text(text.format(outside=world / "outside"))
    read = read_paths([str(path)])
    assert not _leaks(read)
    assert [p for p, _ in read.files] == [str(path)], read.problems
    _outside(read, path, line)


def test_a_symlink_in_a_scanned_folder_pointing_out_is_not_read(world: Path) -> None:
    job = world / "job"
    (job / "ds.json").symlink_to(world / "outside" / "ds.json")
    (job / "run.sh").write_text("#!/bin/bash\n" + LAUNCH)
    read = read_paths([str(job)])
    assert not _leaks(read)
    assert [os.path.basename(p) for p, _ in read.files] == ["run.sh"]
    (problem,) = [p for p in read.problems if p.code == "outside_job"]
    assert problem.path.endswith("ds.json") and problem.level == "warning"


def test_a_file_named_on_the_command_line_is_always_read(world: Path) -> None:
    link = world / "job" / "ds.json"
    link.symlink_to(world / "outside" / "ds.json")
    read = read_paths([str(link), str(world / "outside" / "acc.yaml")])
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert not [p for p in read.problems if p.code == "outside_job"]


def _repo(world: Path, *, git: bool) -> tuple[Path, Path]:
    repo = world / "job" / "LLaMA-Factory"
    shutil.copytree(FIXTURES / "jobs" / "llamafactory_repo", repo)
    if git:
        (repo / ".git").mkdir()
    return repo, repo / "examples" / "extras" / "fp8" / "llama3_fp8_deepspeed_sft.yaml"


def test_a_repository_top_is_a_job_root(world: Path) -> None:
    # LLaMA-Factory's YAML names examples/deepspeed/... relative to the repository's top
    repo, yaml = _repo(world, git=True)
    read = read_paths([str(yaml)])                    # run from elsewhere: the git top counts
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3
    assert read.problems == []


def test_the_current_directory_holding_the_job_is_a_job_root(
        world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, yaml = _repo(world, git=False)
    monkeypatch.chdir(repo)                           # launched from the top, as people do
    read = read_paths([os.path.relpath(yaml)])
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3
    assert read.problems == []


def test_shared_places_are_never_job_roots(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = world / "home"
    (home / ".git").mkdir()                           # a dotfiles repository in $HOME
    (home / "proj").mkdir()
    script = home / "proj" / "run.sh"
    script.write_text("#!/bin/bash\nsource ~/.bashrc\n" + LAUNCH)
    monkeypatch.chdir(home)
    bound = boundary_for([str(script)])
    assert str(home) not in bound.roots and os.path.realpath(home / "proj") in bound.roots
    assert not bound.allows(str(home / ".bashrc"))
    shared = world / "shared"
    shared.mkdir()
    shared.chmod(0o1777)                              # like /tmp
    (shared / "x.sh").write_text(LAUNCH)
    assert boundary_for([str(shared / "x.sh")]).roots == ()
    assert boundary_for([str(shared)]).roots == (os.path.realpath(shared),)   # named: inside
    assert "/" not in boundary_for(["/etc/hostname"]).roots


@pytest.mark.skipif(sys.platform != "linux", reason="strace-free check of what is opened")
def test_a_check_opens_nothing_outside_the_job(world: Path) -> None:
    # the whole CLI, audited by Python's own open hook: no file under outside/ or home/ opened
    script = world / "job" / "run.sh"
    script.write_text("#!/bin/bash\nsource ~/.bashrc\nsource ../outside/secret.sh\n"
                      "accelerate launch --config_file ../outside/acc.yaml t.py\n")
    audit = (
        "import sys, runpy\n"
        f"bad = ({str(world / 'outside')!r}, {str(world / 'home')!r})\n"
        "def hook(event, args):\n"
        "    if event == 'open' and isinstance(args[0], str) and args[0].startswith(bad):\n"
        "        sys.stderr.write('OPENED ' + args[0] + '\\n')\n"
        "sys.addaudithook(hook)\n"
        "sys.argv = ['fp8-doctor', 'check', '--format', 'json', '--no-smoke', sys.argv[1]]\n"
        "from preflight.cli import main\n"
        "raise SystemExit(main())\n")
    proc = subprocess.run([sys.executable, "-c", audit, str(script)], capture_output=True,
                          text=True, timeout=120, cwd=world / "cwd",
                          env={**os.environ, "HOME": str(world / "home")})
    assert "OPENED" not in proc.stderr, proc.stderr
    assert SECRET not in proc.stdout
    ids = [f["id"] for f in json.loads(proc.stdout)["findings"]]
    assert ids.count("FP8D-CFG-OUTSIDE") == 3


def test_a_hostile_snapshots_provenance_opens_nothing(world: Path) -> None:
    # a replayed snapshot names files of another machine: shown, never opened here, and a
    # "path" with a newline or tab (a forged line) is dropped
    outside = world / "outside" / "ds.json"
    snap = world / "job" / "snap.json"
    snap.write_text(json.dumps({
        "schema_version": "1.0",
        "facts": {"config.deepspeed.zero_optimization.stage": 3, "intent.fp8": True,
                  "config.deepspeed.fp16.enabled": True, "config.deepspeed.bf16.enabled": True},
        "provenance": {"config.deepspeed.zero_optimization.stage": f"{outside}:3",
                       "config.deepspeed.fp16.enabled": "~/.config/gh/hosts.yml:1",
                       "config.deepspeed.bf16.enabled": "x.json:1\n+++ b/../../etc/passwd",
                       "intent.fp8": {"not": "a string"}}}))
    from preflight import snapshot

    facts, _ = snapshot.load(str(snap))
    assert facts.source("config.deepspeed.bf16.enabled") is None
    assert facts.source("intent.fp8") is None
    runs = [["--format", f] for f in ("text", "json", "markdown", "sarif")] + [["--diff"]]
    for extra in runs:
        audit = (
            "import sys\n"
            f"bad = ({str(world / 'outside')!r}, {str(world / 'home')!r})\n"
            "def hook(event, args):\n"
            "    if event == 'open' and isinstance(args[0], str) and args[0].startswith(bad):\n"
            "        sys.stderr.write('OPENED ' + args[0] + '\\n')\n"
            "sys.addaudithook(hook)\n"
            f"sys.argv = ['fp8-doctor', 'check', *{extra!r}, '--snapshot', sys.argv[1]]\n"
            "from preflight.cli import main\n"
            "raise SystemExit(main())\n")
        proc = subprocess.run([sys.executable, "-c", audit, str(snap)], capture_output=True,
                              text=True, timeout=120, cwd=world / "cwd",
                              env={**os.environ, "HOME": str(world / "home")})
        assert proc.returncode in (0, 1) and "OPENED" not in proc.stderr, proc.stderr
        assert "+++ b/../../etc/passwd" not in proc.stdout


def test_the_current_directory_far_above_the_job_is_no_root(
        world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # run from ~/src, a job in ~/src/a/b/c/d/e/job must not open ~/src/other/.env
    src = world / "src"
    job = src / "a" / "b" / "c" / "d" / "e" / "job"
    job.mkdir(parents=True)
    (src / "other").mkdir()
    (src / "other" / "env.sh").write_text(f"PREC=fp8\nTOKEN={SECRET}\n")
    script = job / "run.sh"
    script.write_text("#!/bin/bash\nsource ../../../../../../other/env.sh\n" + LAUNCH)
    monkeypatch.chdir(src)
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "bf16" and not _leaks(read)
    _outside(read, script, 2)
    monkeypatch.chdir(job.parent.parent)              # two levels up: launched from there
    assert os.path.realpath(job.parent.parent) in boundary_for([str(script)]).roots
