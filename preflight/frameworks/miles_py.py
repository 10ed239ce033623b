"""miles' and slime's Python launchers: ``scripts/run_*.py`` / ``tests/test_*.py`` that build
``train.py``'s arguments in Python and hand them to ``U.execute_train(train_args=...)``
(issue 22, holdout10: ``python scripts/run_deepseek_v4.py train --fp8-training`` left FP8D-TE-0055
undetermined).

Read at radixark/miles e719999e (scripts/run_deepseek_v4.py; miles/utils/external_utils/
command_utils.py ``execute_train`` l.95-238: ``ray job submit --runtime-env-json=... -- python3
train.py ${MODEL_ARGS[@]} {train_args}``, ``extra_env_vars`` into the Ray runtime environment)
and THUDM/slime v0.3.1 (tests/test_moonlight_16B_A3B.py, the same ``execute_train``). miles is a
fork of slime whose ``train.py`` takes slime's arguments, so what these scripts give is read as
slime's launch line (``config.slime.*``, Megatron's own flags also ``config.megatron.*`` with
``args_of = slime``: :mod:`.slime`):

- the typer command and its dataclass from the launch line (:mod:`preflight.reading.pydataclass`:
  ``train --fp8-training --hardware B200``), module constants and environment lookups
  (:mod:`preflight.reading.pyenviron`: ``NUM_GPUS = int(os.environ.get(...))``);
- the ``train_args`` string, piece by piece (:mod:`preflight.reading.pyargs`): each flag at the
  line it is written, one added under a condition the text does not decide Unknown with it; a
  part computed when the script runs is Unknown where it is a flag's value, and where it may hold
  flags of its own (``{args.extra_args}`` the launch line does not give, ``${MODEL_ARGS[@]}`` of
  the model script) ``config.slime.unread_args`` is Unknown, so FP8 "no" becomes Unknown (never
  a "yes" taken back);
- ``extra_env_vars`` (``NVTE_*`` / ``NCCL_*`` keys) as ``config.slime.env.<NAME>``, as slime's
  reader takes them from ``--runtime-env-json``;
- the dataclass's ``__post_init__`` checks the launch line fails (``assert not
  self.train_mxfp8`` on ``--hardware H100``): ``config.slime.refused`` and the low-precision
  fields refused, read as asked (:mod:`.miles_refuse`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import ckptcast, miles_refuse
from preflight.frameworks.megatron_flags import MEGATRON_BARE, SLIME_BARE
from preflight.reading import pyargs, pydataclass, pywrites
from preflight.reading.pyscopes import Scope
from preflight.reading.pysource import Call, Module
from preflight.reading.pyvalues import Unresolved
from preflight.reading.shellvars import runtime
from preflight.reading.types import ConfigProblem, ReaderOutput

PREFIX = "config.slime"
PY_HINT = re.compile(r"\bexecute_train\b")
EXECUTE = ("miles.utils.external_utils.command_utils.execute_train",
           "slime.utils.external_utils.command_utils.execute_train")
_BARE = MEGATRON_BARE | SLIME_BARE
PREFIXES = {"miles": "MILES_SCRIPT_", "slime": "SLIME_SCRIPT_"}
"""``dataclass_cli``'s default ``env_var_prefix`` per package (miles/utils/typer_utils.py at
e719999e, slime/utils/external_utils/typer_utils.py at v0.3.1)."""
BASES: pydataclass.Bases = {
    # miles/utils/external_utils/command_utils.py l.90-94 at e719999e (ExecuteTrainConfig);
    # num_nodes' default reads SLURM_JOB_NUM_NODES when the module is imported
    "ExecuteTrainConfig": (("cuda_core_dump", "bool", False),
                           ("num_nodes", "int", ("SLURM_JOB_NUM_NODES", "1")),
                           ("extra_env_vars", "str", ""),
                           ("output_dir", "str", "/root/shared_data")),
}
_ENV_KEY = re.compile(r"(?:NVTE|NCCL)_[A-Z0-9_]+")
_HOLE = re.compile(r"\$\{__hole_(\d+)\}")


def read_python(module: Module) -> ReaderOutput:
    """The launch line a miles / slime Python launcher builds (module docstring)."""
    from preflight.frameworks import slime

    problems: list[ConfigProblem] = []
    refused: dict[str, Any] = {}
    refused_at: dict[str, int] = {}
    got = pydataclass.command(module, PREFIXES, BASES)
    if isinstance(got, Unresolved):
        return _unread(module, got.reason)
    if got is not None:
        name, args = got
        # the command the launch line runs, its dataclass bound; what it does not reach
        # does not run (reading/pycallers.py `reached`)
        first = Module(module.path, module.tree, module.argv, module.entry,
                       {name: [Call(name, 0, (args,))]}, module.environ)
        args = pydataclass.settled(first, name, args)
        # the dataclass's own checks the launch line fails: the launch stops there (holdout14)
        refused, refused_at = miles_refuse.asks(module, args,
                                                miles_refuse.refusals(module, args))
        module = Module(module.path, module.tree, module.argv, module.entry,
                        {name: [Call(name, 0, (args,))]}, module.environ)
        if args.star is not None:
            problems.append(ConfigProblem(module.path, None, (
                f"{args.star.reason}: the launch line stops there with a usage error; the rest "
                "is read as meant"), level="warning"))
    calls = [(c, s) for c, s in module.calls() if c.func in EXECUTE]
    at: dict[str, Any] = {k: Source(module.path, line) for k, line in refused_at.items()}
    if not calls:
        return ReaderOutput(refused, at, problems=tuple(problems))
    if len(calls) > 1:
        where = ", ".join(str(c.line) for c, _ in calls[:6])
        return _unread(module, f"execute_train is called at lines {where}: which one runs is "
                              "the script's control flow")
    call, scope = calls[0]
    node = _node(scope, call.line)
    arg = _argument(node, "train_args", 0) if node is not None else None
    if arg is None:
        return _unread(module, f"execute_train(...) at line {call.line} passes no train_args "
                               "the text gives")
    found = pywrites.substitute(module, pyargs.pieces(module, arg, scope))
    if call.kwargs.get("megatron_model_type") is not None:
        # `${MODEL_ARGS[@]}` of scripts/models/<type>.sh come first (command_utils.py l.226):
        # the architecture; no model script of miles (e719999e) or slime (v0.3.1) sets a
        # precision flag (`git grep fp8\|bf16\|fp16\|transformer-impl -- scripts/models/`)
        found[:0] = [pyargs.Piece(None, call.line, "the model script's MODEL_ARGS",
                                  benign=True), pyargs.Piece(" ", call.line)]
    text, lines, words = pyargs.command(found)
    # a word of its own that is no value of the flag before it may be flags
    holes = [h for h, flag in words if flag is None or flag[2:] in _BARE]
    outer = {f"__hole_{n}": runtime(p.why[:200]) for n, p in enumerate(found) if p.text is None}
    out = slime.read_text(module.path, text, outer)
    facts, prov = _remap(module, out.facts, out.provenance, lines, found)
    # miles' or slime's execute_train: which one runs decides the trainer's FP32-scales
    # default on Blackwell (slime_env.py)
    facts[f"{PREFIX}.package"] = call.func.split(".", 1)[0]
    _cast_source(module, facts, prov)
    prov[f"{PREFIX}.package"] = Source(module.path, call.line)
    if holes:
        first_hole = holes[0]
        facts[f"{PREFIX}.unread_args"] = Unknown(
            f"part of the command line is computed when the script runs ({first_hole.why[:160]}"
            f", line {first_hole.line}): flags it may add are not known")
        prov[f"{PREFIX}.unread_args"] = Source(module.path, first_hole.line)
    env = node and _argument(node, "extra_env_vars", -1)
    if env is not None:
        for key, (value, line) in pyargs.mapping(module, env, scope).items():
            if _ENV_KEY.fullmatch(key) or key == "*":
                name = f"{PREFIX}.env.{key}" if key != "*" else f"{PREFIX}.env_unread"
                facts[name] = value if isinstance(value, str) else Unknown(
                    value.reason if isinstance(value, Unresolved) else
                    f"{key} is computed when the script runs")
                prov[name] = Source(module.path, line)
    facts.update(refused)
    prov.update(at)
    return ReaderOutput(facts, prov, (*problems, *_problems(module, out.problems, lines)),
                        ())


def _cast_source(module: Module, facts: dict[str, Any], prov: dict[str, Any]) -> None:
    """``--hf-checkpoint`` the source of an FP8 cast the script runs, or a copy of it: FP8
    weights (:mod:`.ckptcast`), where its own config.json was not read."""
    name = f"{PREFIX}.hf_checkpoint_weights"
    if str(prov.get(name, "")).rsplit(":", 1)[0].endswith("config.json"):
        return
    mark = ckptcast.marked(module, facts.get(f"{PREFIX}.hf_checkpoint"))
    if mark is not None:
        facts[name] = mark.fp8 if not isinstance(mark.fp8, bool) else True
        prov[name] = Source(module.path, mark.line)


def _unread(module: Module, why: str) -> ReaderOutput:
    """A launcher whose command line is not known: its FP8 Unknown, never "no"."""
    return ReaderOutput({f"{PREFIX}.unread_args": Unknown(why)},
                        {f"{PREFIX}.unread_args": Source(module.path, None)})


def _node(scope: Scope, line: int) -> ast.Call | None:
    return next((n for n in scope.calls if n.lineno == line and (
        (n.func.attr if isinstance(n.func, ast.Attribute) else
         n.func.id if isinstance(n.func, ast.Name) else "") == "execute_train")), None)


def _argument(node: ast.Call, name: str, index: int) -> ast.expr | None:
    given = next((k.value for k in node.keywords if k.arg == name), None)
    if given is None and 0 <= index < len(node.args):
        given = node.args[index]
    return given


def _remap(module: Module, facts: dict[str, Any], prov: dict[str, str],
           lines: list[tuple[int, str | None]], found: list[pyargs.Piece],
           ) -> tuple[dict[str, Any], dict[str, str]]:
    """Facts of the laid-out command line at the script's own lines; a flag added under a
    condition the text does not decide is Unknown with it, and so is a value with a part
    computed when the script runs (``--load {args.save_dir}/x``)."""
    out_facts, out_prov = dict(facts), dict(prov)
    for name, value in facts.items():
        hole = _HOLE.search(value) if isinstance(value, str) else None
        if hole is not None:
            piece = found[int(hole.group(1))]
            out_facts[name] = Unknown(f"{piece.why[:200]} (line {piece.line})")
    for name, src in prov.items():
        at = getattr(src, "line", None)
        if getattr(src, "path", None) != module.path or at is None or not 0 < at <= len(lines):
            continue
        line, when = lines[at - 1]
        out_prov[name] = Source(module.path, line)
        if when is not None and not isinstance(out_facts[name], Unknown):
            out_facts[name] = Unknown(f"given at line {line} only {when[:200]}")
    return out_facts, out_prov


def _problems(module: Module, problems: tuple[ConfigProblem, ...],
              lines: list[tuple[int, str | None]]) -> tuple[ConfigProblem, ...]:
    return tuple(replace(p, line=lines[p.line - 1][0]) if p.path == module.path and p.line
                 and 0 < p.line <= len(lines) else p for p in problems)
