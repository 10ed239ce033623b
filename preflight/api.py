"""The pipeline behind ``fp8-doctor check`` and ``preflight.check``: facts -> intent -> rules -> report.

Collection (probes, config readers, snapshot, assumptions, smoke step), evaluation (the rule
engine; the Report built in ``evaluation.py``, :func:`evaluate_facts` re-exported here) and
rendering stay in their own packages; this module only sequences them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.builtin_findings import config_problem, no_job_read, probe_crashed
from preflight.errors import UserInputError
from preflight.evaluation import Progress, _silent, evaluate_facts
from preflight.facts import Facts
from preflight.findings import FailOn, Finding
from preflight.preflight_error import PreflightError
from preflight.probes.base import ProbeResult, ProbeStatus
from preflight.report import Report

if TYPE_CHECKING:
    from preflight.environment import EnvironmentJudged


# What ``check`` / ``assert_ready`` accept for ``paths`` and ``rules_paths``: one path, or several.
PathsArg = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


@dataclass(frozen=True)
class CheckOptions:
    """Everything that shapes one check run (the CLI flags, as data)."""

    paths: tuple[str, ...] = ()
    kind: str | None = None
    snapshot: str | None = None
    assume: Mapping[str, str] | None = None
    smoke: bool | None = None          # None = auto (FP8-capable GPU and torch present)
    smoke_options: Any = None          # preflight.smoke.SmokeOptions, when given
    deep: bool = False                 # also run the child-process import probe
    rules_paths: tuple[str, ...] = ()  # rule packs: added to the bundled rules
    fail_on: FailOn | str = FailOn.ERROR
    strict: bool = False               # undetermined rules / an unrun FP8 smoke step fail too
    bundled_rules: bool = True         # False: rules_paths replace the bundled rule base
    ignore: tuple[str, ...] = ()       # rule ids dropped from the report
    baseline: str | None = None        # accepted findings: reported as baselined, never failing
    notices: tuple[Any, ...] = ()      # ConfigProblems found before the run (an untrusted
                                       # pyproject.toml skipped: preflight/trust.py)


def collect_facts(options: CheckOptions, progress: Progress = _silent
                  ) -> tuple[Facts, tuple[ProbeResult, ...], list[Finding], list[str]]:
    """Probe (or replay), read configs, apply assumptions, derive intent.

    Returns the facts, the probe results, findings that arise outside the rules (unreadable
    config files, crashed probes) and a list of the inputs used, for the report header.
    """
    from preflight import intent
    from preflight.assume import apply_assumptions
    from preflight.base.isolate import add_job_roots
    from preflight.jobs.defaults import default_paths
    from preflight.probes import collect_all
    from preflight.redact import MASK, looks_secret

    # Children (import probe, smoke, speedup) get no PYTHONPATH entry inside the job (issue 21)
    add_job_roots(options.paths)
    inputs: list[str] = []
    extra: list[Finding] = [config_problem(p) for p in options.notices]
    probes: tuple[ProbeResult, ...] = ()
    if options.snapshot:
        progress(f"replaying snapshot {options.snapshot}")
        from preflight import snapshot  # with datetime, only to replay one

        # New config paths replace what the snapshot's own configs said, not layer over it.
        facts, stored = snapshot.load(options.snapshot, drop_job=bool(options.paths))
        extra.extend(stored)
        inputs.append(f"snapshot: {options.snapshot}")
    else:
        progress("probing this machine")
        probes = tuple(collect_all(deep=options.deep))
        facts = Facts()
        for result in probes:
            facts = facts.merged(result.facts, result.provenance, source=result.name)
            if result.status is ProbeStatus.CRASHED:
                extra.append(probe_crashed(result))
        from preflight.import_findings import import_failures

        extra.extend(f for result in probes for f in import_failures(result))

    paths = list(options.paths)
    if not paths and not options.snapshot:
        paths = default_paths()
        if paths:
            inputs.append(f"default config: {', '.join(paths)}")
    if paths:
        progress(f"reading {len(paths)} config path(s)")
        from preflight.jobs.read import read_paths  # the readers, only when there is a job

        read = read_paths(paths, kind=options.kind)
        facts = facts.merged(read.facts, read.provenance, source="config")
        extra.extend(config_problem(p) for p in read.problems)
        inputs.extend(f"{kind}: {path}" for path, kind in read.files)

    if options.assume:
        _refuse_unlisted_env(options.assume)
        facts = apply_assumptions(facts, dict(options.assume))
        # Inputs are shown in every format: an assumed value that looks secret is shown masked.
        inputs.extend(f"assume {k}={MASK if looks_secret(k, v) else v}"
                      for k, v in options.assume.items())

    # intent.* is derived last so a planned environment (--assume) is seen by the derivation;
    # an intent.* fact the user assumed explicitly is never overwritten.
    values, prov = intent.derive(facts)
    values = {k: v for k, v in values.items() if facts.source(k) != "assume"}
    facts = facts.merged(values, prov, source="intent")
    # What really runs on this machine (effective.*: the recipe a backend picks, the token
    # divisibility it needs) depends on intent and the machine, so it comes after both.
    from preflight import effective

    facts = effective.apply(facts)
    return facts, probes, extra, inputs


def _as_paths(value: Any, name: str) -> tuple[str, ...]:
    """``paths`` / ``rules_paths`` as a tuple of str; one str or os.PathLike is one path.

    Why: a str is itself iterable, so ``tuple("job.yaml")`` made one "path" per character (and
    ``"/"`` the filesystem root). Anything that is neither a path nor an iterable of paths is a
    programming error, so it is a TypeError rather than a finding.
    """
    if isinstance(value, (str, os.PathLike)):
        value = (value,)
    elif isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a path (str or os.PathLike) or a list of paths, "
                        f"not {type(value).__name__}")
    out = []
    for item in value:
        path = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise TypeError(f"{name} must hold paths (str or os.PathLike), not "
                            f"{type(item).__name__}: {item!r}")
        out.append(path)
    return tuple(out)


def check(paths: PathsArg = (), *, smoke: bool | None = False,
          assume: Mapping[str, str] | None = None, snapshot: str | None = None,
          kind: str | None = None, deep: bool = False, fail_on: FailOn | str = FailOn.ERROR,
          rules_paths: PathsArg = (), smoke_options: Any = None, strict: bool = False,
          bundled_rules: bool = True, ignore: Sequence[str] = (), baseline: str | None = None,
          progress: Progress = _silent) -> Report:
    """Run the whole check and return a :class:`Report` (never raises for findings).

    ``paths`` (and ``rules_paths``) is one path (a str or os.PathLike) or a list of them; other
    types raise TypeError. ``strict``: a rule left undetermined (at or above ``fail_on``) and,
    where the job asks for FP8, a smoke step that could not run, fail the check too.
    ``rules_paths`` are rule packs added to the bundled rules (``bundled_rules=False``: instead
    of them); ``ignore`` drops rule ids; ``baseline`` is a file of accepted findings.
    """
    if isinstance(ignore, str):
        ignore = (ignore,)
    options = CheckOptions(_as_paths(paths, "paths"), kind, snapshot, assume, smoke,
                           smoke_options, deep, _as_paths(rules_paths, "rules_paths"),
                           FailOn.parse(fail_on), strict, bundled_rules, tuple(ignore), baseline)
    return run_check(options, progress)


def run_check(options: CheckOptions, progress: Progress = _silent) -> Report:
    """:func:`check` with its options as one value (what the CLI calls)."""
    from preflight import smoke as smoke_mod
    from preflight.base.isolate import add_job_roots

    fail_on = FailOn.parse(options.fail_on)
    # Before any child starts: none gets a PYTHONPATH entry inside the job (issue 21 item 1).
    add_job_roots(options.paths)
    # The smoke children start now and import torch / TE while the static check runs; they wait
    # for their request, or are ended below when the facts say no (issue 26; smoke/parallel.py).
    early = None if options.snapshot else smoke_mod.prestart(options.smoke_options, options.smoke)
    try:
        return _run_check(options, progress, fail_on, early)
    finally:
        if early is not None:
            early.cancel()


def _run_check(options: CheckOptions, progress: Progress, fail_on: FailOn, early: Any) -> Report:
    from preflight import smoke as smoke_mod

    facts, probes, extra, inputs = collect_facts(options, progress)

    smoke_details: dict[str, Any] | None = None
    requested = options.smoke
    if options.snapshot and requested is None:
        # The facts describe another machine: this one's GPU proves nothing about it.
        want, why_not = False, "skipped: facts replayed from a snapshot, not this machine"
    else:
        device = getattr(options.smoke_options, "device", None) or "cuda"
        want, why_not = smoke_mod.should_run(facts, requested, device)
    if want:
        from preflight.engine.loader import prewarm

        warm = prewarm(options.rules_paths, options.bundled_rules)   # while the children run
        progress("running the FP8 smoke step (child process)")
        outcome = smoke_mod.run(facts, options.smoke_options, progress=progress, early=early)
        if warm is not None:
            warm.join()
        facts = facts.merged(outcome.facts, source="smoke")
        smoke_details = outcome.details
    else:
        facts = facts.merged({"smoke.ran": False, "smoke.skip_reason": why_not}, source="smoke")
        if options.strict and facts.get("intent.fp8") is True and requested is not False:
            from preflight.strict import smoke_finding

            extra.append(smoke_finding(why_not))

    facts, judged, env_finding = _judge_environment(facts, options)
    if env_finding is not None:
        extra.insert(0, env_finding)
    job_read = job_was_read(facts)
    if not job_read and not options.paths and not any(f.rule_id.startswith("FP8D-CFG-")
                                                      for f in extra):
        # A machine-only check must say that no job was judged (issue 24 item 1): never the
        # green "no known problem" of a job checked and found clean. A config that was found
        # but could not be used (a replayed snapshot's) already says so, as an error.
        extra.append(no_job_read(options.strict))
    progress("evaluating rules")
    return evaluate_options(facts, options, extra=extra, probes=probes, smoke=smoke_details,
                            inputs=inputs, progress=progress, environment=judged,
                            job_read=job_read)


def evaluate_options(facts: Facts, options: CheckOptions, *, extra: Sequence[Finding] = (),
                     probes: Sequence[ProbeResult] = (), smoke: dict[str, Any] | None = None,
                     inputs: Sequence[str] = (), progress: Progress = _silent,
                     environment: EnvironmentJudged | None = None,
                     job_read: bool | None = None) -> Report:
    """:func:`evaluate_facts` with what ``options`` decide: the rule packs (added to the bundled
    rules, or instead of them), ``fail_on``, ``strict``, ``ignore`` and the baseline (read here,
    from a trusted file only). ``check`` and the multi-rank mode both end here."""
    extra = list(extra)
    accepted = None
    if options.baseline:
        from preflight.baseline import read_trusted

        accepted, skipped = read_trusted(options.baseline)
        extra.extend(config_problem(p) for p in skipped)
    packs = {"rule_packs" if options.bundled_rules else "rules_paths": options.rules_paths}
    return evaluate_facts(facts, extra=extra, probes=probes, smoke=smoke,
                          fail_on=options.fail_on, inputs=inputs, progress=progress,
                          environment=environment, strict=options.strict,
                          ignore=options.ignore, baseline=accepted, job_read=job_read, **packs)


def job_was_read(facts: Any) -> bool:
    """True when some job config was read into the facts (``config.kinds`` names one)."""
    kinds = facts.get("config.kinds")
    return isinstance(kinds, list) and bool(kinds)


def assert_ready(paths: PathsArg = (), *, smoke: bool | None = True,
                 fail_on: FailOn | str = FailOn.ERROR, strict: bool = False,
                 **kwargs: Any) -> Report:
    """Check, and raise :class:`PreflightError` when a finding reaches ``fail_on``.

    ``paths`` as in :func:`check`: one path or a list of them. ``strict=True``: undetermined
    rules, and a smoke step that could not run where the job asks for FP8, raise too.
    """
    fail_on = FailOn.parse(fail_on)
    report = check(paths, smoke=smoke, fail_on=fail_on, strict=strict, **kwargs)
    if not report.ok(fail_on):
        raise PreflightError(report, fail_on)
    return report


def _judge_environment(facts: Facts, options: CheckOptions
                       ) -> tuple[Facts, EnvironmentJudged, Finding | None]:
    """Packages the job needs but the judged environment lacks become Unknown (their rules are
    undetermined, not passed), and the report learns whether it judged the training environment.
    """
    from preflight.environment import environment_finding, judge, pinned, running_in_ci
    from preflight.probes.packages import normalize

    where = f"snapshot {options.snapshot}" if options.snapshot else "this machine"
    planned = frozenset(normalize(k[4:].removesuffix(".version"))
                        for k in (options.assume or {}) if k.startswith("pkg."))
    # A snapshot's facts are another machine's: this runner's CI variables say nothing of it.
    ci = not options.snapshot and running_in_ci(os.environ)
    unknowns, judged = judge(facts, where, planned, ci=ci)
    place = {} if facts.source("host.place") == "assume" else {"host.place": judged.place}
    pins, pin_prov = pinned(facts, planned)      # the job's own pins (frameworks/nemo_images)
    facts = facts.merged({**unknowns, **pins, **place}, pin_prov, source="environment")
    return facts, judged, environment_finding(judged, facts)


def _refuse_unlisted_env(assume: Mapping[str, str]) -> None:
    """``--assume env.X=...`` only for variables fp8-doctor would collect and may show."""
    from preflight.redact import env_allowed

    for key in assume:
        if key.startswith("env.") and not env_allowed(key[4:]):
            raise UserInputError(
                f"--assume {key}: {key[4:]} is not on fp8-doctor's environment allow-list "
                "(NVTE_*, ACCELERATE_*, selected NCCL_*, CUDA_VISIBLE_DEVICES, ...); no rule "
                "can use it and reports never show it")
