"""The record each framework module exports: everything fp8-doctor knows about one framework.

A framework module (``preflight/frameworks/<kind>.py``) builds one :class:`Framework`; the
registry in :mod:`preflight.frameworks` lists them, and detection, reading (config files and
launch lines), intent, the packages probed and judged, the speed-up's shapes, the rule areas, the
CLI's ``--kind`` choices and the docs iterate that list. Nothing outside ``preflight/frameworks/``
keys behaviour on a framework's name (tests/frameworks/test_one_module.py holds it, issue 22).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.frameworks._derived import Derived
from preflight.reading.parse import Parsed
from preflight.reading.types import ReaderOutput

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

Reader = Callable[[str, Parsed], ReaderOutput]
Deriver = Callable[[Mapping[str, Any], Mapping[str, str]], Derived]
"""``(facts, provenance) -> what the framework says about intent`` (:mod:`._derived`)."""
Scorer = Callable[[Any], int]
TextReader = Callable[[str, str, dict[str, str]], ReaderOutput]
"""``(path, text, shell variables set by the scripts that source it) -> facts`` of a launch
script or argument file."""
PythonReader = Callable[["Module"], ReaderOutput]
"""A Python job file's calls (:class:`preflight.reading.pysource.Module`) -> facts."""
ShapeTable = Callable[[Mapping[str, Any]], dict[str, tuple[Any, str]]]
"""The job's facts -> model shape values the framework knows from a name (torchtitan's flavors):
``{quantity: (value, where)}``, quantities as in :attr:`Framework.shape_keys`."""


@dataclass(frozen=True)
class Reference:
    """A key or flag whose value names another file, and how the framework resolves it."""

    key: str            # as written: ``deepspeed_config.deepspeed_config_file``, ``--deepspeed``
    kind: str           # the kind the named file is read as
    resolution: str     # how the framework opens a relative path (for the docs and messages)


@dataclass(frozen=True)
class Default:
    """A value the framework uses when the config says nothing (with the versions it holds for)."""

    setting: str        # the config key or flag left out
    value: str          # what the framework then uses
    versions: str       # e.g. "megatron-core >= 0.6.0", "all"
    source: str         # pinned upstream location


@dataclass(frozen=True)
class Launch:
    """How the framework shows in a launch script or argument file, and how it is read there.

    A text file is read by the framework whose :attr:`command` occurs first in it; with no
    command of any framework, by the one whose :attr:`flags` occur first
    (:mod:`preflight.jobs.scripts`)."""

    read: TextReader
    command: re.Pattern[str] | None = None
    """A command that starts this framework (``accelerate launch``, ``megatron sft``)."""
    flags: re.Pattern[str] | None = None
    """Flags that mark its arguments on any command line (``--output_dir``, ``--num-layers``)."""
    heredoc_values: bool = False
    """Its reader gets the bodies of the here-documents a variable takes (``read -r -d ''
    CMD <<EOF``, ``CMD=$(cat <<EOF ...)``: :mod:`preflight.reading.shellheredoc`), every other
    body blanked and every closing line kept: readers that expand the script's variables with
    the shell kit, and those that read a ``--flag`` wherever the script writes it (a quoted
    string's count too). Readers of one command line get every body blanked: a command in a
    body is only text there unless a variable they do not expand runs it."""
    entry: re.Pattern[str] | None = None
    """What the text of a Python script the launch line runs holds when it is this framework's
    entry point (``import megatron``), for a :attr:`command` or :attr:`flags` that a path or a
    flag name alone makes (``examples/models/x.py``, ``--fp8-recipe``). A script of the job
    that holds none of it takes those flags as its own options (a ``train.py`` with a click
    ``--fp8-recipe`` is no Megatron launch, holdout6); a script not found here decides nothing."""
    trains: tuple[tuple[str, ...], ...] = ()
    """Its commands that train, as the words they start with (``("accelerate", "launch")``,
    ``("llamafactory-cli", "train")``) or a flag only a training command carries
    (``("--output_dir",)``); a script run by one whose name says it evaluates, exports or merges
    does not count. A script with several is read per command, and one in a branch that does
    not run never (:mod:`preflight.reading.launchpick`; empty: the reader takes the text as it
    is)."""


