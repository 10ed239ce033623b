"""Reading Megatron-LM job configs: launch scripts and argument files, ``--yaml-cfg`` YAML,
test-case YAML.

Launch scripts build the argument list in many ways (bash arrays ``GPT_ARGS=( ... )``, strings
``GPT_ARGS="--num-layers 24 ..."`` over several lines, ``\\``-continued ``torchrun`` lines, files
of one flag per line for argparse ``@file``). Rather than emulate bash, the reader finds every
``--flag [value]`` token on a line, substitutes simple ``NAME=value`` shell variables, and keeps
the last occurrence (argparse semantics).

Fact names: ``config.megatron.<flag with - -> _>``: ``--fp8-format hybrid`` ->
``config.megatron.fp8_format = "hybrid"`` (Megatron's argparse dest for that flag is ``fp8``;
we keep the flag's own name so the file is recognizable, as internals.md fixes), a bare flag ->
``true`` (``--no-fp8-wgrad`` -> ``config.megatron.no_fp8_wgrad = true``), numbers as int/float.
Flags that take several values (``--recompute-modules a b``) give a list.

``--yaml-cfg`` files (``megatron/training/yaml_arguments.py``) keep their own key paths
(``config.megatron.language_model.fp8``). Functional-test YAML (``MODEL_ARGS: {--fp8-format:
hybrid}``) is normalized like command-line flags.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_text, megatron_walk
from preflight.frameworks import megatron_validated as validated
from preflight.frameworks.megatron_flags import MEGATRON_BARE
from preflight.frameworks.megatron_script import Entry, carried, entry
from preflight.reading.launch import without_after_training
from preflight.reading.parse import (
    MAX_FACTS_PER_FILE,
    MAX_ITEMS_PER_FILE,
    Parsed,
    fact_value,
    flatten,
    usable_key,
)
from preflight.reading.refs import named
from preflight.reading.shellexpand import Launch
from preflight.reading.shellvars import collect_variables, expand_flag_names, strip_comments, typed
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput, cut_short

PREFIX = "config.megatron"

# Flags declared with nargs='+' / '*' in megatron/training/arguments.py that matter to us.
_MULTI = {"recompute-modules", "data-path", "train-data-path", "valid-data-path",
          "test-data-path", "moe-layer-freq", "cuda-graph-scope", "cuda-graph-modules",
          "cp-comm-type",
          # slime's (nargs="+", slime a74ae3a0 slime/utils/arguments.py l.1471-1500)
          "megatron-deepgemm-forward-layers", "megatron-deepgemm-forward-modules",
          "megatron-deepgemm-moe-forward-layers", "megatron-deepgemm-moe-forward-modules"}

# Flags that take exactly one value (megatron/training/arguments.py, torchrun) among those intent
# reads: given bare, argparse refuses the command line.
NEEDS_VALUE = frozenset({
    "fp8-format", "fp8-recipe", "fp4-format", "fp4-recipe", "transformer-impl", "hidden-size",
    "ffn-hidden-size", "seq-length", "micro-batch-size", "global-batch-size", "num-layers",
    "num-attention-heads", "num-query-groups", "context-parallel-size",
    "tensor-model-parallel-size", "pipeline-model-parallel-size", "recompute-granularity",
    "recompute-method", "yaml-cfg", "nproc_per_node", "nproc-per-node", "nnodes"})


# `--x=` is an empty value to argparse, never the bare flag (redteam2: `--merge_lora= true`)
_FLAG = re.compile(r"(?<![\w-])--([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(\S*))?")
_WORD = r"""("[^"\n]*"|'[^'\n]*'|[^\s\\)"';|&#]+)"""
# A value follows its flag after blanks or a `\`-newline continuation; a flag that must take a
# value may also find it on the next line (one argument per line in an argument file or a bash
# array). Other flags stop at a plain newline: `--bf16` then `export X=1` is no value.
_VALUE = re.compile(r"(?:[ \t]|\\\n)+" + _WORD)
# an array expanded whole (`${ARGS[@]}`, quoted or not) is the next words, no value of a flag
_ARRAY = re.compile(r"""(["']?)\$\{[A-Za-z_]\w*\[[@*]\]\}\1""")
_VALUE_NEXT_LINE = re.compile(r"(?:[ \t\n]|\\\n)+" + _WORD)

