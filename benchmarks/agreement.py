"""Agreement benchmark: how often fp8-doctor agrees with a careful FP8 engineer on real jobs.

`benchmarks/realjobs/<slug>/` holds one public FP8 job of 2025-2026 each: its files under
`files/` and a `job.yaml` with the source, the environment it ran on (`assume:`), and the verdict
an engineer wrote *before* fp8-doctor was run on it (`expected:`). This script runs
`fp8-doctor check` on every job and compares.

How a job is run: its `files/` are copied into an empty temporary folder, which gets an empty
`.git` folder: the files come from one repository (`source.repo` at `source.commit`) and a user
runs fp8-doctor on a clone of it, where one config names another from the repository's top
(NeMo-RL's `defaults: ../../../grpo_math_1B.yaml`) and the read boundary takes the work tree's
top as the job root (preflight/reading/boundary.py); `python -m preflight
check <check.paths> --snapshot realjobs/_env/bare-linux.json --assume K=V ... --format json
--no-smoke --no-project-config --fail-on never` runs from another empty temporary folder (so no
pyproject.toml, accelerate default config or other checkout is picked up), with a minimal environment
(PATH, a temporary HOME, NO_COLOR), in its own process group, killed after `--timeout` seconds.
The snapshot is a Linux host with no GPU and no packages: the GPU and every package come from
the job's `assume:`, so the result does not depend on the machine the benchmark runs on.

Scoring, per job (`score`). The tool's reading of the job:
  * FP8 asked: `intent.fp8` is true, or `intent.fp8_source` is set (FP8 asked but overridden);
    false when `intent.fp8` is false without a source; unknown otherwise.
  * FP8 rollout: `intent.rollout.fp8`. The tool states it only where it read a rollout; where it
    read none (no `intent.rollout.*` fact, no `config.*` fact naming a rollout), it claims no FP8
    rollout, which meets an engineer's `rollout_fp8: false` (a job with no rollout at all, or a BF16
    one the tool did not read: either way no rollout rule may fire). A rollout stated Unknown, or
    a rollout read (its engine, its config) without its FP8, does not meet it (redteam18). From
    session 44; before, a job the tool stated no rollout for missed every `rollout_fp8: false`,
    which holdout24's engineer wrote on jobs with no rollout (9 of 420 jobs agree since,
    docs/benchmarks.md).
  * read: at least one `config.*` fact exists.
A job **agrees** when every rule in `expected.fire` fired, no rule in `expected.must_not_fire`
fired, no error-severity finding fired that the engineer did not list in `fire` or `tolerated`,
FP8 intent (and rollout intent, where the engineer stated it) was read as the engineer reads it,
and the engineer listed no scored `gaps` (knowledge a correct tool has but no rule id names).
Otherwise the outcome is the first that applies:
  * **unread**: nothing of the job was read, or its FP8 intent came out unknown while the engineer
    says whether it asks for FP8;
  * **missed** / **false alarm** / **missed + false alarm**: an expected rule (or intent, or a scored
    gap) is missing; a forbidden rule or an unlisted error fired;
  * **undetermined**: nothing wrong, but an expected rule came out undetermined instead of firing;
  * **n/a**: the engineer could not determine the verdict (`expected.determined: false`); not scored.
Built-in findings about reading files and about the environment (`FP8D-CFG-*`, `FP8D-ENV-*`,
`FP8D-PROBE-*`) do not count as false alarms: the first are how "unread" shows, the second
describe the benchmark's planned environment, not the job. One exception: an error-severity
`FP8D-CFG-UNREADABLE` in a job that was otherwise read is a false alarm, since every job file
here is valid and that finding tells the user to fix a file the job runs with.
The agreement rate is agree / scored jobs. `review.accepted` in a job.yaml lists findings the
engineer accepts as right after seeing the run (each with its reason); they give a second rate,
"after review", and never change `expected`. An accepted finding may name the scored gap it
fills (`gap:` with the gap's `what`, word for word): a rule written after the run for knowledge the
engineer listed as a gap then closes it in the second rate, when it fires.

Each job.yaml names its `set`: `tuning` (the default; the jobs the readers and rules were built
against), `holdout` (a second set collected and scored blind; the team then fixed its misses, so
it is no longer blind), `holdout2` (a third set, collected and its expectations committed before
fp8-doctor was run on it, after the `holdout` fixes; its misses were then fixed too), `holdout3`
(a fourth set, blind again, collected after the `holdout2` fixes; then fixed), `holdout4` (a
fifth set, blind, collected after the `holdout3` fixes; then fixed), `holdout5` (a sixth set,
blind, collected after the `holdout4` fixes; then fixed), `holdout6` (a seventh set, blind,
collected after the `holdout5` fixes; then fixed), `holdout7` (an eighth set, blind, collected
after the `holdout6` fixes), `holdout8` (a ninth set, blind, collected after the `holdout7`
fixes), `holdout9` (a tenth set, blind, collected after the `holdout8` fixes), `holdout10` (an
eleventh set, blind, collected after the `holdout9` fixes), `holdout11` (a twelfth set, blind,
collected after the `holdout10` fixes), `holdout12` (a thirteenth set, blind, collected after the
`holdout11` fixes), `holdout13` (a fourteenth set, blind, collected after the `holdout12` fixes), `holdout14` (a
fifteenth set, blind, collected after the `holdout13` fixes), `holdout15` (a sixteenth set, blind, collected
after the `holdout14` fixes), `holdout16` (a seventeenth set, blind, collected alongside `holdout15`), `holdout17`
(an eighteenth set, blind, with known failures), `holdout18` (a nineteenth set, blind, collected alongside
`holdout17`: jobs as users write them), `holdout19` (a twentieth set, blind, jobs as users write them, with known
failures), `holdout20` (a twenty-first set, blind, likewise), `holdout21` (a twenty-second set,
blind, likewise), `holdout22` (a twenty-third set, blind, likewise), `holdout23` (a twenty-fourth set, blind,
likewise), `holdout24` (a twenty-fifth set, blind, likewise) or `holdout25` (a twenty-sixth set,
blind, likewise). `--set` runs one set; the rates are only honest per set.

Usage: `python benchmarks/agreement.py [--only SLUG ...] [--set tuning|holdout|holdout2|holdout3|holdout4|holdout5|holdout6|holdout7|holdout8|holdout9|
holdout10|holdout11|holdout12|holdout13|holdout14|holdout15|holdout16|holdout17|holdout18|holdout19|holdout20|
holdout21|holdout22|holdout23|holdout24|holdout25] [--json FILE] [-o FILE.md] [--timeout S] [--jobs DIR]`. Exit status 0 when every job ran, 1 when a
run failed (crash, timeout, unparseable output), 2 on a malformed job.yaml.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
JOBS_DIR = HERE / "realjobs"
ENV_SNAPSHOT = JOBS_DIR / "_env" / "bare-linux.json"
NOT_SCORED = ("FP8D-CFG-", "FP8D-ENV-", "FP8D-PROBE-")
UNREADABLE = "FP8D-CFG-UNREADABLE"
SOURCE_TYPES = ("issue", "example", "reconstruction")
# "tuning": the jobs the readers and rules were developed against; "holdout": a second set built and
# scored blind, which nobody tuning the tool had seen (issue 22's held-out measurement), whose
# misses were then fixed; "holdout2": a third set, blind again, built after those fixes (and then
# fixed in turn); "holdout3": a fourth set, blind, built after the holdout2 fixes (then fixed);
# "holdout4": a fifth set, blind, built after the holdout3 fixes (then fixed); "holdout5": a sixth set,
# blind, built after the holdout4 fixes (then fixed); "holdout6": a seventh set, blind, built after the
# holdout5 fixes (then fixed); "holdout7": an eighth set, blind, built after the holdout6 fixes;
# "holdout8": a ninth set, blind, built after the holdout7 fixes; "holdout9": a tenth set, blind, built
# after the holdout8 fixes; "holdout10": an eleventh set, blind, built after the holdout9 fixes (the torchtune,
# ROLL and verl-boolean readers of that session); "holdout11": a twelfth set, blind, built after the
# holdout10 fixes (environment lookups, miles launchers, unsloth and ArcticTraining readers); "holdout12": a
# thirteenth set, blind, built after the holdout11 fixes (module launches, shell positional parameters,
# OLMo-core and the Megatron-Bridge performance launcher, axolotl RL intent); "holdout13": a fourteenth set,
# blind, built after the holdout12 fixes (Megatron flags from the launch command and ${10}+, hydra entry scripts,
# Cosmos-RL / XTuner V1 / Megatron-Bridge train.sh readers, own FP8 gates, miles env vars, axolotl vLLM).
# "holdout14": a fifteenth set, blind, built after the holdout13 fixes (the shell script-directory idiom, jsonargparse
# CLI binding, per-layer precision, ms-swift Megatron flags, Megatron-Bridge attention FP8, XTuner --model-cfg).
# "holdout15": a sixteenth set, blind, built after the holdout14 fixes (prime-rl, ColossalAI, cross-module module
# objects, unsloth FP8 rollout, MXFP8 rollout below sm_100).
# "holdout16": a seventeenth set, blind, collected alongside holdout15 from other sources (OLMo-core, SkyRL,
# NeMo-Automodel, verl TensorRT-LLM rollouts, torchtitan via a torchao issue, OpenRLHF / AReaL / axolotl / TRL controls,
# a user's LLaMA-Factory FP8 harness).
# "holdout17": an eighteenth set, blind, built after the session-37 fixes with known failures in it (issue threads of
# NeMo-RL, slime, torchtitan / torchao, SkyRL, Megatron-Bridge with expected errors) and BF16 controls.
# "holdout18": a nineteenth set, blind, collected alongside holdout17 (eval18) from jobs as users write them: a thesis
# repository's accelerate + Transformer Engine scripts, AMD's ROCm FSDP benchmark, a GPT-NeoX research config, a user's
# nanoGPT FP8 issue, a torchtitan float8 issue.
# "holdout19": a twentieth set, blind, built after the session-38 fixes (eval20) from jobs as users write them (forks,
# research repos, wrapper configs, FP8 RL rollouts) and issue threads with expected errors, plus BF16 controls.
# "holdout20": a twenty-first set, blind, built after the session-39 fixes (eval21) from jobs as users write them
# (research and blog repositories, wrapper scripts, RL configs) and issue threads with expected errors, plus controls.
# "holdout22": a twenty-third set, blind, built for session 41 (eval23) from repositories no earlier set used (an AWS
# test-case repository, AMD's Megatron-LM fork, RL frameworks and forks, a Windows diffusion trainer) and issue / PR
# threads with expected errors, plus BF16 and FP8-storage-only controls.
# "holdout23": a twenty-fourth set, blind, built for session 42 (eval24) from repositories no earlier set used (a cloud
# vendor's recipe repository, NVIDIA's benchmarking harness, companies' torchtitan forks, RL forks, a research
# Lightning script, a video-LoRA trainer) and issue / PR threads with expected errors, plus BF16 controls.
# "holdout24": a twenty-fifth set, blind, built for session 43 (eval25) from repositories no earlier set used (a paper's
# FP8 recipe repository, NVIDIA's DGX Cloud benchmarking recipes, MLPerf training results, a biology recipe repository, a
# research training repo) and issue threads with expected errors, plus BF16 controls.
# "holdout25": a twenty-sixth set, blind, built for session 44 (eval26): jobs as users write them (TE docs examples run
# on consumer and Ada GPUs, unsloth's AMD notebooks, LoRA trainers that store weights in FP8, issue threads with
# expected errors), plus controls.
SETS = ("tuning", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7",
        "holdout8", "holdout9", "holdout10", "holdout11", "holdout12", "holdout13", "holdout14", "holdout15",
        "holdout16", "holdout17", "holdout18", "holdout19", "holdout20", "holdout21",
        "holdout22", "holdout23", "holdout24", "holdout25")
OUTCOMES = ("agree", "missed", "false alarm", "missed + false alarm", "unread", "undetermined",
            "n/a", "error")


class JobError(ValueError):
    """A job.yaml that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Expected:
    asks_fp8: bool | None
    rollout_fp8: bool | None
    fire: tuple[str, ...]
    must_not_fire: tuple[str, ...]
    tolerated: tuple[str, ...]
    scored_gaps: tuple[str, ...]
    determined: bool


