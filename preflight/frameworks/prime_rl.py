"""prime-rl (PrimeIntellect-ai/prime-rl): its TOML configs and the launch lines that compose them
(``uv run rl @ x.toml``, :mod:`.prime_rl_launch`), as ``config.prime_rl.*`` facts in the rl
config's key paths.

Read at v0.8.1.dev67 (= 559b4477, 2026-08-20); configs in packages/prime-rl-configs/src/
prime_rl/configs (``trainer.py``, ``inference.py``, ``rl.py``), line numbers there:

- Trainer FP8 is ``[trainer.model.quantization]`` (``ModelConfig.quantization``, default None,
  trainer.py l.248), a union on ``type`` (l.161-175): ``fp8`` (the default variant: an empty
  table turns it on) swaps nn.Linear for prime-rl's own Triton block-wise FP8 linear
  (``Float8BlockwiseLinear``, src/prime_rl/trainer/model.py ``apply_quantization`` l.1197-1221)
  and, with ``enable_grouped_gemm``, DeepGEMM FP8 grouped GEMMs for MoE experts (l.655);
  ``mxfp8`` is torchao's MXFP8 linear and grouped GEMM, refused below SM100 (l.1212-1217).
  Without it the trainer computes in BF16 (FSDP2 ``MixedPrecisionPolicy(param_dtype=
  torch.bfloat16)``, model.py l.824).
- ``trainer.model.compile`` defaults on (``CompileConfig()``, l.188); ``"None"`` turns it off.
- The rollout is vLLM, started by ``rl`` only when ``[inference]`` is given (``RLConfig.inference``
  default None, rl.py l.234: else the orchestrator uses a server started elsewhere). A
  trainer launched alone (``uv run trainer``, ``.../trainer/rl/train.py``) names no server:
  its rollout is read from an ``inference`` launch the user names too, else (as for an ``rl``
  config without ``[inference]``) at vLLM's defaults over the model the trainer trains and
  sends (:mod:`.rollout_apart`). Its model
  is ``[inference.vllm] model``, filled from the shared ``[model] name`` when absent
  (utils/validation.py ``propagate_shared_fields``), default ``Qwen/Qwen3-0.6B``. FP8 comes from
  ``[inference.vllm] quantization`` (None: vLLM infers it from the checkpoint, inference.py
  l.108) or the checkpoint itself (an ``-FP8`` model; :mod:`.ckptconfig`);
  ``[weight_broadcast] quantize_in_weight_transfer = true`` re-quantizes the trainer's weights
  to FP8 kernel format on every update (transports/weights/nccl.py l.152). Other vLLM arguments
  pass through verbatim: ``kv_cache_dtype`` (vLLM default ``auto``).
- The loss (``trainer.loss``, trainer.py l.494-532, src/prime_rl/trainer/rl/loss.py):
  ``default`` (DPPO + KL) and ``ipo`` both weight each token's advantage by the importance ratio
  ``exp(trainer_logprobs - inference_logprobs)`` and mask tokens whose probability moved past a
  threshold (``default_loss_fn`` l.109-149, ``ipo_loss_fn`` l.164-188): the rollout/trainer
  mismatch is corrected; ``custom`` is the user's function (not read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.ckptconfig import weights
from preflight.frameworks.prime_rl_launch import HINT, KIND, PREFIX, score
from preflight.frameworks.prime_rl_launch import read_text as read_launch
from preflight.reading.overridelaunch import base_unread
from preflight.reading.parse import Parsed
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

_REL = "PrimeIntellect-ai/prime-rl@v0.8.1.dev67"
_CFG = f"{_REL} packages/prime-rl-configs/src/prime_rl/configs"
_VLLM_DEFAULT = "Qwen/Qwen3-0.6B"
WEIGHTS = f"{PREFIX}.rollout_weights"
"""What the rollout model's checkpoint holds (FP8 or not), decided at read time: its
config.json when the folder is inside the job, else its name (:mod:`.ckptconfig`)."""
SENT = f"{PREFIX}.trainer_weights"
"""What the checkpoint of a trainer launched alone holds (``trainer.model.name``): the model its
vLLM server, launched apart, serves and takes the trainer's weights into."""
_ROLLS = frozenset({None, "rl"})
_TRAINS = frozenset({None, "rl", "trainer", "sft"})
_FP8_QUANT = frozenset({"fp8", "ptpc_fp8", "fbgemm_fp8", "fp8_per_block", "mxfp8"})
_NOT_FP8 = frozenset({"awq", "gptq", "awq_marlin", "gptq_marlin", "bitsandbytes", "gguf",
                      "mxfp4", "int8", "experts_int8", "none"})