TEXT_HINTS = re.compile(r"--(?:num-layers|hidden-size|num-attention-heads|fp8-format|fp8-recipe|"
                        r"fp8-hybrid|fp8-e4m3|tensor-model-parallel-size|seq-length|"
                        r"micro-batch-size|transformer-impl|use-mcore-models|ffn-hidden-size)\b")

ENTRY = re.compile(r"(?m)^[ \t]*(?:from|import)[ \t]+megatron\b")
"""A Megatron entry point imports megatron (Megatron-LM's pretrain_gpt.py: ``from
megatron.training import pretrain``, at core_r0.14.0); a job's own ``train.py`` that does not
takes ``--fp8-recipe`` as its own option (``jobs/scripts.py``, ``Launch.entry``)."""


def read_args_text(path: str, text: str, outer: dict[str, str] | None = None,
                   prefix: str = PREFIX, bare: frozenset[str] | None = None) -> ReaderOutput:
    """Flags from a launch script or an argument file (``outer``: variables set by the scripts
    it sources; ``--${PRECISION:-bf16}`` is expanded). ``bare``: flags that take no value
    (store_true; Megatron-LM's own by default under ``config.megatron``, none otherwise: ms-swift
    spells its booleans ``--bf16 true``)."""
    if bare is None:
        bare = MEGATRON_BARE if prefix == PREFIX else frozenset()
    found = megatron_walk.walk(text, outer)
    if found is not None:       # only what reaches the training command (megatron_walk.py)
        return _walked(path, text, outer, prefix, bare, found)
    text = strip_comments(text)
    variables = collect_variables(text, outer, script=path)
    text = expand_flag_names(text, variables)
    # a conversion / evaluation / generation command after training is not the job's config
    text = without_after_training(text, variables)
    # where each flag stands: a branch not decided here leaves it Unknown (megatron_text.py)
    marks = megatron_text.branches(path, text, outer)
    seen: dict[str, list[megatron_text.Seen]] = {}
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    budget = [MAX_ITEMS_PER_FILE]
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    taken = 0       # the end of the last flag's value: a flag inside a quoted value is text
    for count, m in enumerate(_FLAG.finditer(text)):
        if m.start() < taken:
            continue    # redteam7: `--wandb-exp-name "--fp8-format e4m3"` asks for no FP8
        if count >= megatron_walk.MAX_FLAGS:
            problems.append(megatron_walk.too_many_flags(
                path, bisect.bisect_right(line_starts, m.start())))
            break
        flag = m.group(1).rstrip("-")
        if not flag:
            continue
        name = f"{prefix}.{flag.replace('-', '_')}"
        lineno = bisect.bisect_right(line_starts, m.start())
        if len(facts) >= MAX_FACTS_PER_FILE and name not in facts:
            cut_short(facts, prov, name, Source(path, lineno))   # redteam5: --fp8-format after
            break                                                # 2,000 flags was FP8 "no"
        value: Any
        if m.group(2) is not None:
            value = typed(m.group(2), variables)
        elif flag in bare:
            value = True   # store_true: the next word is the next argument, never its value
        else:
            values: list[Any] = []
            pos = m.end()
            pattern = _VALUE_NEXT_LINE if flag in NEEDS_VALUE else _VALUE
            while True:
                v = pattern.match(text, pos)
                if not v or v.group(1).startswith("--") or _ARRAY.fullmatch(v.group(1)):
                    break       # `--colocate ${PRECISION_ARGS[@]}`: the array's words are flags
                values.append(typed(v.group(1), variables))
                pos = taken = v.end()
                if flag not in _MULTI:
                    break
            if flag in _MULTI:
                value = fact_value(values, budget)
            elif values:
                value = values[0]
            elif flag in NEEDS_VALUE:
                # argparse stops the job ("expected one argument"); a cut-off file ends this way
                why = f"--{flag} has no value here; Megatron's argparse would stop with " \
                      "'expected one argument'"
                problems.append(ConfigProblem(path, lineno, why))
                value = Unknown(why)
            else:
                value = True
        facts.pop(name, None)  # argparse keeps the last occurrence; keep insertion order too
        facts[name] = value
        prov[name] = Source(path, lineno)
        if marks is not None:
            seen.setdefault(name, []).append(megatron_text.Seen(value, lineno,
                                                                 marks.at(m.start())))
    if marks is not None:
        _branched(path, facts, prov, seen, marks)
    if prefix != PREFIX:
        return ReaderOutput(facts, prov, tuple(problems))
    yaml_on = carried(text, outer, "yaml-cfg") if f"{PREFIX}.yaml_cfg" in facts else None
    if yaml_on is False:    # echoed, or on a launch that never runs: not the job's (redteam6)
        facts.pop(f"{PREFIX}.yaml_cfg")
    return _megatron_lm(path, text, variables, facts, prov, problems, yaml_on)