@dataclass(frozen=True)
class Job:
    slug: str
    title: str
    root: Path
    source: dict[str, Any]
    assume: dict[str, str]
    paths: tuple[str, ...]
    kind: str | None
    reader_needed: str
    expected: Expected
    accepted: tuple[str, ...] = ()
    set: str = "tuning"
    fills: tuple[tuple[str, str], ...] = ()     # (accepted rule id, the scored gap it fills)


def _ids(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith("FP8D-")
                                              for v in value):
        raise JobError(f"{where}: expected a list of FP8D-... rule ids")
    return tuple(value)


def _tri(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise JobError(f"{where}: expected true, false or null")


def _expected(raw: Any, where: str) -> Expected:
    if not isinstance(raw, dict):
        raise JobError(f"{where}: expected: must be a mapping")
    for key in ("written", "verdict", "fire", "must_not_fire"):
        if key not in raw:
            raise JobError(f"{where}: expected.{key} is missing")
    gaps = raw.get("gaps") or []
    if not isinstance(gaps, list) or not all(isinstance(g, dict) and "what" in g for g in gaps):
        raise JobError(f"{where}: expected.gaps must be a list of {{what, scored}}")
    fire = _ids(raw["fire"], f"{where}: expected.fire")
    forbidden = _ids(raw["must_not_fire"], f"{where}: expected.must_not_fire")
    tolerated = _ids(raw.get("tolerated"), f"{where}: expected.tolerated")
    if set(fire) & set(forbidden) or set(fire) & set(tolerated) or set(forbidden) & set(tolerated):
        raise JobError(f"{where}: a rule id is in two of fire / must_not_fire / tolerated")
    return Expected(
        asks_fp8=_tri(raw.get("asks_fp8"), f"{where}: expected.asks_fp8"),
        rollout_fp8=_tri(raw.get("rollout_fp8"), f"{where}: expected.rollout_fp8"),
        fire=fire, must_not_fire=forbidden, tolerated=tolerated,
        scored_gaps=tuple(str(g["what"]) for g in gaps if g.get("scored", True)),
        determined=raw.get("determined", True) is not False)


def _source(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise JobError(f"{where}: source: must be a mapping")
    if raw.get("type") not in SOURCE_TYPES:
        raise JobError(f"{where}: source.type must be one of {', '.join(SOURCE_TYPES)}")
    url = raw.get("url")
    if not isinstance(url, str) or not url.startswith("https://github.com/"):
        raise JobError(f"{where}: source.url must cite the repository, issue or PR on github.com")
    if not isinstance(raw.get("repo"), str) or "/" not in raw["repo"]:
        raise JobError(f"{where}: source.repo must be owner/name")
    commit = raw.get("commit")
    if raw["type"] == "example" and not (isinstance(commit, str) and len(commit) == 40):
        raise JobError(f"{where}: an example must pin source.commit (40 hex digits)")
    return raw


def load_job(path: Path) -> Job:
    """The job described by ``path`` (a job.yaml); JobError when anything is missing or wrong."""
    where = str(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise JobError(f"{where}: cannot be read: {exc}") from None
    if not isinstance(raw, dict) or raw.get("schema") != 1:
        raise JobError(f"{where}: not a schema-1 job.yaml")
    if raw.get("slug") != path.parent.name:
        raise JobError(f"{where}: slug must equal the folder name {path.parent.name!r}")
    assume = raw.get("assume") or {}
    if not isinstance(assume, dict):
        raise JobError(f"{where}: assume: must be a mapping")
    check = raw.get("check") or {}
    paths = check.get("paths") if isinstance(check, dict) else None
    if not isinstance(paths, list) or not paths:
        raise JobError(f"{where}: check.paths must list the files fp8-doctor is given")
    for rel in paths:
        target = (path.parent / "files" / str(rel)).resolve()
        if not target.is_relative_to((path.parent / "files").resolve()) or not target.exists():
            raise JobError(f"{where}: check.paths names {rel!r}, not a file under files/")
    job_set = raw.get("set", "tuning")
    if job_set not in SETS:
        raise JobError(f"{where}: set must be one of {', '.join(SETS)}")
    review = raw.get("review") or {}
    entries = review.get("accepted", []) if isinstance(review, dict) else []
    accepted = [a.get("id") for a in entries]
    fills = tuple((str(a["id"]), str(a["gap"])) for a in entries if isinstance(a, dict)
                  and a.get("gap") is not None)
    gaps = [str(g["what"]) for g in (raw.get("expected") or {}).get("gaps") or []
            if isinstance(g, dict)]
    if any(gap not in gaps for _, gap in fills):
        raise JobError(f"{where}: review.accepted names a gap that expected.gaps does not list")
    return Job(slug=raw["slug"], title=str(raw.get("title", "")), root=path.parent,
               source=_source(raw.get("source"), where),
               assume={str(k): str(v) for k, v in assume.items()},
               paths=tuple(str(p) for p in paths), kind=check.get("kind"),
               reader_needed=str(raw.get("reader_needed", "")),
               expected=_expected(raw.get("expected"), where),
               accepted=_ids(accepted, f"{where}: review.accepted"), set=job_set, fills=fills)


def load_jobs(root: Path = JOBS_DIR, only: list[str] | None = None,
              job_set: str | None = None) -> list[Job]:
    """Every job under ``root`` (or those named in ``only``), of one set when ``job_set`` is given."""
    if job_set is not None and job_set not in SETS:
        raise JobError(f"no such set: {job_set} (one of {', '.join(SETS)})")
    jobs = [load_job(p) for p in sorted(root.glob("*/job.yaml")) if not p.parent.name.startswith("_")]
    if job_set is not None:
        jobs = [j for j in jobs if j.set == job_set]
    if only:
        unknown = set(only) - {j.slug for j in jobs}
        if unknown:
            raise JobError(f"no such job: {', '.join(sorted(unknown))}")
        jobs = [j for j in jobs if j.slug in only]
    return jobs


@dataclass
class Run:
    report: dict[str, Any] | None
    error: str | None
    seconds: float
    argv: list[str] = field(default_factory=list)


def command(job: Job, jobdir: Path) -> list[str]:
    argv = [sys.executable, "-m", "preflight", "check", *(str(jobdir / p) for p in job.paths),
            "--snapshot", str(ENV_SNAPSHOT), "--format", "json", "--no-smoke",
            "--no-project-config", "--fail-on", "never", "--no-redact"]
    for key, value in job.assume.items():
        argv += ["--assume", f"{key}={value}"]
    if job.kind:
        argv += ["--kind", job.kind]
    return argv


def run_job(job: Job, timeout: float = 60.0) -> Run:
    """Run fp8-doctor on ``job`` in a scratch folder; never raises for a failing run."""
    with tempfile.TemporaryDirectory(prefix=f"fp8d-agree-{job.slug}-") as tmp:
        jobdir, cwd, home = Path(tmp, "job"), Path(tmp, "cwd"), Path(tmp, "home")
        shutil.copytree(job.root / "files", jobdir)
        (jobdir / ".git").mkdir(exist_ok=True)   # the job as it sits in its repository's clone
        cwd.mkdir()
        home.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "NO_COLOR": "1", "LC_ALL": "C.UTF-8"}
        argv = command(job, jobdir)
        start = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Run(None, f"timed out after {timeout:.0f} s", time.monotonic() - start, argv)
        seconds = time.monotonic() - start
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        return Run(None, f"exit {proc.returncode}, no JSON report: {err.strip()[-400:]}",
                   seconds, argv)
    return Run(report, None, seconds, argv)


@dataclass
class Score:
    outcome: str
    asks_tool: bool | None = None
    rollout_tool: bool | None = None
    read: bool = False
    fired: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    undetermined: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)
    intent_wrong: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)