def _model(facts: Mapping[str, Any]) -> tuple[str, Any]:
    """The key the rollout model comes from, and its value (the default when none is given)."""
    # `[inference.model] name` / `[inference] quantization`: prime-rl v0.6.0-v0.8.0's layout
    # (configs/inference.py ModelConfig l.37, InferenceConfig.quantization l.363 at v0.8.0),
    # before `[inference.vllm]` (v0.8.1.dev)
    for key in ("inference.vllm.model", "inference.model.name", "model.name"):
        if f"{PREFIX}.{key}" in facts:
            return key, facts[f"{PREFIX}.{key}"]
    return "", _VLLM_DEFAULT


def _with_weights(path: str, out: ReaderOutput, fact: str = WEIGHTS) -> ReaderOutput:
    facts, prov = dict(out.facts), dict(out.provenance)
    key, model = _model(facts) if fact == WEIGHTS else (
        "trainer.model.name", facts.get(f"{PREFIX}.trainer.model.name", _VLLM_DEFAULT))
    held = weights(model, path)
    facts[fact] = held.fp8
    prov[fact] = str(held.source) if held.source is not None else prov.get(
        f"{PREFIX}.{key}", f"{_CFG}/inference.py l.57 (model = {_VLLM_DEFAULT})")
    return ReaderOutput(facts, prov, out.problems, out.linked)


_plain = read_plain(PREFIX)


def read_toml(path: str, parsed: Parsed) -> ReaderOutput:
    return _with_weights(path, _plain(path, parsed))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    out = read_launch(path, text, outer)
    # a trainer launched alone starts no server, but its model is the one the server serves
    # and takes its weights from (_apart): kept apart from the weights an inference launch
    # named too states (that one decides where given)
    alone = out.facts.get(f"{PREFIX}.entry") == "trainer"
    return _with_weights(path, out, SENT if alone else WEIGHTS) if out.facts else out


def _off(value: Any) -> bool:
    """An optional sub-config turned off: ``"None"`` in TOML, ``--no-x`` (False)."""
    return value is False or value is None or (isinstance(value, str) and
                                               value.strip() == "None")


