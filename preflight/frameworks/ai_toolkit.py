"""ostris ai-toolkit: ``python run.py config/<job>.yaml`` and its job YAML (``job:``,
``config.process[i]`` with ``model:``, ``train:``, ``network:``).

Read at ostris/ai-toolkit 27a03a91f23eb1b757d5ec2e80ee3e129cfcc350 (2026-08). run.py takes one or
more config files (``config_file_list``, nargs "+"; a bare name is looked for as
``config/<name>.json|yaml``) and ``-r``, ``-n NAME``, ``-l LOG``; toolkit/job.py ``get_job``
reads ``job:`` (extension, train, ...). toolkit/config_modules.py ``ModelConfig``:
``quantize`` (default False) quantizes the frozen transformer to ``qtype`` (default
``"qfloat8"``; ``"uint3|<adapter>"`` names an accuracy-recovery adapter after the pipe, l.741-743),
``quantize_te`` (default: ``quantize``) the text encoder to ``qtype_te`` (default ``"qfloat8"``),
``layer_offloading`` turns ``qfloat8`` into torchao ``float8`` (l.713-717); ``dtype`` 8bit / e4m3fn /
float8 loads the weights as ``torch.float8_e4m3fn`` (toolkit/train_tools.py ``get_torch_dtype``
l.37-49). ``TrainConfig.dtype`` (default ``fp32``, l.395) is the training dtype.

None of it is FP8 training: ``qfloat8`` is optimum-quanto's weight-only type and torchao's
``float8`` is ``Float8WeightOnlyConfig`` (toolkit/util/quantize.py l.42-49), both dequantized for
the matmul; the ostris backends (convrot, nvfp4, uintx, orbit) train through a BF16 matmul on
dequantized weights (toolkit/util/convrot_quant.py l.31-35: "bf16 matmul with the dequantized
rotated weight"). So ``intent.fp8`` is false -- ai-toolkit has no FP8 training switch -- and
``intent.fp8_weight_storage`` says whether a quantized or loaded model keeps its weights in a
float8 type. A training dtype of float8 would train in ``torch.float8_e4m3fn`` without a recipe:
Unknown, as is a qtype it does not name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_walk
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import MAX_ITEMS_PER_FILE, Parsed
from preflight.reading.parsefacts import flatten
from preflight.reading.refs import locate, named
from preflight.reading.types import Linked, ReaderOutput

KIND = "ai_toolkit"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/ostris/ai-toolkit/blob/27a03a91f23eb1b757d5ec2e80ee3e129cfcc350"
COMMAND = re.compile(r"(?<![\w./-])(?:[\w./-]*/)?run\.py[ \t]+(?:-[rnl]\b[ \t]*\S*[ \t]+)*"
                     r"""["']?[^\s"'-][^\s"']*\.(?:ya?ml|json)\b""")
"""``run.py`` given a config file (the README's ``python run.py config/whatever_you_want.yml``)."""
ENTRY = re.compile(r"^[ \t]*from[ \t]+toolkit\.", re.M)
"""What ai-toolkit's run.py holds (``from toolkit.job import get_job``)."""
MAX_LAUNCHES = 8
MAX_PROCESSES = 16
"""Processes of one job read (the examples have one)."""
ARITY = megatron_walk.Arity(bare=frozenset({"r", "recover"}), needs=frozenset({"n", "name", "l",
                                                                                "log"}),
                            multi=frozenset())
_FP8_QTYPES = frozenset({"qfloat8", "qfloat8_e4m3fn", "qfloat8_e5m2", "qfloat8_e4m3fnuz",
                         "float8"})
"""optimum-quanto's float8 qtypes and torchao's ``float8`` (Float8WeightOnlyConfig)."""
_OTHER_QTYPES = re.compile(r"^(?:q?u?int[1-8]|qint[248]|int8|convrot[48]|nvfp4|orbit\w*|"
                           r"uint[1-8]|qfloat16|qbfloat16)$")
"""Non-float8 qtypes of quanto, torchao and the ostris backends at 27a03a91."""
_FP8_DTYPES = frozenset({"8bit", "e4m3fn", "float8"})
_PRECISION = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "half": "fp16",
              "float16": "fp16", "fp32": "fp32", "float": "fp32", "float32": "fp32",
              "single": "fp32"}


def score(data: Any) -> int:
    """A job YAML: ``job:`` one of get_job's types and ``config.process`` a list."""
    if not isinstance(data, Mapping):
        return 0
    job = data.get("job")
    if not isinstance(job, str) or job not in {"extension", "train", "extract", "mod", "generate"}:
        return 0
    config = data.get("config")
    if not isinstance(config, Mapping) or not isinstance(config.get("process"), list):
        return 0
    return 12


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """The job YAML, flattened as written (``config.ai_toolkit.config.process.0.model.qtype``)."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    budget = [MAX_ITEMS_PER_FILE]
    facts, prov = flatten(data, parsed, PREFIX, path, budget=budget)
    config = data.get("config")
    processes = config.get("process") if isinstance(config, dict) else None
    if isinstance(processes, list):     # a list stays one fact: each process read on its own
        facts.pop(f"{PREFIX}.config.process", None)
        prov.pop(f"{PREFIX}.config.process", None)
        for i, proc in enumerate(processes[:MAX_PROCESSES]):
            if isinstance(proc, dict):
                flatten(proc, parsed, PREFIX, path, base=("config", "process", i), facts=facts,
                        prov=prov, budget=budget)
    return ReaderOutput(facts, prov)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``run.py`` launch lines: the config files they name, linked (read as the job YAML)."""
    found = megatron_walk.commands(text, outer, _entry, MAX_LAUNCHES)
    if found is None:
        return ReaderOutput(problems=(megatron_walk.not_walked(path, "its ai-toolkit config files were"),))
    lines = [0] + [m.end() for m in re.finditer(r"\n", text)]
    links: list[Linked] = []
    for launch in found:
        skip = False
        for arg in launch.args:
            word = arg.text
            if skip:
                skip = False
                continue
            if word in ("-n", "--name", "-l", "--log"):
                skip = True
                continue
            if word.startswith("-") or "$" in word:
                continue
            line = sum(1 for start in lines if start <= arg.offset)
            links.append(_link(word, path, line))
    facts: dict[str, Any] = {}
    prov: dict[str, Any] = {}
    if links:
        facts[f"{PREFIX}.cli.launch"] = True
        prov[f"{PREFIX}.cli.launch"] = Source(path, links[0].line)
    return ReaderOutput(facts, prov, linked=tuple(links[:MAX_LAUNCHES]))