def tool_reading(report: dict[str, Any]) -> tuple[bool | None, bool | None, bool]:
    """(FP8 asked, FP8 rollout, anything read) as the report states them."""
    facts = report.get("facts") or {}
    fp8 = facts.get("intent.fp8")
    if fp8 is True or isinstance(facts.get("intent.fp8_source"), str):
        asks: bool | None = True
    else:
        asks = False if fp8 is False else None
    rollout = facts.get("intent.rollout.fp8")
    return (asks, rollout if isinstance(rollout, bool) else None,
            any(name.startswith("config.") for name in facts))


def _scored(rule_id: str) -> bool:
    return not rule_id.startswith(NOT_SCORED)


def score(exp: Expected, report: dict[str, Any], accepted: tuple[str, ...] = (),
          fills: tuple[tuple[str, str], ...] = ()) -> Score:
    """Compare one report with the engineer's expectation (see the module docstring)."""
    asks, rollout, read = tool_reading(report)
    findings = report.get("findings") or []
    fired = sorted({f["id"] for f in findings})
    undet = {u["id"] for u in report.get("undetermined") or []}
    s = Score("agree", asks, rollout, read, fired)
    missing = [r for r in exp.fire if r not in fired]
    s.undetermined = [r for r in missing if r in undet]
    s.missed = [r for r in missing if r not in undet]
    allowed = set(exp.fire) | set(exp.tolerated) | set(accepted)
    errors = {f["id"] for f in findings if f.get("severity") == "error"
              and (_scored(f["id"]) or (read and f["id"] == UNREADABLE))
              and f["id"] not in allowed}
    s.false_alarms = sorted({r for r in exp.must_not_fire if r in fired} - set(accepted) | errors)
    if exp.asks_fp8 is not None and asks is not None and asks != exp.asks_fp8:
        s.intent_wrong.append(f"FP8 asked: tool {asks}, engineer {exp.asks_fp8}")
    no_rollout_claim = not any(name.startswith("intent.rollout.") or
                               (name.startswith("config.") and "rollout" in name)
                               for name in report.get("facts") or {})
    if exp.rollout_fp8 is not None and rollout != exp.rollout_fp8 \
            and not (exp.rollout_fp8 is False and no_rollout_claim):
        s.intent_wrong.append(f"FP8 rollout: tool {rollout}, engineer {exp.rollout_fp8}")
    filled = {gap for rule, gap in fills if rule in fired and rule in accepted}
    s.gaps = [g for g in exp.scored_gaps if g not in filled]
    s.outcome = _outcome(exp, s)
    return s