def _fp8(v: View, out: IntentOut, unread: Unknown | None) -> None:
    key = "trainer.model.quantization"
    if not v.any_prefix(key):
        if unread is not None:
            out["fp8"] = (unread, v.src("base_config"))
            return
        out["fp8"] = (False, f"{_CFG}/trainer.py l.248 (quantization = None)")
        out["precision"] = ("bf16", f"{_REL} src/prime_rl/trainer/model.py l.824 (FSDP2 "
                                    "param_dtype bfloat16)")
        return
    whole = v.facts.get(f"{PREFIX}.{key}")
    if isinstance(whole, Unknown):
        out["fp8"] = (whole, v.src(key))
        return
    if v.has(key) and _off(whole):
        out["fp8"] = (False, v.src(key))
        out["precision"] = ("bf16", v.src(key))
        return
    if whole is True and str(v.src(key)).rpartition(":")[0].endswith((".toml", ".json")):
        # pydantic-config turns a bare `--x` of an optional sub-config into {} on the command
        # line only (_expand_bare_optional_flags, PrimeIntellect-ai/pydantic-config 010bec17);
        # a file's `true` reaches pydantic, and ModelConfig.quantization has no validator making
        # it {} (trainer.py l.248; optimizer offload's l.77-82 has one)
        out["fp8"] = (Unknown("trainer.model.quantization = true is no table (fp8 / mxfp8 "
                              "config): pydantic refuses the config"), v.src(key))
        return
    if v.has(key) and whole is not True and not isinstance(whole, dict):
        # `quantization = "fp8"`: a string where pydantic wants the table (redteam11: read as
        # the table turned on)
        out["fp8"] = (Unknown(f"trainer.model.quantization = {str(whole)[:40]!r} is no table "
                              "(fp8 / mxfp8 config): pydantic refuses the config"), v.src(key))
        return
    # an Unknown type (`--...quantization.type $QT`, or given by one of two launch lines) is
    # no "fp8" default (redteam11: View.get gave the default, FP8 "yes" blockwise)
    kind = v.unknown(f"{key}.type") or v.get(f"{key}.type", "fp8")
    src = v.src(f"{key}.type", v.src(key))
    if isinstance(kind, Unknown):
        out["fp8"] = (kind, src)
        return
    if kind == "fp8":
        out["fp8"], out["recipe"] = (True, src), ("blockwise", src)
        out["backend"] = (Unknown("prime-rl's own Triton block-wise FP8 linear "
                                  "(Float8BlockwiseLinear) is no backend fp8-doctor names"), src)
    elif kind == "mxfp8":
        out["fp8"], out["recipe"], out["backend"] = (True, src), ("mxfp8", src), ("torchao", src)
    else:
        out["fp8"] = (Unknown(f"trainer.model.quantization.type {str(kind)[:40]!r} is neither "
                              "fp8 nor mxfp8: pydantic refuses the config"), src)


def _checkpoint(v: View) -> tuple[Any, str]:
    """What the rollout checkpoint alone says (FP8 or not), and where."""
    held = v.facts.get(WEIGHTS)
    key, model = _model(v.facts)
    src = v.src("rollout_weights", v.src(key))
    if held is None and SENT in v.facts:      # a trainer launched alone: the model it sends
        return v.facts[SENT], v.src("trainer_weights", v.src("trainer.model.name"))
    if held is None:       # read without the reader that decides it (never in practice)
        return Unknown(f"the weights of {str(model)[:80]!r} were not looked at"), src
    return held, src


def _rollout_fp8(v: View, out: IntentOut) -> None:
    qkey = "inference.quantization" if v.has("inference.quantization") and not v.has(
        "inference.vllm.quantization") else "inference.vllm.quantization"   # v0.8.0's layout
    quant, qsrc = v.get(qkey), v.src(qkey)
    held, hsrc = _checkpoint(v)
    fp8: Any
    if v.unknown(qkey) is not None:
        fp8, src = v.unknown(qkey), qsrc
    elif isinstance(quant, str) and quant.strip().lower() in _FP8_QUANT:
        fp8, src = True, qsrc      # vLLM quantizes the checkpoint's weights on load
    elif isinstance(quant, str) and quant.strip().lower() in _NOT_FP8:
        fp8, src = False, qsrc
    elif quant is not None and not _off(quant):
        fp8, src = Unknown(f"{qkey} {str(quant)[:40]!r} is handed to vLLM "
                           "as is; whether it serves FP8 depends on the checkpoint"), qsrc
    else:
        fp8, src = held, hsrc      # None: vLLM infers the method from the checkpoint
    wb = "weight_broadcast.quantize_in_weight_transfer"
    if not v.has(wb):
        wb = "trainer.weight_broadcast.quantize_in_weight_transfer"
    moved = v.unknown(wb) or v.get(wb)
    if isinstance(moved, Unknown) and fp8 is not True:
        fp8, src = moved, v.src(wb)     # FP8 weights sent, or not: not known here
    elif moved is True or (isinstance(moved, str) and moved.strip().lower() == "true"):
        if fp8 is True:
            src = f"{src}; {v.src(wb)} (weights re-quantized to FP8 on every update)"
        elif fp8 is False:
            fp8 = Unknown(f"{wb} = true sends FP8 kernel-format weights to a vLLM that "
                          "serves no FP8 layers by its model and quantization; the job is "
                          "not one prime-rl runs as written")
            src = v.src(wb)
    out["rollout.fp8"] = (fp8, src)


