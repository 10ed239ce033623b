"""Facts a launch script gives the training it starts, beyond the framework's own settings:
the environment its training command runs in (``env.*``) and the world size of the ``torchrun``
that starts a plain PyTorch loop (``config.<kind>.launch.*``). Split from
:mod:`preflight.jobs.scripts`, which calls both once it knows the script's kind."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import launch, shellcalls
from preflight.reading.launchenv import Given, launch_env, process_env
from preflight.reading.launchmerge import merged
from preflight.reading.parse import ParseError, read_text
from preflight.reading.types import Linked, ReaderOutput

if TYPE_CHECKING:
    from preflight.frameworks import Framework


def add(path: str, clean: str, variables: dict[str, str], outer: dict[str, str],
        out: ReaderOutput, fw: Framework | None, kind: str) -> ReaderOutput:
    """``out`` with what the launch script gives the training it starts (its training lines
    are worked out once for both; ``clean``: the script without comments, ``variables``: its
    own and ``outer``'s, as :func:`.scripts.read` has them):

    - ``env.*`` facts for the variables it gives its training command (``export
      ACCELERATE_MIXED_PRECISION=fp8``, ``NVTE_X=1 torchrun ...``: :mod:`.launchenv`), so rules on
      the environment the training sees (FP8D-HF-0050, accelerate's) see them. Only the
      allow-list's framework prefixes (``ACCELERATE_``, ``NVTE_``, ``TORCH_`` ...), not the
      machine's (``CUDA_VISIBLE_DEVICES``, ``WORLD_SIZE``): those the probes read where the check
      runs. What the framework's reader states wins (LLaMA-Factory's ``fp8: true`` sets
      ``ACCELERATE_MIXED_PRECISION`` in the process itself). ``fw``: the framework the script
      was detected as (its command marks the training line).
    - ``config.<kind>.launch.nproc_per_node`` / ``nnodes`` of the ``torchrun`` that runs the
      training script, for a framework whose record asks (``torchrun_size``: a plain PyTorch
      loop states its world size nowhere else, and ``fully_shard(model)`` shards over all of it:
      FP8D-TAO-0013)."""
    from preflight.frameworks import BY_KIND, FRAMEWORKS
    from preflight.jobs.pymodlinks import first_training

    trains = next((pos for script, _, pos in launch.python_scripts(clean, variables)
                   if not launch.not_training(script)), None)
    if trains is None:          # `torchrun ... -m pkg.train` (a module of the job)
        trains = first_training(path, clean, variables, outer, FRAMEWORKS)
    facts, prov = dict(out.facts), dict(out.provenance)
    _env(path, clean, outer, variables, fw, trains, facts, prov)
    record = BY_KIND.get(kind)
    if record is not None and record.torchrun_size and trains is not None:
        for name, value in launch.torchrun_size(clean, variables, trains).items():
            facts.setdefault(f"config.{kind}.launch.{name}", value)
            prov.setdefault(f"config.{kind}.launch.{name}",
                            Source(path, clean.count("\n", 0, trains) + 1))
    return replace(out, facts=facts, provenance=prov)


def _env(path: str, clean: str, outer: dict[str, str], variables: dict[str, str],
         fw: Framework | None, trains: int | None, facts: dict[str, Any],
         prov: dict[str, Any]) -> None:
    from preflight.redact import ENV_PREFIXES, MASK, looks_secret

    hit = launch.find(fw.launch.command, clean) if fw is not None and fw.launch is not None \
        and fw.launch.command is not None else None
    at = hit.start() if hit is not None else trains
    if at is None:
        return
    for name, value, pos in launch_env(clean, at, variables):
        if name.startswith(ENV_PREFIXES) and f"env.{name}" not in facts:
            facts[f"env.{name}"] = MASK if looks_secret(name, value) else value
            prov[f"env.{name}"] = Source(path, clean.count("\n", 0, pos) + 1)
    # what the caller gave this script (`ACCELERATE_MIXED_PRECISION=fp8 bash train.sh`) is in
    # the environment of everything it runs, unless it sets it again
    for name in outer.get(shellcalls.ENVIRON, "").split(","):
        given = variables.get(name)
        if name.startswith(ENV_PREFIXES) and f"env.{name}" not in facts and \
                isinstance(given, str) and "$" not in given and "\x00" not in given:
            facts[f"env.{name}"] = MASK if looks_secret(name, given) else given
            prov[f"env.{name}"] = outer.get(shellcalls.CALLER, path)


def environ(path: str, clean: str, pos: int, variables: dict[str, str],
            outer: dict[str, str]) -> Given:
    """The environment the launch line at ``pos`` gives the Python script it runs, for its
    ``os.environ`` lookups (:mod:`.pyenviron`): what this script's caller passed it (at the
    caller's line), its exports and the line's own assignments (:func:`.launchenv.process_env`)."""
    caller = outer.get(shellcalls.CALLER, path)
    inherited = [(n, caller) for n in outer.get(shellcalls.ENVIRON, "").split(",") if n]
    return process_env(path, clean, pos, variables, inherited)


def one_environ(found: list[Linked]) -> list[Linked]:
    """A file two launch lines of the script run gets what they give it alike (a variable
    they give differently is Unknown naming both: :func:`.launchmerge.merged`)."""
    runs: dict[str, dict[str, tuple[str, str]]] = {}
    for link in found:
        if link.environ is not None:
            real = os.path.realpath(link.path)
            runs[real] = merged(runs.get(real), link.environ, link.source)
    return [replace(link, environ=tuple((n, v, w) for n, (v, w) in
                                        runs[os.path.realpath(link.path)].items()))
            if link.environ is not None else link for link in found]


_FP8_OPTION = re.compile(r"--?(?!-|no|disable[-_])((?:[\w.-]*[-_.])?(?:fp8|float8)(?:[-_.][\w.-]*)?)",
                         re.IGNORECASE)
"""An option whose name says FP8 (``--fp8``, ``--fp8_models``, ``--use-float8``), not one that
switches it off (``--no-fp8``, ``--nofp8`` as fire and absl spell it, ``--disable_fp8``)."""
_OFF = {"false", "0", "no", "none", "off", "null", ""}


def unread_options(out: ReaderOutput, runs: list[Linked], kind: str) -> ReaderOutput:
    """``out`` with ``config.<kind>.unread_args`` Unknown when a launch line gives a Python
    script of the job an FP8 option (``--fp8_models A,B``, ``--use-fp8``) that the script does not
    declare (its parser is built elsewhere: DiffSynth's ``add_general_config`` of the installed
    package, holdout20) and that no reader read (no fact of the script named after it): what the
    option switches is not known, so FP8 "no" would be a guess (:mod:`preflight.intent`)."""
    key = f"config.{kind}.unread_args"
    if key in out.facts:
        return out
    read = {part for name in out.facts for part in name.split(".")[2:]}
    for run in runs:
        if not run.argv or run.missing or run.after:
            continue
        for n, word in enumerate(run.argv[:launch.MAX_ARGS]):
            name, _, value = word.partition("=")
            m = _FP8_OPTION.fullmatch(name)
            if m is None:
                continue
            if not value and n + 1 < len(run.argv) and not run.argv[n + 1].startswith("-"):
                value = run.argv[n + 1]
            option = m.group(1).replace("-", "_")
            if value.strip("'\"").lower() in _OFF - {""} or option in read or \
                    _declares(run.path, name):
                continue
            facts = {**out.facts, key: Unknown(
                f"{name[:60]} is given to {os.path.basename(run.path)[:80]} at line {run.line}, "
                "which does not declare it (its argument parser is built outside the job): "
                "whether it runs the job in FP8 is not known")}
            return replace(out, facts=facts, provenance={**out.provenance, key: run.source})
    return out


def _declares(path: str, option: str) -> bool:
    """Whether the script declares ``option`` itself, or is no argparse script reading it: only a
    script that parses with argparse (``.parse_args(`` / ``.parse_known_args(``) and reads the
    option's attribute (``args.fp8_models``) without naming ``--fp8_models`` anywhere takes it
    from a parser built elsewhere (typer, click, fire and dataclass parsers declare options by
    their parameters, which their readers read). Unreadable counts as declared."""
    attr = option.lstrip("-").replace("-", "_")
    if not attr.isidentifier():
        return True
    try:
        text = read_text(path)
    except (ParseError, OSError, ValueError):
        return True
    return f'"{option}"' in text or f"'{option}'" in text or \
        not re.search(r"\.parse_(?:known_)?args\(", text) or \
        re.search(rf"\.{attr}\b", text) is None