def _outcome(exp: Expected, s: Score) -> str:
    if not exp.determined:
        return "n/a"
    if not s.read or (exp.asks_fp8 is not None and s.asks_tool is None):
        return "unread"
    wrong = bool(s.missed or s.intent_wrong or s.gaps)
    if wrong and s.false_alarms:
        return "missed + false alarm"
    if wrong:
        return "missed"
    if s.false_alarms:
        return "false alarm"
    return "undetermined" if s.undetermined else "agree"


def _fmt(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "?"}[value]


def _detail(s: Score) -> str:
    parts = [f"missed {', '.join(s.missed)}" if s.missed else "",
             f"undetermined {', '.join(s.undetermined)}" if s.undetermined else "",
             f"false alarm {', '.join(s.false_alarms)}" if s.false_alarms else "",
             "; ".join(s.intent_wrong), f"no rule for: {'; '.join(s.gaps)}" if s.gaps else ""]
    return "; ".join(p for p in parts if p) or "-"


def rate(results: list[tuple[Job, Run, Score, Score]], reviewed: bool = False) -> tuple[int, int]:
    scored = [r for r in results if r[2].outcome not in ("n/a",)]
    agree = sum(1 for r in scored if (r[3] if reviewed else r[2]).outcome == "agree")
    return agree, len(scored)