def _rollout(v: View, out: IntentOut, served: bool) -> None:
    if not served and not v.any_prefix("inference"):
        # no [inference]: the rl launcher starts no server (rl.py l.234), the orchestrator's
        # is started elsewhere -- read at vLLM's defaults over the model, as a trainer alone
        _elsewhere(v, out, f"{v.src('entry', 'intent')} (no [inference]: {_CFG}/rl.py l.234)")
        return
    out["rollout.engine"] = ("vllm", v.src("inference", f"{_CFG}/inference.py l.42"))
    _rollout_fp8(v, out)
    kv = v.get("inference.vllm.kv_cache_dtype")
    out["rollout.kv_cache_fp8"] = (
        apart.kv_fp8(v.unknown("inference.vllm.kv_cache_dtype") or kv),
        v.src("inference.vllm.kv_cache_dtype",
              f"{_CFG}/inference.py l.42-48 (kv_cache_dtype not set: vLLM's auto)"))


def _apart(v: View, out: IntentOut) -> None:
    """A trainer launched alone (``uv run trainer`` / ``torchrun .../trainer/rl/train.py``, the
    split layout of a multi-node run: holdout23's prime-rl fork). Its vLLM server is another
    launch (``uv run inference @ infer.toml``), which nothing of the trainer's names: the
    orchestrator reaches it by URL (``[client] base_url``, orchestrator config). The rollout is
    read from that launch where the user names it too (its ``inference.*`` facts), never from a
    file beside the trainer's that nothing names (the job is what the user named and what it
    references); without it, at vLLM's defaults over the model the trainer trains and sends
    (:mod:`.rollout_apart`: quantization None serves the checkpoint's precision)."""
    if v.any_prefix("inference"):
        _rollout(v, out, served=True)
        return
    _elsewhere(v, out, v.src("entry", "intent"))


def _elsewhere(v: View, out: IntentOut, src: str) -> None:
    """The rollout of a server started apart from the files given (:mod:`.rollout_apart`)."""
    # prime-rl's trainer hands its weights to prime-rl's own vLLM server (the weight broadcast
    # reloads them through its worker extension), so the engine is vLLM
    out["rollout.engine"] = ("vllm", f"{src} ({_CFG}/inference.py: prime-rl's inference "
                                     "server is vLLM)")
    _rollout_fp8(v, out)
    apart.put(out, *out["rollout.fp8"], "vllm")


