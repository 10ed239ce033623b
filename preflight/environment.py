"""Is the environment judged the training environment? Packages the job needs but lacks here.

Why (issue 12, "no false all-clear"): a check on a CI runner, a laptop or a login node sees the
core install only. A package that is *absent* reads as "the job does not use it", so every rule
that compares ``pkg.X.version`` stayed quiet: 76 version rules passed silently while the same job
with the training node's versions fired 7 findings. This module tells the two apart:

- :func:`needed_packages` says which distributions the job's own configs ask for (the framework
  of each config read, ``intent.backend``, ``intent.distributed``), each with the fact that asks;
- :func:`judge` finds those absent from the facts, and returns the ``pkg.X.version`` facts to set
  to ``Unknown("not installed here: ...")`` (which makes every rule about them *undetermined*
  with that reason, no per-rule change) plus an :class:`EnvironmentJudged` record for the report;
- :func:`pinned` gives instead the version the job pins in its own files (``config.pins.<dist>``:
  its container's release notes, a pip pin) for such a package, with the pin's source.

Where the check runs (issue 24 item 2, "no red on a laptop"): one model with three places,
the fact ``host.place`` (:func:`judge_place`):

- ``training-node``: a GPU is visible to a probe of the machine judged (this one, or the one a
  snapshot was taken on). What is missing or broken there breaks the job: errors stay errors.
- ``planning``: no GPU was probed (none there, or GPUs only assumed with ``--assume``): a
  laptop, a login node, a plan for another machine;
- ``ci-runner``: the same, where a CI system's variable is set (``CI``, ``GITHUB_ACTIONS`` ...).

Off the training node, findings that only hold where the job trains become warnings with the
reason (:func:`off_node`), unless ``--strict``: built-in findings the catalogue marks
``training_node_only`` (an import that fails here) and findings whose evidence is a probed fact
about this machine's build of the stack (``cuda.*``: a CPU-only torch, its CUDA build;
``import.*``: an import that fails here). Versions of installed packages are not in that set:
a venv usually pins the job's versions, while the torch *build* a laptop or runner installs
(CPU, another CUDA) is chosen for that machine. A missing package is an import error only on the
training node (:func:`blocks_import`). No rule id is special-cased: rules may also read
``host.place`` themselves.

Pure functions over a facts mapping: the API applies the result (``preflight.api``); rendering
only reads :meth:`EnvironmentJudged.to_dict`. A value the user assumed (``--assume pkg.X=V``,
or ``=none`` to plan it uninstalled) is never overridden.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from preflight.builtin_findings import BUILTIN
from preflight.facts import Unknown, reason_head
from preflight.findings import Evidence, Finding, Fix, Severity

ENV_RULE_ID = "FP8D-ENV-NOT-TRAINING"
"""The built-in finding: the environment judged is not (or may not be) the training environment."""

TRAINING_NODE, PLANNING, CI_RUNNER = PLACES = ("training-node", "planning", "ci-runner")
"""The values of ``host.place`` (registry/host.py)."""
PLACE_TEXT = {
    TRAINING_NODE: "the training node (a GPU is visible)",
    PLANNING: "a planning run (no GPU visible; GPUs assumed or none)",
    CI_RUNNER: "a CI runner (no GPU visible)",
}
# Variables CI systems set (GitHub Actions, GitLab, Buildkite, Jenkins, Azure, CircleCI,
# TeamCity, Bitbucket, Travis; most also set CI=true).
_CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD",
            "CIRCLECI", "TEAMCITY_VERSION", "BITBUCKET_BUILD_NUMBER", "TRAVIS")
MACHINE_BUILD_FACTS = ("cuda.", "import.")
"""Facts about the build of the stack installed on the machine probed (see the module doc)."""
OFF_NODE_TAG = "training-node-only"

# What each framework ships as and imports is its record's (preflight/frameworks/<kind>.py:
# distributions, requires, runs_on, from_source); the registry is loaded only once a job was read.
BACKEND_PACKAGES: dict[str, tuple[str, ...]] = {
    "te": ("transformer-engine",),
    "torchao": ("torchao",),
    "msamp": ("ms-amp",),
}
# FP8 with no backend named (accelerate's mixed_precision fp8) picks whichever is installed.
ANY_FP8_BACKEND = ("transformer-engine", "torchao", "ms-amp")


def from_source_ok() -> frozenset[str]:
    """Distributions often run from a source checkout (Megatron-LM's pretrain_gpt.py, torchtitan's
    train.py, NeMo containers): their absence does not prove the job cannot import them."""
    from preflight.frameworks import FRAMEWORKS

    return frozenset(d for f in FRAMEWORKS if f.from_source for d in f.distributions)


@dataclass(frozen=True)
class Need:
    """Distributions the job needs (any one of ``dists`` will do), and the fact that says so."""

    dists: tuple[str, ...]
    why: str
    source: str | None = None

    def label(self) -> str:
        return " or ".join(self.dists)


@dataclass(frozen=True)
class EnvironmentJudged:
    """What the report says about the environment it judged, near the top (a summary field)."""

    where: str                       # "this machine" | "snapshot <file>"
    training: bool | None            # True: looks like the training environment; None: cannot tell
    missing: tuple[Need, ...] = ()   # packages the job needs that are not installed there
    reasons: tuple[str, ...] = ()    # why it is not (or may not be) the training environment
    place: str = PLANNING            # host.place: training-node | planning | ci-runner

    @property
    def gpu_node(self) -> bool:
        """A GPU was probed there: a job run there would fail on what is missing."""
        return self.place == TRAINING_NODE

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "place": self.place,
            "is_training_environment": self.training,
            "missing_packages": [{"packages": list(n.dists), "needed_because": n.why,
                                  "source": n.source} for n in self.missing],
            "reasons": list(self.reasons),
        }


def _source(facts: Mapping[str, Any], name: str) -> str | None:
    prov = getattr(facts, "provenance", None)
    return prov.get(name) if isinstance(prov, Mapping) else None


def needed_packages(facts: Mapping[str, Any]) -> list[Need]:
    """The distributions the job's configs ask for; empty when no job config was read."""
    kinds = facts.get("config.kinds")
    if not isinstance(kinds, list) or not kinds:
        return []
    from preflight.frameworks import BY_KIND

    needs = [Need(("torch",), "every job the configs describe trains with PyTorch")]
    stack = facts.get("intent.stack")
    if not isinstance(stack, list):       # no intent derived: what the records say
        stack = list(kinds)
        for kind in stack:
            fw = BY_KIND.get(kind)
            stack.extend(b for b in (fw.runs_on if fw else ()) if b not in stack)
    for kind in stack:
        fw = BY_KIND.get(kind)
        read = kind in kinds
        if fw is None or (not read and fw.from_source):
            continue    # a base run from a checkout the wrapper ships (NeMo's Megatron-LM)
        why = f"the job has a config file for {kind}" if read else f"the job runs on {kind}"
        if fw.distributions:
            needs.append(Need(fw.distributions, why, "config.kinds" if read else "intent.stack"))
        for dist in fw.requires:
            needs.append(Need((dist,), f"{why}, which runs on {dist}", "config.kinds"))
    backend = facts.get("intent.backend")
    fp8 = facts.get("intent.fp8")
    src = _source(facts, "intent.backend")
    if isinstance(backend, str) and backend in BACKEND_PACKAGES:
        needs.append(Need(BACKEND_PACKAGES[backend], f"intent.backend is {backend}", src))
    elif fp8 is True and not isinstance(backend, str):
        # accelerate (and what runs on it) picks whichever FP8 backend is installed
        needs.append(Need(ANY_FP8_BACKEND, "FP8 with no backend named: one of these is picked "
                          "from what is installed", _source(facts, "intent.fp8")))
    if facts.get("intent.distributed") == "deepspeed":
        needs.append(Need(("deepspeed",), "intent.distributed is deepspeed",
                          _source(facts, "intent.distributed")))
    # One entry per distribution set (a deepspeed config and intent.distributed name one need).
    seen: dict[tuple[str, ...], Need] = {}
    for need in needs:
        seen.setdefault(need.dists, need)
    return list(seen.values())