def markdown(results: list[tuple[Job, Run, Score, Score]], header: str) -> str:
    lines = [header, "", "| job | source | FP8 asked (eng / tool) | expected to fire | outcome "
             "| details | s |", "|---|---|---|---|---|---|---|"]
    for job, run, s, _ in results:
        exp = job.expected
        lines.append(f"| {job.slug} | {job.source['type']} | {_fmt(exp.asks_fp8)} / "
                     f"{_fmt(s.asks_tool)} | {', '.join(exp.fire) or '-'} | **{s.outcome}** | "
                     f"{run.error or _detail(s)} | {run.seconds:.1f} |")
    agree, total = rate(results)
    agree_r, _ = rate(results, reviewed=True)
    counts = {o: sum(1 for r in results if r[2].outcome == o) for o in OUTCOMES}
    lines += ["", f"**Agreement: {agree}/{total} = {100 * agree / max(total, 1):.0f}%** "
              f"(after review: {agree_r}/{total}). "
              + ", ".join(f"{o}: {n}" for o, n in counts.items() if n), ""]
    return "\n".join(lines)


def evaluate(jobs: list[Job], timeout: float) -> list[tuple[Job, Run, Score, Score]]:
    results = []
    for job in jobs:
        run = run_job(job, timeout)
        if run.report is None:
            blank = Score("error")
            results.append((job, run, blank, blank))
            continue
        results.append((job, run, score(job.expected, run.report),
                        score(job.expected, run.report, job.accepted, job.fills)))
    return results