def _branched(path: str, facts: dict[str, Any], prov: dict[str, Any],
              seen: dict[str, list[megatron_text.Seen]], marks: megatron_text.Branches) -> None:
    """``facts`` as the branches each flag stands in leave them (:mod:`.megatron_text`)."""
    for name, occurrences in seen.items():
        flag = "--" + name.rsplit(".", 1)[1].replace("_", "-")
        got = megatron_text.resolve(flag, occurrences, marks)
        if got is None:         # only in branches that never run
            facts.pop(name, None)
            prov.pop(name, None)
        else:
            facts[name], prov[name] = got.value, Source(path, got.line)


def _walked(path: str, text: str, outer: dict[str, str] | None, prefix: str,
            bare: frozenset[str], found: list[Launch]) -> ReaderOutput:
    """The flags of the training launches the walk found (:mod:`.megatron_walk`)."""
    got = megatron_walk.read(path, text, found, prefix, megatron_walk.Arity(
        bare, NEEDS_VALUE, frozenset(_MULTI)))
    if prefix != PREFIX:
        return ReaderOutput(got.facts, got.prov, tuple(got.problems))
    yaml = got.facts.get(f"{PREFIX}.yaml_cfg")
    yaml_on = None if yaml is None else yaml if isinstance(yaml, Unknown) else True
    text = strip_comments(text)
    return _megatron_lm(path, text, collect_variables(text, outer, script=path), got.facts, got.prov,
                        got.problems, yaml_on)


def _megatron_lm(path: str, text: str, variables: dict[str, str], facts: dict[str, Any],
                 prov: dict[str, Any], problems: list[ConfigProblem], yaml_on: Any,
                 ) -> ReaderOutput:
    """``facts`` with what Megatron-LM's parser and validate_args make of them, and the
    ``--yaml-cfg`` file linked."""
    if facts:   # Megatron-LM's parser and validate_args run on them, unless the script the
        # line runs imports only megatron.core, or --yaml-cfg (megatron_validated.py)
        said = validated.megatron_lm(facts, prov, PREFIX,
                                     entry(path, text, variables) or _no_python(facts, prov),
                                     yaml_on)
        for name, (value, source) in said.items():
            facts[name], prov[name] = value, source
    # launches that differ in --yaml-cfg: its YAML may not be the job's, so it does not replace
    # what the launch line says (its validate_args "false" among them)
    more, linked = _yaml_cfg_link(path, facts, prov, not isinstance(yaml_on, Unknown))
    return ReaderOutput(facts, prov, (*problems, *more), linked)


def _no_python(facts: dict[str, Any], prov: dict[str, Any]) -> Entry | None:
    """``torchrun --no-python PROGRAM`` (torch/distributed/run.py: the program is executed as
    is, not ``python PROGRAM``): a console script or binary that is none of Megatron-LM's
    ``pretrain_*.py``, so whether Megatron-LM's parser and validate_args see the flags is not
    known (holdout25: BioNeMo's ``train_evo2``, a Megatron-Bridge trainer with its own parser)."""
    name = f"{PREFIX}.no_python"
    if name not in facts:
        return None
    program = facts[name]
    what = repr(str(program)[:80]) if isinstance(program, str) else "a program named later"
    return Entry(Unknown(f"torchrun --no-python runs {what}, not a Python script: whether it "
                         "hands these flags to Megatron-LM's parser (and validate_args) is not "
                         "known"), False, prov.get(name, "config"))