def _installed(facts: Mapping[str, Any], dist: str) -> bool:
    """Present at all (a version string, or Unknown from a probe that could not read it)."""
    return f"pkg.{dist}.version" in facts


def not_installed_reason(dist: str, where: str) -> str:
    """The reason an absent needed package makes its rules undetermined (issue 12 wording)."""
    place = "here" if where == "this machine" else f"in the {where}"
    return (f"{dist} is not installed {place}: run on the training node, pass --snapshot from "
            f"it, or --assume pkg.{dist}=VERSION")


PINS = "config.pins."
"""``config.pins.<dist>``: a version the job's own files pin (the NeMo container it names, a
``pip install X==V`` line; frameworks/nemo_images.py), with the file and line."""


def _pins(facts: Mapping[str, Any]) -> dict[str, str]:
    return {k[len(PINS):]: v for k, v in facts.items()
            if k.startswith(PINS) and isinstance(v, str) and v}


def pinned(facts: Mapping[str, Any], planned: frozenset[str] = frozenset()
           ) -> tuple[dict[str, str], dict[str, str]]:
    """``(pkg.X.version -> the job's pin, its provenance)`` for each distribution the judged
    environment lacks and the user did not plan (``--assume`` wins, then what is installed): the
    job says what it runs with, so its version rules decide instead of being undetermined."""
    values: dict[str, str] = {}
    prov: dict[str, str] = {}
    for dist, version in _pins(facts).items():
        if _installed(facts, dist) or dist in planned:
            continue
        values[f"pkg.{dist}.version"] = version
        prov[f"pkg.{dist}.version"] = _source(facts, PINS + dist) or "pinned by the job"
    return values, prov