def _entry(word: str) -> bool:
    return os.path.basename(word) == "run.py"


def _link(word: str, path: str, line: int) -> Linked:
    """A config argument: a path, or a bare name run.py looks for in ``config/``."""
    source = Source(path, line)
    if "." not in os.path.basename(word):
        for ext in (".json", ".jsonc", ".yaml", ".yml"):
            target = os.path.join("config", word + ext)
            if locate(target, path):
                return named(target, KIND, path, source, key="run.py", line=line)
        word = os.path.join("config", word + ".yaml")
    return named(word, KIND, path, source, key="run.py", line=line)


def _storage(v: View, base: str) -> tuple[Any, str]:
    """Whether one process keeps a model's weights in a float8 type."""
    model = f"{base}.model"
    quantize = v.get(f"{model}.quantize", False)
    quantize_te = v.get(f"{model}.quantize_te", quantize)
    verdicts: list[tuple[Any, str]] = []
    for on, key in ((quantize, "qtype"), (quantize_te, "qtype_te")):
        if on is not True:
            continue
        raw = v.get(f"{model}.{key}", "qfloat8")
        src = v.src(f"{model}.{key}", v.src(f"{model}.quantize",
                                            f"ai-toolkit default ({key} qfloat8, {_REPO}/"
                                            "toolkit/config_modules.py#L687-L688)"))
        qtype = str(raw).split("|", 1)[0].strip()
        if qtype in _FP8_QTYPES:
            verdicts.append((True, src))
        elif _OTHER_QTYPES.match(qtype):
            verdicts.append((False, src))
        else:
            verdicts.append((Unknown(f"{key} {qtype[:40]!r} is no qtype ai-toolkit names at "
                                     "27a03a91"), src))
    dtype = v.get(f"{model}.dtype")
    if isinstance(dtype, str) and dtype in _FP8_DTYPES:
        verdicts.append((True, v.src(f"{model}.dtype")))
    hit = next((d for d in verdicts if d[0] is True), None)
    if hit is not None:
        return hit
    unknown = next((d for d in verdicts if isinstance(d[0], Unknown)), None)
    if unknown is not None:
        return unknown
    return False, (verdicts[0][1] if verdicts else
                   v.src(f"{model}.quantize", f"ai-toolkit default (quantize False, {_REPO}/"
                                              "toolkit/config_modules.py#L685)"))


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    bases = [f"config.process.{i}" for i in range(MAX_PROCESSES)
             if any(n.startswith(f"{PREFIX}.config.process.{i}.") for n in f)]
    out["fp8"] = (False, f"ai-toolkit has no FP8 training switch ({_REPO}/toolkit/util/"
                         "quantize.py#L42-L49: quantize / qtype store the frozen weights; the "
                         "adapter trains in train.dtype)")
    if not bases:
        return out.build()
    storage = [_storage(v, b) for b in bases]
    out["fp8_weight_storage"] = (next((s for s in storage if s[0] is True), None) or
                                 next((s for s in storage if isinstance(s[0], Unknown)), None)
                                 or storage[0])
    dtypes = {str(v.get(f"{b}.train.dtype", "fp32")) for b in bases}
    key = f"{bases[0]}.train.dtype"
    src = v.src(key, f"ai-toolkit default (train.dtype fp32, {_REPO}/toolkit/config_modules.py"
                     "#L395)")
    if dtypes & _FP8_DTYPES:
        out["fp8"] = (Unknown("train.dtype float8: ai-toolkit would train in "
                              "torch.float8_e4m3fn (get_torch_dtype), no FP8 recipe"), src)
    if len(dtypes) == 1 and (prec := _PRECISION.get(next(iter(dtypes)))):
        out["precision"] = (prec, src)
    elif len(dtypes) > 1:
        out["precision"] = (Unknown(f"the job's processes train in {sorted(dtypes)}"), src)
    if v.get(f"{bases[0]}.train.gradient_checkpointing") is True:
        out["activation_checkpointing"] = (True, v.src(f"{bases[0]}.train.gradient_checkpointing"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="ai-toolkit (ostris)", formats=("yaml", "json", "text"), score=score,
    read=read, derive=derive, precedence=49, distributions=("ai-toolkit",), from_source=True,
    defaults=(
        Default("model.quantize / quantize_te", "False / quantize", "ai-toolkit 27a03a91",
                f"{_REPO}/toolkit/config_modules.py#L685-L686"),
        Default("model.qtype / qtype_te", "qfloat8 (weight storage)", "ai-toolkit 27a03a91",
                f"{_REPO}/toolkit/config_modules.py#L687-L688"),
        Default("train.dtype", "fp32", "ai-toolkit 27a03a91",
                f"{_REPO}/toolkit/config_modules.py#L395"),
    ),
    launch=Launch(read_text, command=COMMAND, entry=ENTRY),
)
"""Source: ostris/ai-toolkit at 27a03a91 (see the module docstring)."""
