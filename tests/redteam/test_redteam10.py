"""redteam10 (session 37): attacks on what sessions 35-36 added to the shell kit
(reading/shellchain.py, shellmaybe.py, shellbranch.py, shelldir.py, jobs/scriptcalls.py) and
the launch readers that take a config from a shell value. Each case failed before its fix:

- ``if A; B; then``: bash decides by the list's last command (B); the first decided, so FP8
  was read "yes" where bash never sets it and "no" where it does (reading/shellchain.py
  ``more_test``, called by the lexer);
- ``[[ $P == bf* ]]``: in ``[[ ]]`` the right side is a glob where unquoted; it was compared as
  text, FP8 "no" for a job bash runs in FP8 (reading/shelltests.py: undecided now);
- ``accelerate launch --config_file $CFG`` with ``CFG`` known only when the script runs
  (``$(mktemp)``, ``"$1"``, a script-folder path that leaves the job): the flag was dropped
  without a word and the verdict was FP8 "no" from a config never read (reading/launch.py
  ``Out.link(own=True)``: ``base_config`` Unknown).

The rest pin what held (no traceback, bounded, nothing outside the job in the output)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

SENTINEL = "SENTINEL_REDTEAM10_7f3a"
FP8 = 'EXTRA="--fp8-format hybrid"'


def _fp8(path: Path) -> Any:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


def _megatron(tmp_path: Path, before: str) -> Any:
    (tmp_path / ".git").mkdir(exist_ok=True)
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n" + before +
                      "\ntorchrun pretrain_gpt.py --bf16 --num-layers 2 $EXTRA\n")
    return _fp8(script)


@pytest.mark.parametrize("test, fp8", [
    ('P=fp8\nif [ "$P" = fp8 ]; [ "$P" = bf16 ]; then ' + FP8 + "; fi", False),
    ('P=bf16\nif [ "$P" = fp8 ]; [ "$P" = bf16 ]; then ' + FP8 + "; fi", True),
    ('P=fp8\nif [ "$P" = fp8 ]\n [ "$P" = bf16 ]; then ' + FP8 + "; fi", False),
    ('P=fp8\nif [ "$P" = bf16 ]; [ "$P" = fp8 ] && [ 1 = 1 ]; then ' + FP8 + "; fi", True),
    ('P=fp8\nif [ "$P" = bf16 ]; then EXTRA=; elif [ "$P" = fp8 ]; [ "$P" = bf16 ]; then '
     + FP8 + "; fi", False),
    # held: one command, chains, and what stays undecided
    ('P=fp8\nif [ "$P" = fp8 ] || [ "$P" = bf16 ] && [ "$P" = none ]; then ' + FP8 + "; fi",
     False),
    ('P=bf16\nif [ "$P" = fp8 ] &&\n   [ 1 = 1 ]; then ' + FP8 + "; fi", False),
    ('P=fp8\nif ! [ "$P" = fp8 ] && [ 1 = 1 ]; then :; else ' + FP8 + "; fi", True),
    ('P=fp8\nif [ "$P" = bf16 ] | [ 1 = 1 ]; then ' + FP8 + "; fi", None),
    ('P=fp8\nif ' + " && ".join(['[ "$P" = bf16 ]'] + ['[ "$P" = fp8 ]'] * 40) + "; then "
     + FP8 + "; fi", None),
])
def test_an_if_list_is_decided_by_its_last_command(tmp_path: Path, test: str,
                                                   fp8: bool | None) -> None:
    got = _megatron(tmp_path, test)
    assert isinstance(got, Unknown) if fp8 is None else got is fp8, got


@pytest.mark.parametrize("test", [
    'P=bf16\nif [[ "$P" == bf* ]]; then ' + FP8 + "; fi",
    'P=bf16\nif [[ $P == "bf"* ]]; then ' + FP8 + "; fi",
    'P=bf16\nif [[ "$P" == fp8 ]] || [[ "$P" == b? ]]; then ' + FP8 + "; fi",
    'P=bf16\nif [[ "$P" != [bc]f16 ]]; then :; else ' + FP8 + "; fi",
])
def test_a_double_bracket_glob_is_never_read_as_text(tmp_path: Path, test: str) -> None:
    assert _megatron(tmp_path, test) is not False


def test_a_single_bracket_compares_text(tmp_path: Path) -> None:
    assert _megatron(tmp_path, 'P=bf16\nif [ "$P" = "bf*" ]; then ' + FP8 + "; fi") is False


def _link_out(path: Path, outside: Path) -> None:
    os.symlink(outside, path)


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.yaml").write_text(f"mixed_precision: fp8\nkey: {SENTINEL}\n")
    (out / "secret.sh").write_text(f"accelerate launch --mixed_precision fp8 t.py --k {SENTINEL}\n")
    return out


@pytest.mark.parametrize("line", [
    'CFG=$(mktemp)\n',
    'CFG="$1"\n',
    'CFG="$(cd "$(dirname "${BASH_SOURCE[0]}")/../outside" && pwd)/secret.yaml"\n',
    'CFG="$(cd "$(dirname "$0")/lnk" && pwd)/secret.yaml"\n',
    'CFG="$(cd -P "$(dirname "$0")/lnk" && pwd)/secret.yaml"\n',
    'CFG="$(realpath "$(dirname "$0")/lnk/secret.yaml")"\n',
    'CFG="${BASH_SOURCE%/*}/../outside/secret.yaml"\n',
])
def test_a_config_file_known_only_at_run_time_is_never_fp8_no(tmp_path: Path, outside: Path,
                                                              line: str) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    (job / "train.py").write_text("import torch\n")
    _link_out(job / "lnk", outside)
    (job / "run.sh").write_text("#!/bin/bash\n" + line +
                                "accelerate launch --config_file $CFG train.py\n")
    read = read_paths([str(job / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert isinstance(read.facts["config.accelerate.base_config"], Unknown)
    assert read.provenance["config.accelerate.base_config"].line == 3
    assert SENTINEL not in repr(read.facts) + repr([str(p) for p in read.problems])


def test_a_config_file_the_job_holds_is_still_read(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "acc.yaml").write_text("mixed_precision: fp8\ndistributed_type: MULTI_GPU\n")
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "run.sh").write_text('#!/bin/bash\nCFG="$(cd "$(dirname "$0")" && pwd)/acc.yaml"\n'
                                     "accelerate launch --config_file $CFG train.py\n")
    assert _fp8(tmp_path / "run.sh") is True


@pytest.mark.parametrize("line", [
    "bash {out}/secret.sh\n",
    'bash "$(dirname "$0")/../outside/secret.sh"\n',
    "cd {out} && bash secret.sh\n",
    'source "$(dirname "$0")/lnk/secret.sh"\n',
    "cd /dev && bash zero\n",
    "bash /proc/self/environ\nsource /proc/self/environ\n",
])
def test_a_called_script_outside_the_job_is_a_warning_never_read(tmp_path: Path, outside: Path,
                                                                 line: str) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    _link_out(job / "lnk", outside)
    (job / "run.sh").write_text("#!/bin/bash\n" + line.format(out=outside))
    read = read_paths([str(job / "run.sh")])
    assert SENTINEL not in repr(read.facts) + repr([str(p) for p in read.problems])
    assert any(p.path == str(job / "run.sh") and p.line == 2 and "outside the job" in p.message
               for p in read.problems), [str(p) for p in read.problems]


def test_a_file_past_the_step_bound_is_unknown_with_the_line(tmp_path: Path) -> None:
    # pysource/pycallers: 200 functions each returning five calls of the others were 5**6
    # inlines per call (a 20 KB file read for minutes); now bounded (pyvalues.MAX_STEPS,
    # pycallers.MAX_INLINED) and what was not read makes FP8 Unknown, never "no"
    from tests.jobs.modded_nanogpt_job import LOSS_HEAD, TRAIN_GPT, TRITON_KERNELS

    (tmp_path / ".git").mkdir()
    n = 200
    calls = "".join(f"\ndef f{i}(x):\n    return " + " + ".join(
        f"f{(i + k * 7 + 1) % n}(x)" for k in range(5)) + "\n" for i in range(n))
    (tmp_path / "train_gpt.py").write_text(TRAIN_GPT.replace("LOSS", LOSS_HEAD) + calls +
                                           "\nf0(1)\n")
    (tmp_path / "triton_kernels.py").write_text(TRITON_KERNELS)
    (tmp_path / "run.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node=8 train_gpt.py\n")
    read = read_paths([str(tmp_path / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    cut = [p for p in read.problems if p.cut and p.path.endswith("train_gpt.py")]
    assert cut and all(isinstance(p.line, int) and p.line > 1 for p in cut)


@pytest.mark.parametrize("gran", ["[1]", "{1, 2}", "{'a': 1}", "(1,)"])
def test_an_xtuner_granularity_that_is_no_name_is_unknown_not_a_traceback(
        tmp_path: Path, gran: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "cfg.py").write_text(
        "from xtuner.v1.float8.config import Float8Config\n"
        "from xtuner.v1.model import Qwen3MoE30BA3Config\n"
        "from xtuner.v1.train import TrainerConfig\n"
        f"f8 = Float8Config(scaling_granularity_gemm={gran}, "
        f"scaling_granularity_grouped_gemm={gran})\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config(float8_cfg=f8))\n")
    (tmp_path / "run.sh").write_text("torchrun xtuner/v1/train/cli/sft.py --config cfg.py\n")
    read = read_paths([str(tmp_path / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True and isinstance(values["intent.recipe"], Unknown)


@pytest.mark.parametrize("nodes, want", [("\u00b2", None), ("\u2463", None), ("1e3", None),
                                         ("\u0663", 3), ("-1", -1), ("2", 2)])
def test_megatron_bridge_launcher_integers_as_argparse_takes_them(tmp_path: Path, nodes: str,
                                                                 want: int | None) -> None:
    # str.isdigit() passed "²", int() refused it, and the launch script was "could not interpret"
    from tests.frameworks.test_megatron_bridge_train import RECIPE, _job

    script = _job(tmp_path, "uv run python scripts/training/setup_experiment.py "
                            f"--nodes {nodes} --recipe {RECIPE}")
    read = read_paths([str(script)])
    got = read.facts["config.megatron_bridge.launcher.nodes"]
    assert isinstance(got, Unknown) if want is None else got == want
    assert not any(p.level == "error" for p in read.problems), [str(p) for p in read.problems]


def _trial_doc(monkeypatch: pytest.MonkeyPatch, runs: list[dict[str, Any]]) -> Any:
    from preflight.speedup import trial
    from tests.speedup.test_hostile_trialdoc import TINY

    monkeypatch.setattr(trial, "_both", lambda _req, _t: {"status": "ok", "depths": [2, 4],
                                                          "runs": runs})
    return trial.trial(TINY, backend="torchao", recipe="tensorwise", compiled=False,
                       device="cuda", depths=(2, 4))


@pytest.mark.parametrize("change", [
    {"peak_bytes": 10**400},                    # OverflowError in trial._side
    {"twin_s": 1e308},                          # "the host needs inf ms", a verdict of it
    {"median_s": 1e308},
])
def test_a_trial_document_with_absurd_sizes_is_a_reason(monkeypatch: pytest.MonkeyPatch,
                                                        change: dict[str, Any]) -> None:
    from tests.speedup.test_hostile_trialdoc import _good

    runs = _good()
    runs[0] = {**runs[0], **change}
    report = _trial_doc(monkeypatch, runs)
    assert report.speedup is None and not report.verdict
    assert report.why_not.startswith("no trial: the trial child's result is not usable")


@pytest.mark.parametrize("loop", [
    'P=bf16\nuntil [ "$P" = bf16 ]; do ' + FP8 + "; done",
    "while false; do " + FP8 + "; done",
])
def test_a_loop_body_that_never_runs_sets_nothing(tmp_path: Path, loop: str) -> None:
    assert _megatron(tmp_path, loop) is not True


def test_a_jsonargparse_cli_that_never_runs_binds_nothing() -> None:
    from preflight.reading.pysource import Module, parse

    src = ("import jsonargparse\n\ndef main(fp8: bool = False):\n    record(fp8)\n\n"
           "if False:\n    jsonargparse.CLI(main)\nmain()\n")
    m = Module("x.py", parse("x.py", src), ("--fp8", "true"))
    assert next(c for c, _ in m.calls() if c.name == "record").args == (False,)