def running_in_ci(environ: Mapping[str, str]) -> bool:
    """True when a CI system's variable is set (to anything but an empty, ``0`` or ``false``)."""
    return any(environ.get(v, "").strip().lower() not in ("", "0", "false") for v in _CI_VARS)


def judge_place(facts: Mapping[str, Any], *, ci: bool = False) -> str:
    """``host.place``: the training node when a probe of the machine judged saw a GPU (not an
    ``--assume``), else a CI runner (``ci``) or a planning run. ``--assume host.place=...``
    wins (a GPU node whose driver cannot be asked is still the training node)."""
    said = facts.get("host.place")
    if said in PLACES and _source(facts, "host.place") == "assume":
        return str(said)
    gpus = facts.get("gpu.count")
    probed = _source(facts, "gpu.count") != "assume"
    if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0 and probed:
        return TRAINING_NODE
    return CI_RUNNER if ci else PLANNING


def judge(facts: Mapping[str, Any], where: str, planned: frozenset[str] = frozenset(),
          *, ci: bool = False) -> tuple[dict[str, Unknown], EnvironmentJudged]:
    """``(pkg.X.version -> Unknown for needed, absent X; the record for the report)``.

    ``planned``: distributions the user assumed (``--assume pkg.X=V`` or ``=none``); their
    presence or absence is the plan, never "not installed here". ``ci``: this run is on a CI
    runner (:func:`running_in_ci`; the caller knows whether the facts are this machine's).
    """
    missing = [n for n in needed_packages(facts)
               if not any(_installed(facts, d) or d in planned or d in _pins(facts)
                          for d in n.dists)]
    unknowns = {f"pkg.{d}.version": Unknown(not_installed_reason(d, where))
                for n in missing for d in n.dists}
    # megatron-core / torchtitan / NeMo often run from a source checkout: their absence as a
    # distribution leaves their version rules undetermined but says nothing about the machine.
    hard = [n for n in missing if not set(n.dists) <= from_source_ok()]
    reasons = [f"not installed: {n.label()} ({n.why})" if n in hard else
               f"not installed as a package: {n.label()} ({n.why}; fine when the job runs it "
               "from a source checkout, but its version rules cannot be decided)"
               for n in missing]
    gpus = facts.get("gpu.count")
    has_torch = isinstance(facts.get("pkg.torch.version"), str)
    has_gpu = isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0
    fp8_without_gpu = facts.get("intent.fp8") is True and not has_gpu
    if fp8_without_gpu:
        # An FP8 job trains on a GPU: where none is seen (none there, or no driver to ask),
        # this is not the machine it trains on, whatever else is installed.
        # The reason's head only: the whole NVML search (10 lines on a laptop) is shown once,
        # under the GPU fact, not at the top of every report (issue 24 item 5).
        reasons.append(f"no GPU is visible ({reason_head(gpus.reason)})"
                       if isinstance(gpus, Unknown) else "no GPU is visible")
    place = judge_place(facts, ci=ci)
    if hard or fp8_without_gpu:
        training: bool | None = False
    elif missing or not needed_packages(facts) or place != TRAINING_NODE or not has_torch:
        training = None      # no job read, or no GPU facts: nothing says either way
    else:
        training = True
    return unknowns, EnvironmentJudged(where, training, tuple(missing), tuple(reasons), place)