@dataclass(frozen=True)
class Framework:
    """One framework: formats, recognition, reading, references, defaults, intent, precedence."""

    kind: str                        # the ``config.<kind>.*`` segment and the ``--kind`` value
    title: str                       # how people name it
    formats: tuple[str, ...]         # yaml | json | toml | text | python; the first is forced by
                                     # --kind (python: read only from .py files, read_python)
    score: Scorer                    # how strongly a parsed mapping looks like this framework's
    read: Reader                     # a parsed YAML/JSON/TOML file -> config.<kind>.* facts
    derive: Deriver                  # config.<kind>.* facts -> what it says about intent.*
    precedence: int                  # lower states intent values first (HF Trainer's explicit
                                     # bf16/fp16 beat accelerate's, ...)
    references: tuple[Reference, ...] = ()
    defaults: tuple[Default, ...] = ()
    cancels_fp8_of: tuple[str, ...] = ()
    """Kinds whose FP8 request this framework's :attr:`Derived.overrides_fp8` turns off (HF
    Trainer's bf16/fp16 replace accelerate's mixed precision; NeMo's missing transformer_engine
    its own)."""
    explicit_precision_wins: bool = False
    """Its explicit precision beats the precision of the framework that asked for FP8."""
    zero_stage_rank: int | None = None
    """Order in which frameworks state the ZeRO stage (the DeepSpeed JSON first); None: never."""
    duplicate_keys: str = "last"
    """How the framework's YAML loader treats a key given twice: ``last`` (PyYAML keeps the
    later value: a warning) or ``error`` (OmegaConf's loader refuses the file: the job stops)."""
    derive_also: tuple[tuple[str, str], ...] = ()
    """``(kind, fact)``: derive ``kind`` too when ``fact`` is a string (HF Trainer reads
    ``ACCELERATE_MIXED_PRECISION`` itself)."""
    runs_on: tuple[str, ...] = ()
    """Kinds this framework always runs on, whose rules therefore apply to its jobs
    (LLaMA-Factory -> ``hf_trainer``; the HF Trainer -> ``accelerate``); followed transitively
    into ``intent.stack``. What depends on the job (ms-swift's Megatron path, a DeepSpeed config)
    its ``derive`` states as :attr:`Derived.runs_on`, added to these."""
    distributions: tuple[str, ...] = ()
    """PEP 503 names of the distributions the framework ships as (any one will do: Lightning is
    ``lightning`` or ``pytorch-lightning``): probed, and needed by a job that runs on it."""
    requires: tuple[str, ...] = ()
    """Other distributions it imports, each needed (llm-foundry runs on composer: ``mosaicml``)."""
    from_source: bool = False
    """Often run from a source checkout (Megatron-LM's pretrain_gpt.py, torchtitan's train.py):
    its distribution missing does not prove the job cannot import it."""
    rule_area: str = ""
    """The ``AREA`` of its rules' ids (``FP8D-<AREA>-NNNN``)."""
    area_title: str = ""
    """The heading of its rules in docs/rules.md (default: :attr:`title`)."""
    launch: Launch | None = None
    """How its launch lines and argument files are recognised and read (None: not from text)."""
    shape_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """``(quantity, key paths under config.<kind>)`` that give the model's shape to the
    speed-up estimate: heads, kv_heads, layers, vocab, seq, micro_batch, tp (int), model (a model
    name or folder), gated (bool); the first key set wins."""
    shape_table: ShapeTable | None = None
    """Shape values it knows from a name in the config (torchtitan's model flavors)."""
    bool_keys: tuple[str, ...] = ()
    """Key paths under ``config.<kind>`` that its parser reads as booleans: ``1`` / ``yes`` /
    ``t`` there are true and ``0`` / ``no`` / ``f`` false (:mod:`preflight.reading.boolflags`),
    so a rule that asks ``== true`` sees ``--bf16 1`` too."""
    bool_on_off: bool = False
    """Its parser also takes on/off (pydantic: axolotl)."""
    file_strings: str = ""
    """How its loader takes a boolean (or, for :attr:`shape_keys`, a number) a config file or
    its Python code gives as a string (``bf16: 'false'``, ``micro_batch_size: '4'``):
    ``words`` converts it (pydantic, argparse defaults, accelerate's env); ``truth`` keeps it and
    tests its truth (``'false'`` is on; a number stays text); ``either``: its loaders differ, so
    a value they take differently is Unknown; ``""``: not read at a tag, a quoted
    ``'true'``/``'false'`` is Unknown (:func:`preflight.reading.boolflags.from_file`)."""
    file_strings_by_parser: tuple[tuple[str, str], ...] = ()
    """:attr:`file_strings` once the job's code names the parser that loads the file
    (``config.<kind>.code.parser``): HF's ``TrlParser`` converts, ``HfArgumentParser`` keeps."""
    file_strings_why: str = ""
    """The loader :attr:`file_strings` rests on, read at a tag (file and line), for reasons."""
    cli_strings: str = ""
    """:attr:`file_strings` for a string its command line gives a boolean key when that command
    line is Hydra overrides (a string there was quoted: ``x.enabled='"false"'``); ``""``: the
    :attr:`bool_keys` parser's words (argparse ``string_to_bool``)."""
    bool_strings: str = ""
    """:attr:`file_strings` for a string on one of its :attr:`bool_keys`, from a config file, a
    command line or its Python code alike, where its loader treats those keys apart from the rest
    (verl: the keys it hands on unconverted test the string's truth, ``truth``; a quoted boolean on
    any other key stays Unknown); ``""``: as :attr:`file_strings` / :attr:`cli_strings`."""
    python_strings: str = ""
    """:attr:`file_strings` for its Python calls' keyword arguments (a dataclass keeps them:
    ``TrainingArguments(bf16="false")`` is on); ``""``: as the command line."""
    torchrun_size: bool = False
    """Its jobs state their world size only on the ``torchrun`` line that runs the script: kept
    as ``config.<kind>.launch.nproc_per_node`` / ``nnodes`` (:mod:`preflight.jobs.scripts`)."""
    read_python: PythonReader | None = None
    """The calls of a Python job file it knows (``TrainingArguments(...)``) -> its
    ``config.<kind>.*`` facts at their lines (the file is parsed, never run)."""
    python_hint: re.Pattern[str] | None = None
    """Words a Python file holds when it has calls :attr:`read_python` knows (cheap to test
    before parsing; a folder's ``.py`` files without any hint are not parsed)."""
