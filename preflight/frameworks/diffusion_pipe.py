"""tdrussell diffusion-pipe: ``deepspeed --num_gpus=N train.py --deepspeed --config X.toml`` and
its TOML (``[model]``, ``[adapter]``, ``[optimizer]``, top-level training settings).

Read at tdrussell/diffusion-pipe 8f83dbf25d03219df705570ec03e62be04bc402f. train.py parses
``--config`` (the TOML, l.42) and DeepSpeed's ``--deepspeed`` / ``--local_rank``; it trains through
DeepSpeed's pipeline engine. ``[model] dtype`` is the autocast dtype (train.py l.107-108, 287:
``common.AUTOCAST_DTYPE``) and ``[model] transformer_dtype`` the dtype the transformer's linear
weights are loaded in (l.109-110; models/qwen_image.py l.249-262 keeps norms, biases and a few
layers in ``dtype``); ``[adapter] dtype`` the LoRA's (l.123-124). Each is a name of
utils/common.py ``DTYPE_MAP`` (l.14-21): float32, float16, bfloat16, float8 (= float8_e4m3fn),
float8_e4m3fn, float8_e5m2. Wan's ``text_encoder_fp8 = true`` stores the text encoder in
float8_e4m3fn (models/wan/wan.py l.188-191).

No setting makes an FP8 GEMM: FP8 weights are upcast for the matmul (utils/patches.py l.66 tests
the float8 weight dtypes for that), README: "float8 ... saves VRAM". So ``intent.fp8`` is false and
``intent.fp8_weight_storage`` says whether weights are kept in a float8 type; a float8 autocast
dtype (``[model] dtype = 'float8'``) is no recipe torch.autocast takes: Unknown.
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
from preflight.reading.parse import Parsed
from preflight.reading.parsefacts import flatten
from preflight.reading.refs import named
from preflight.reading.types import Linked, ReaderOutput

KIND = "diffusion_pipe"
PREFIX = f"config.{KIND}"
_REPO = ("https://github.com/tdrussell/diffusion-pipe/blob/"
         "8f83dbf25d03219df705570ec03e62be04bc402f")
COMMAND = re.compile(r"(?<![\w./-])(?:[\w./-]*/)?train\.py(?:[^\n]|\\\n)*?--config[ \t=]+"
                     r"""["']?[^\s"']+\.toml\b""")
"""diffusion-pipe's train.py given a TOML ``--config`` (README: ``deepspeed --num_gpus=1 train.py
--deepspeed --config examples/hunyuan_video.toml``)."""
ENTRY = re.compile(r"^[ \t]*from[ \t]+utils\.(?:pipeline|patches|isolate_rng|unsloth_utils)"
                   r"[ \t]+import\b", re.M)
"""What diffusion-pipe's train.py holds (``from utils.pipeline import ManualPipelineModule``)."""
MAX_LAUNCHES = 8
ARITY = megatron_walk.Arity(
    bare=frozenset({"deepspeed", "reset_dataloader", "reset_optimizer", "reset_optimizer_params",
                    "regenerate_cache", "cache_only", "trust_cache", "i_know_what_i_am_doing",
                    "test_sample"}),
    needs=frozenset({"config", "num_gpus", "master_port", "local_rank"}), multi=frozenset())
"""train.py's store_true options (l.42-56) and the one-value ones it and the launcher take."""
_FP8 = frozenset({"float8", "float8_e4m3fn", "float8_e5m2"})
_PRECISION = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def score(data: Any) -> int:
    """A diffusion-pipe TOML: a ``[model]`` table with ``type`` and a weights or dtype key, and
    its pipeline / micro-batch settings at the top."""
    if not isinstance(data, Mapping):
        return 0
    model = data.get("model")
    if not isinstance(model, Mapping) or "type" not in model:
        return 0
    if not {"diffusers_path", "transformer_path", "ckpt_path", "dtype"} & set(model):
        return 0
    own = {"pipeline_stages", "micro_batch_size_per_gpu", "eval_micro_batch_size_per_gpu",
           "caching_batch_size", "blocks_to_swap", "activation_checkpointing"} & set(data)
    return 12 if own else 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """The TOML, flattened as written (``config.diffusion_pipe.model.transformer_dtype``)."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(data, parsed, PREFIX, path)
    return ReaderOutput(facts, prov)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """train.py launch lines: the launcher's and train.py's options, the ``--config`` linked."""
    found = megatron_walk.commands(text, outer, _entry, MAX_LAUNCHES)
    if found is None:
        return ReaderOutput(problems=(megatron_walk.not_walked(path, "its diffusion-pipe config was"),))
    if not found:
        return ReaderOutput()
    got = megatron_walk.read(path, text, found, f"{PREFIX}.cli", ARITY)
    facts, prov = dict(got.facts), dict(got.prov)
    links: list[Linked] = []
    target = facts.get(f"{PREFIX}.cli.config")
    if isinstance(target, str) and "$" not in target:
        where = prov.get(f"{PREFIX}.cli.config")
        line = getattr(where, "line", None)
        links.append(named(target, KIND, path, where or Source(path, line), key="--config",
                           line=line))
    facts[f"{PREFIX}.cli.launch"] = True
    prov[f"{PREFIX}.cli.launch"] = next(iter(prov.values()), Source(path, None))
    return ReaderOutput(facts, prov, tuple(got.problems), tuple(links))


def _entry(word: str) -> bool:
    return os.path.basename(word) == "train.py"


def _dtype(v: View, key: str) -> Any:
    raw = v.unknown(key) or v.get(key)
    if isinstance(raw, Unknown) or raw is None:
        return raw
    return str(raw).strip()


def _storage(v: View) -> tuple[Any, str]:
    """Whether any model weights are loaded in a float8 type."""
    for key in ("model.transformer_dtype", "model.dtype"):
        value = _dtype(v, key)
        if isinstance(value, Unknown):
            return value, v.src(key)
        if value in _FP8:
            return True, v.src(key)
    if v.get("model.text_encoder_fp8") is True:
        return True, v.src("model.text_encoder_fp8")
    return False, v.src("model.transformer_dtype", v.src("model.dtype", "diffusion-pipe TOML"))


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    out["fp8"] = (False, f"diffusion-pipe has no FP8 compute ({_REPO}/utils/common.py#L14-L21: "
                         "float8 dtypes are weight storage, upcast for the matmul)")
    out["distributed"] = ("deepspeed", v.src("cli.launch", "diffusion-pipe train.py (DeepSpeed "
                                                           "pipeline engine)"))
    if v.int("cli.num_gpus"):
        out["num_gpus"] = (v.int("cli.num_gpus"), v.src("cli.num_gpus"))
    if not any(n.startswith(f"{PREFIX}.model.") for n in f):
        return out.build()
    out["fp8_weight_storage"] = _storage(v)
    dtype = _dtype(v, "model.dtype")
    src = v.src("model.dtype")
    if isinstance(dtype, Unknown):
        out["fp8"] = (dtype, src)
    elif dtype in _FP8:
        out["fp8"] = (Unknown(f"[model] dtype {dtype!r} is the autocast dtype "
                              f"({_REPO}/train.py#L287): torch.autocast takes no float8 type"),
                      src)
    elif isinstance(dtype, str) and dtype in _PRECISION:
        out["precision"] = (_PRECISION[dtype], src)
    if v.get("activation_checkpointing") is True:
        out["activation_checkpointing"] = (True, v.src("activation_checkpointing"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="diffusion-pipe (tdrussell)", formats=("toml", "text"), score=score,
    read=read, derive=derive, precedence=50, distributions=("diffusion-pipe",),
    from_source=True, runs_on=("deepspeed",),
    defaults=(
        Default("[model] transformer_dtype", "[model] dtype", "diffusion-pipe 8f83dbf2",
                f"{_REPO}/models/qwen_image.py#L249"),
    ),
    launch=Launch(read_text, command=COMMAND, entry=ENTRY),
)
"""Source: tdrussell/diffusion-pipe at 8f83dbf2 (see the module docstring)."""