def blocks_import(judged: EnvironmentJudged) -> list[Need]:
    """Missing needs a job run in the judged environment would fail to import: an error on the
    training node only (an assumed GPU beside a laptop's torch is a plan, not a node)."""
    if judged.place != TRAINING_NODE:
        return []
    return [n for n in judged.missing if not set(n.dists) <= from_source_ok()]


def environment_finding(judged: EnvironmentJudged, facts: Mapping[str, Any]) -> Finding | None:
    """The built-in finding that says, near the top, the environment judged is not the training
    environment; None when nothing says so.

    A warning, since the check usually runs elsewhere on purpose (CI, a login node); an error
    where GPUs and torch are present but a package the job imports is not: a job started there
    would fail at import.
    """
    if judged.training is not False and not judged.missing:
        return None
    fatal = blocks_import(judged)
    lines = "; ".join(judged.reasons)
    if judged.missing:
        dists = [d for n in judged.missing for d in n.dists]
        example = " ".join(f"--assume pkg.{d}=VERSION" for d in dists[:2])
        verdict = "is not" if judged.training is False else "may not be"
        message = (f"The environment judged ({judged.where}) {verdict} the training "
                   f"environment: {lines}. Rules about these packages are undetermined, not "
                   "passed.")
        if fatal:
            message += (" A GPU is visible here, so if the job trains here it fails to import "
                        f"{', '.join(n.label() for n in fatal)}.")
        elif judged.place != TRAINING_NODE and any(
                not set(n.dists) <= from_source_ok() for n in judged.missing):
            message += (f" A warning, not an error: this is {PLACE_TEXT[judged.place]}, not the "
                        "node the job trains on; there, a missing package fails the import "
                        "(--strict fails this check).")
        fix = Fix("Run fp8-doctor on the training node, or pass --snapshot FILE written there "
                  f"by `fp8-doctor snapshot`, or plan its versions: {example}.")
    else:
        message = (f"The environment judged ({judged.where}) is not the training environment: "
                   f"{lines}. GPU rules and the smoke step say nothing about the training node.")
        fix = Fix("Run fp8-doctor on the training node, or pass --snapshot FILE written there "
                  "by `fp8-doctor snapshot`; --strict fails the check when the smoke step "
                  "could not run.")
    prov = getattr(facts, "provenance", {}) or {}
    evidence = tuple(Evidence(f"pkg.{d}.version", Unknown(not_installed_reason(d, judged.where)),
                              n.source) for n in judged.missing for d in n.dists)
    if "gpu.count" in facts:
        evidence += (Evidence("gpu.count", facts["gpu.count"], prov.get("gpu.count")),)
    return BUILTIN[ENV_RULE_ID].make(
        message, fix,
        detail=None if judged.training is False else "packages the job needs are missing there",
        severity=Severity.ERROR if fatal else Severity.WARNING,
        evidence=evidence,
        tags=("environment",),
    )


