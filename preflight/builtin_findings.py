"""The one catalogue of built-in findings: every finding that arises outside the rule files.

Why (issue 24 item 8, structure review P3): twelve built-in ids were minted in four modules and
listed by hand in a fifth (``api.BUILTIN_IDS``, 6 of the 12), so ``--ignore FP8D-CFG-REFERENCE``
was a usage error on a run where that finding did not occur. Now each id is defined here once,
with its title, usual severity and when it arises; every producer builds its findings through
:meth:`BuiltinFinding.make` (so an id that is not in :data:`BUILTIN` cannot be produced: a
KeyError in tests), and ``--ignore`` / ``rules list`` read :data:`BUILTIN_IDS`.

**Adding one** is one entry in :data:`_CATALOGUE`. A finding made from a config reader's
``ConfigProblem`` names the problem's ``code`` in ``problem_code`` and needs nothing else:
:func:`config_problem` finds the entry by that code (the reader emits
``ConfigProblem(..., code="outside_job")``, the catalogue maps ``outside_job`` to its id). Any
other producer calls ``BUILTIN["FP8D-..."].make(message, fix, ...)``.
tests/test_builtin_findings.py fails when a module holds an id that is not here, or builds a
``Finding`` by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.findings import Evidence, Finding, Fix, Location, Severity

if TYPE_CHECKING:
    from preflight.probes.base import ProbeResult


@dataclass(frozen=True)
class BuiltinFinding:
    """One built-in finding id: what it is called, how bad it usually is, when it arises."""

    id: str
    title: str
    severity: Severity
    when: str
    """When a run produces it (shown by ``rules list`` / ``rules show``)."""
    problem_code: str | None = None
    """The ``ConfigProblem.code`` that produces it (config readers), if any."""
    training_node_only: bool = False
    """It holds only on the machine where the job trains (an import that fails *here*): off that
    machine it is a warning with the reason, unless ``--strict`` (environment.py)."""

    def make(self, message: str, fix: Fix | str, *, detail: str | None = None,
             severity: Severity | None = None, evidence: tuple[Evidence, ...] = (),
             location: Location | None = None, tags: tuple[str, ...] = ()) -> Finding:
        """A finding of this id. ``detail`` specialises the title (``title: detail``) without
        renaming it; ``severity`` overrides the usual one where the situation decides."""
        return Finding(
            rule_id=self.id,
            severity=severity or self.severity,
            title=f"{self.title}: {detail}" if detail else self.title,
            message=message,
            fix=fix if isinstance(fix, Fix) else Fix(fix),
            evidence=evidence,
            confidence="verified",
            location=location,
            tags=tags,
        )


_E, _W = Severity.ERROR, Severity.WARNING
_CATALOGUE = (
    # Config files (jobs/read.py and the framework readers: ConfigProblem.code).
    BuiltinFinding("FP8D-CFG-UNREADABLE", "A config file cannot be read", _E,
                   "a config file given or found cannot be read or parsed", "unreadable"),
    BuiltinFinding("FP8D-CFG-REFERENCE", "A file the config names was not found here", _W,
                   "a config names another file (a DeepSpeed JSON, a sourced script) that is not "
                   "found where fp8-doctor looked", "reference"),
    BuiltinFinding("FP8D-CFG-NO-JOB", "No job config was read: nothing about the job was checked",
                   _E, "paths were given but no job config was read in them (an error); or no "
                   "path was given and none was found, a machine-only check (info; an error "
                   "under --strict)", "no_job"),
    # The title fits a script the launch line runs as well as a path the user named (acceptance
    # audit of issue 24 / 22 item 5: `check .` called train.py "a path given").
    BuiltinFinding("FP8D-CFG-NOT-CONFIG", "A file of the job holds no settings fp8-doctor reads",
                   _W, "a file named or run by the job (a Python script with no call a reader "
                   "knows, a notebook) holds no settings fp8-doctor reads; it is not judged, "
                   "and not called broken", "not_a_config"),
    BuiltinFinding("FP8D-CFG-DUPLICATE-KEY", "A config key is set twice; the last one wins", _W,
                   "a key is set twice in one file (an error where the framework's loader "
                   "refuses it)", "duplicate_key"),
    BuiltinFinding("FP8D-CFG-KIND-FORCED",
                   "A config was read as the --kind given, against its keys", _W,
                   "--kind forced a reader the file's keys do not match", "kind_forced"),
    # Honest reading (jobs/read.py; issue 22 item 5).
    BuiltinFinding("FP8D-CFG-NOT-READ", "Files of the job folder were not read", Severity.INFO,
                   "a folder check leaves files that no job file names and no reader reads "
                   "(named, so nothing is skipped without a word)", "not_read"),
    BuiltinFinding("FP8D-CFG-NOT-TRAINING", "The job does not train: no FP8 training check "
                   "applies", Severity.INFO, "the launch line runs only an entry point that "
                   "evaluates, converts or exports (NeMo-RL's examples/run_eval.py)",
                   "not_training"),
    BuiltinFinding("FP8D-CFG-RUNTIME-ARGS", "Arguments added when the script is run are not "
                   "checked", Severity.INFO, "a launch script no script of the job runs passes "
                   "\"$@\" to its training command: the FP8 or framework settings a user adds "
                   "there are not known here (jobs/scriptargs.py)", "runtime_args"),
    BuiltinFinding("FP8D-CFG-ARGV-SET", "A script sets its variables from the words it is run "
                   "with", Severity.INFO, "a launch script's loop over \"$@\" exports each "
                   "KEY=value word (`bash train.sh TE_FP8=1`): the values bound from its caller's "
                   "words (info), or Unknown where the loop or the words are not known here "
                   "(a warning: FP8 \"no\" is not stated; reading/shellargvset.py)", "argv_set"),
    BuiltinFinding("FP8D-CFG-FOLDER-ASSUMED", "The folder a launch script is run from was "
                   "assumed", Severity.INFO, "a launch script uses $(pwd) / $PWD and no script "
                   "of the job runs it: the folder it runs in is taken as its own "
                   "(reading/shellpwd.py)", "assumed_folder"),
    BuiltinFinding("FP8D-CFG-EMPTY-ASSUMED", "A launch variable the script never sets was "
                   "read as empty", Severity.INFO, "the training launch expands a variable "
                   "($EXTRA_ARGS) the script never sets: read as empty, as bash expands it when "
                   "the caller sets nothing; the flags it may hold are not checked "
                   "(reading/shellempty.py)", "assumed_empty"),
    BuiltinFinding("FP8D-CFG-UNKNOWN-FRAMEWORK",
                   "A file fp8-doctor does not read (it is not broken)", _W,
                   "a valid config of a framework fp8-doctor does not know, or a --kind whose "
                   "settings the file does not have", "unknown_framework"),
    # The read boundary and configuration trust (reading/boundary.py, trust.py; issue 21).
    BuiltinFinding("FP8D-CFG-OUTSIDE", "A file the job references lies outside the job: not read",
                   _W, "a script sources, or a config names, a file outside every job root "
                   "(~/.bashrc, ../../x.json): it is named, never read", "outside_job"),
    BuiltinFinding("FP8D-CFG-UNTRUSTED",
                   "A configuration file was not used: another user could have written it", _W,
                   "a [tool.fp8-doctor] pyproject.toml or a baseline owned by another user, "
                   "world-writable, or in an unsafe shared folder was skipped", "untrusted"),
    # Probes (api.collect_facts, import_findings.py).
    BuiltinFinding("FP8D-PROBE-CRASH", "A probe crashed; its facts are unknown", _W,
                   "a probe of this machine raised, crashed or timed out"),
    BuiltinFinding("FP8D-IMPORT-FAIL", "An import of the training stack failed", _E,
                   "with --deep, importing a package of the stack in a child process crashed, "
                   "hung or failed in a way no rule covers", training_node_only=True),
    # Where the check ran (environment.py).
    BuiltinFinding("FP8D-ENV-NOT-TRAINING", "The environment judged is not the training "
                   "environment", _W, "packages the job needs are missing where it was judged, "
                   "or an FP8 job was judged where no GPU is visible (an error on the training "
                   "node, where the job would fail to import them)"),
    BuiltinFinding("FP8D-ENV-FP8-ON-CPU", "FP8 is expected but the model is on the CPU", _W,
                   "preflight.inspect / a callback: FP8 expected, every parameter on the CPU"),
    # --strict (strict.py).
    BuiltinFinding("FP8D-STRICT-UNDETERMINED", "Rules undetermined under --strict", _E,
                   "--strict: rules at or above --fail-on could not be decided"),
    BuiltinFinding("FP8D-STRICT-SMOKE", "FP8 smoke step could not run under --strict", _E,
                   "--strict: the job asks for FP8 and the smoke step could not run"),
)

BUILTIN: Mapping[str, BuiltinFinding] = {b.id: b for b in _CATALOGUE}
"""Every built-in finding, by id."""
BUILTIN_IDS = frozenset(BUILTIN)
_BY_CODE = {b.problem_code: b for b in _CATALOGUE if b.problem_code}


def probe_crashed(result: ProbeResult) -> Finding:
    return BUILTIN["FP8D-PROBE-CRASH"].make(
        f"The {result.name} probe could not finish: {result.reason}. Its facts are "
        "unknown, so rules that need them are reported as undetermined.",
        "Re-run with FP8_DOCTOR_DEBUG=1 and attach `fp8-doctor report` to an issue.",
        detail=repr(result.name),
        evidence=(Evidence(f"probe.{result.name}", result.reason, result.name),),
    )


def config_problem(problem: Any) -> Finding:
    """The finding for a reader's ``ConfigProblem`` (its ``code`` picks the entry, its
    ``level`` the severity)."""
    loc = Location(problem.path, problem.line)
    entry = _BY_CODE.get(getattr(problem, "code", "unreadable"), _BY_CODE["unreadable"])
    return entry.make(
        f"{loc}: {problem.message}",
        getattr(problem, "fix", None) or
        "Fix the file so it parses; the training job would fail on it too.",
        severity={"warning": Severity.WARNING, "info": Severity.INFO}.get(
            getattr(problem, "level", "error"), Severity.ERROR),
        evidence=(Evidence("config.files", problem.path, str(loc)),),
        location=loc,
    )


def no_job_read(strict: bool) -> Finding:
    """A check given no path that found no job config: it judged the machine only (issue 24
    item 1: it printed the green "no known problem" mark). Info, so a machine check still
    passes; an error under ``--strict``, where "nothing about the job was checked" must fail."""
    return BUILTIN["FP8D-CFG-NO-JOB"].make(
        "No path was given and no job config was found (no accelerate default config): only "
        "this machine was checked, not a training job. Rules about the job's settings are "
        "undetermined.",
        "Name the job: `fp8-doctor check job/` (a folder, a launch script or config files).",
        severity=Severity.ERROR if strict else Severity.INFO,
        evidence=(Evidence("config.files", [], "config"),),
    )