def megatron_flags(out: ReaderOutput, prefix: str, own: frozenset[str],
                   apart: tuple[str, ...] = ()) -> ReaderOutput:
    """``out`` (flags read under ``prefix``) with every flag that is Megatron-LM's own also as
    ``config.megatron.<flag>``, at the same line: a framework that hands its command line to
    Megatron-LM's parser (slime's ``train.py``) runs Megatron with those flags, so the Megatron
    rules must see them (holdout8 meg-2582: ``--fp8-param-gather --optimizer-cpu-offload``
    under ``config.slime.*`` left FP8D-MEG-0009 silent); ``config.megatron.args_of`` names the
    framework, so ``megatron`` is no kind the job was read as. ``own``: the framework's own flags
    (dash form), ``apart``: prefixes of flags it parses apart (not Megatron's)."""
    own_names = {f.replace("-", "_") for f in own}
    apart_names = tuple(a.replace("-", "_") for a in apart)
    facts, prov = dict(out.facts), dict(out.provenance)
    for name, value in out.facts.items():
        flag = name[len(prefix) + 1:]
        if not name.startswith(f"{prefix}.") or flag in own_names or flag.startswith(apart_names):
            continue
        facts.setdefault(f"{PREFIX}.{flag}", value)
        if name in out.provenance:
            prov.setdefault(f"{PREFIX}.{flag}", out.provenance[name])
    if len(facts) > len(out.facts):
        # not a Megatron job of its own: Megatron's derive does not run on them (jobs/walk.py)
        facts[f"{PREFIX}.args_of"] = prefix.split(".")[1]
        prov[f"{PREFIX}.args_of"] = next(iter(out.provenance.values()), "config")
    return ReaderOutput(facts, prov, out.problems, out.linked)


def _yaml_cfg_link(path: str, facts: dict[str, Any], prov: dict[str, str],
                   overrides: bool = True,
                   ) -> tuple[tuple[ConfigProblem, ...], tuple[Linked, ...]]:
    """``--yaml-cfg FILE`` in a script: read that YAML too (relative to the script, then cwd)."""
    target = facts.get(f"{PREFIX}.yaml_cfg")
    if not isinstance(target, str) or "$" in target:
        return (), ()
    line = getattr(prov[f"{PREFIX}.yaml_cfg"], "line", None)
    # megatron/training/arguments.py: `args = load_yaml(args.yaml_cfg)` replaces the parsed
    # command line, so the YAML's values win over the script's.
    return (), (named(target, "megatron", path, prov[f"{PREFIX}.yaml_cfg"], key="--yaml-cfg",
                      line=line, overrides=overrides),)


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """``--yaml-cfg`` YAML (own key paths) or a functional-test YAML (``MODEL_ARGS`` flags)."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    rest = dict(data)
    model_args = rest.pop("MODEL_ARGS", None)
    budget = [MAX_ITEMS_PER_FILE]
    flatten(rest, parsed, PREFIX, path, facts=facts, prov=prov, budget=budget)
    if isinstance(model_args, dict):
        for key, value in model_args.items():
            flag = str(key).lstrip("-").rstrip("-")
            if not usable_key(flag):
                continue
            name = f"{PREFIX}.{flag.replace('-', '_')}"
            if isinstance(value, str) and flag in _MULTI:
                value = value.split()
            facts[name] = fact_value(value, budget)
            line = parsed.line_of(("MODEL_ARGS", key))
            prov[name] = Source(path, line)
    if facts:   # test-case flags go through validate_args, a --yaml-cfg file does not
        facts[validated.NAME], prov[validated.NAME] = validated.yaml_file(
            isinstance(model_args, dict), Source(path, None))
        if isinstance(model_args, dict):    # command-line flags: Megatron-LM's parser reads them
            facts[validated.PARSED] = True  # (a --yaml-cfg file's keys it never does: the
            facts[validated.DROPS] = False  # launch line's flags decide, megatron_lm)
            prov[validated.PARSED] = prov[validated.DROPS] = Source(path, None)
    return ReaderOutput(facts, prov)