def training_node_only(finding: Finding) -> bool:
    """The finding holds only where the job trains (module doc): its catalogue entry says so,
    or its evidence is a probed fact about this machine's build of the stack."""
    entry = BUILTIN.get(finding.rule_id)
    if entry is not None and entry.training_node_only:
        return True
    return any(e.fact.startswith(MACHINE_BUILD_FACTS) and e.source != "assume"
               for e in finding.evidence)


def off_node(findings: Sequence[Finding], judged: EnvironmentJudged | None, *,
             strict: bool = False) -> tuple[Finding, ...]:
    """``findings`` with the errors that hold only on the training node turned into warnings
    with the reason, when the place judged is not the training node (``--strict``: unchanged,
    they still fail the check)."""
    if judged is None or judged.place == TRAINING_NODE or strict:
        return tuple(findings)
    note = (f" Not an error here: this check ran on {PLACE_TEXT[judged.place]}, and this holds "
            "on the machine the job trains on; run there, or pass --snapshot from there "
            "(--strict keeps it an error).")
    return tuple(replace(f, severity=Severity.WARNING, message=f.message + note,
                         tags=(*f.tags, OFF_NODE_TAG))
                 if f.severity is Severity.ERROR and training_node_only(f) else f
                 for f in findings)


LIVE_CPU_ID = "FP8D-ENV-FP8-ON-CPU"


def live_environment(facts: Any) -> tuple[Any, list[Finding]]:
    """``facts`` plus this process's packages and allow-listed settings, and the findings about
    them, for ``preflight.inspect`` (issue 12: its environment block said "FP8 libraries none
    installed" beside torchao). Only the runtime rules judge these facts there.

    importlib.metadata and the environment only: nothing imported, nothing native loaded. The
    ``runtime.expect_fp8_from`` / ``_off`` / ``inspect_point`` facts are what rule messages say;
    a callback replaces inspect's defaults with its own terms.
    """
    from preflight.probes.base import guarded
    from preflight.probes.packages import probe_packages
    from preflight.probes.runtime import probe_runtime

    for name, probe in (("packages", probe_packages), ("runtime", probe_runtime)):
        result = guarded(name, probe)
        new = {k: v for k, v in result.facts.items() if k not in facts}
        facts = facts.merged(new, result.provenance, source=result.name)
    return facts, [f for f in (live_finding(facts),) if f is not None]


def live_finding(facts: Mapping[str, Any]) -> Finding | None:
    """FP8 expected but the model lives on the CPU: say so (issue 12: an HF run with
    ACCELERATE_MIXED_PRECISION=fp8 on a CPU reported 0 errors and nothing else)."""
    devices = facts.get("runtime.model.device_types")
    if facts.get("runtime.expect_fp8") is not True or devices != ["cpu"]:
        return None
    return BUILTIN[LIVE_CPU_ID].make(
        f"FP8 is expected ({facts.get('runtime.expect_fp8_from')}) but every parameter "
        "of the inspected model is on the CPU: whatever FP8 modules it holds, no GPU FP8 "
        "GEMM runs here, so this inspection says nothing about FP8 on the training GPU.",
        Fix("Inspect the run on the training GPU node (the model moved to CUDA), or "
            f"{facts.get('runtime.expect_fp8_off')} for a CPU dry run."),
        evidence=(Evidence("runtime.model.device_types", devices, "inspect"),
                  Evidence("runtime.expect_fp8", True, "inspect")),
        tags=("environment", "runtime"),
    )