def as_json(results: list[tuple[Job, Run, Score, Score]], seconds: float) -> dict[str, Any]:
    agree, total = rate(results)
    return {"agree": agree, "scored": total, "agreement": agree / max(total, 1),
            "agree_after_review": rate(results, reviewed=True)[0], "seconds": round(seconds, 2),
            "jobs": [{"slug": j.slug, "set": j.set, "source": j.source.get("url"),
                      "type": j.source["type"],
                      "reader_needed": j.reader_needed, "outcome": s.outcome,
                      "outcome_after_review": r.outcome, "seconds": round(run.seconds, 2),
                      "error": run.error, "asks_fp8": {"engineer": j.expected.asks_fp8,
                                                       "tool": s.asks_tool},
                      "fp8_applies_tool": (run.report or {}).get("facts", {}).get("intent.fp8")
                      if isinstance((run.report or {}).get("facts", {}).get("intent.fp8"), bool)
                      else None,
                      "read": s.read, "fired": s.fired, "missed": s.missed,
                      "undetermined": s.undetermined, "false_alarms": s.false_alarms,
                      "intent_wrong": s.intent_wrong, "gaps": s.gaps}
                     for j, run, s, r in results]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SLUG", help="run only these jobs")
    parser.add_argument("--jobs", type=Path, default=JOBS_DIR, help="folder of job folders")
    parser.add_argument("--set", dest="job_set", choices=SETS,
                        help="run only the jobs of this set (default: every job)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per job (60)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the table here")
    args = parser.parse_args(argv)
    try:
        jobs = load_jobs(args.jobs, args.only, args.job_set)
    except JobError as exc:
        print(f"agreement.py: {exc}", file=sys.stderr)
        return 2
    start = time.monotonic()
    results = evaluate(jobs, args.timeout)
    seconds = time.monotonic() - start
    sets = ", ".join(f"{n} {s}" for s, n in sorted(Counter(j.set for j in jobs).items()))
    text = markdown(results, f"{len(jobs)} jobs ({sets}), {seconds:.1f} s in all "
                             "(s = seconds per job)")
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    print(text)
    if args.json:
        args.json.write_text(json.dumps(as_json(results, seconds), indent=1) + "\n",
                             encoding="utf-8")
    return 1 if any(run.report is None for _, run, _, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