def _correction(v: View, out: IntentOut) -> None:
    kind = v.get("trainer.loss.type", "default")
    src = v.src("trainer.loss.type", f"{_CFG}/trainer.py l.604 (loss = DefaultLossConfig())")
    if v.unknown("trainer.loss.type") is not None:
        out["rollout.is_correction"] = (v.unknown("trainer.loss.type"), src)
    elif kind in ("default", "ipo"):
        out["rollout.is_correction"] = (True, f"{src} ({_REL} src/prime_rl/trainer/rl/loss.py "
                                              f"{kind}_loss_fn: advantages x exp(trainer - "
                                              "inference logprobs), trust-region masking)")
    else:
        out["rollout.is_correction"] = (Unknown(
            f"trainer.loss.type {str(kind)[:40]!r}: a loss function of the user's "
            "(import_path), not read here"), src)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    entry = v.get("entry")
    unread = base_unread(v.facts, KIND)
    if entry in _TRAINS:
        _fp8(v, out, unread)
        compile_ = v.facts.get(f"{PREFIX}.trainer.model.compile")
        if isinstance(compile_, Unknown):
            out["compile"] = (compile_, v.src("trainer.model.compile"))
        elif v.has("trainer.model.compile"):
            out["compile"] = (not _off(compile_), v.src("trainer.model.compile"))
        elif not v.any_prefix("trainer.model.compile"):
            out.default("compile", (True, f"{_CFG}/trainer.py l.188 (compile = CompileConfig())"))
        else:
            out["compile"] = (True, v.src("trainer.model.compile"))
        out["distributed"] = ("fsdp2", f"{_REL} src/prime_rl/trainer/model.py l.824 (FSDP2)")
        sizes: tuple[tuple[Stated, str], ...] = (
            ("cp", "trainer.model.cp"), ("ep", "trainer.model.ep"), ("tp", "trainer.model.tp"),
            ("seq_len", "trainer.model.seq_len"), ("seq_len", "seq_len"))
        for name, key in sizes:
            if name in out:
                continue        # an explicit trainer.model.seq_len wins over the shared one
            n = v.int(key)
            if n is not None:
                out[name] = (n, v.src(key))
    elif entry in ("inference", "orchestrator"):
        out["fp8"] = (False, f"{v.src('entry')} ({entry}: no training)")
    if entry in _ROLLS or entry == "inference":
        if unread is not None:
            out["rollout.fp8"] = (unread, v.src("base_config"))
        else:
            _rollout(v, out, served=entry == "inference")
    elif entry == "trainer":
        _apart(v, out)
    algo = v.unknown("orchestrator.algo.type")
    if entry in ("rl", "trainer", None) and algo is not None:
        # redteam11: an Unknown algorithm was read as "not SFT"; SFT has no rollout to correct
        out["rollout.is_correction"] = (algo, v.src("orchestrator.algo.type"))
    elif entry in ("rl", "trainer", None) and v.get("orchestrator.algo.type") != "sft":
        _correction(v, out)
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="prime-rl", formats=("toml", "text"), score=score, read=read_toml,
    derive=derive, precedence=32,
    duplicate_keys="error",          # tomllib refuses a key given twice
    references=(Reference("@", KIND, "a TOML the launch line composes, a path relative to "
                                     "the launch directory"),),
    defaults=(
        Default("trainer.model.quantization", "None (BF16)", "prime-rl 0.8.1.dev67",
                "packages/prime-rl-configs/src/prime_rl/configs/trainer.py ModelConfig"),
        Default("trainer.model.compile", "CompileConfig() (on)", "prime-rl 0.8.1.dev67",
                "packages/prime-rl-configs/src/prime_rl/configs/trainer.py ModelConfig"),
        Default("inference.vllm.quantization", "None (from the checkpoint)",
                "prime-rl 0.8.1.dev67",
                "packages/prime-rl-configs/src/prime_rl/configs/inference.py VllmConfig"),
        Default("trainer.loss.type", "default (DPPO + KL, importance ratio)",
                "prime-rl 0.8.1.dev67",
                "packages/prime-rl-configs/src/prime_rl/configs/trainer.py TrainerConfig"),
    ),
    distributions=("prime-rl",), from_source=True,
    rule_area="PRIME", area_title="prime-rl",
    launch=Launch(read_text, command=HINT, trains=(("rl",), ("trainer",), ("sft",))),
    bool_keys=("weight_broadcast.quantize_in_weight_transfer",
               "trainer.weight_broadcast.quantize_in_weight_transfer"),
    bool_on_off=True,
    file_strings="words",
    file_strings_why="pydantic BaseModel fields (packages/prime-rl-configs/src/prime_rl/"
                     "configs) convert 'true' / 'false' to booleans",
    shape_keys=(("model", ("trainer.model.name", "model.name")),),
)
