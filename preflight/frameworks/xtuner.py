"""XTuner V1 (InternLM/xtuner ``xtuner/v1``): its Python configs, parsed and never imported
(xtuner loads them by running them: ``Config.fromfile(config)["trainer"]``), and the launch
line that names one: ``torchrun ... xtuner/v1/train/cli/sft.py --config cfg.py`` (also
``python -m xtuner.v1.train.cli.sft``, and ``cli/rl.py --config``).

Read at v1.0.0rc0 (7f4f794e, 2025-11-17), v1.0.1 (91e30dd1, 2026-05-15) and b934f462
(2026-08-21), alike in what follows (line numbers at b934f462):

- FP8 is the model config's ``float8_cfg`` (``XTunerBaseModelConfig.float8_cfg: Float8Config |
  None = None``, ``xtuner/v1/model/base.py`` l.127), used when ``enable_float8`` (``base.py``
  l.996-1000): ``Float8Config(scaling_granularity_gemm=, scaling_granularity_grouped_gemm=)``
  (``xtuner/v1/float8/config.py``), each a ``ScalingGranularity`` (TILEWISE, BLOCKWISE,
  TENSORWISE) or None; both None is no FP8. ``Float8Handler`` (``float8_handler.py`` l.58-71)
  accepts only TILEWISE / TENSORWISE (an assert stops the job on BLOCKWISE); below compute
  capability 8.9 it logs a warning and returns, but the layers are float8 ones whatever the GPU
  (``module/linear/linear.py`` ``build_linear``), so the FP8 GEMMs fail (FP8D-HW-0001).
- TILEWISE is DeepSeek-V3-style fine-grained scaling, 1x128 tiles of activations and 128x128
  blocks of weights (docs/en/pretrain_sft/advanced_tutorial/float8.md; ``recipe`` blockwise
  here), computed by xtuner's own kernels on AdaptiveGEMM (``adaptive_gemm.gemm_fp8_fp8_bf16_nt``,
  DeepGEMM-derived; ``float8_linear_tile_wise.py`` l.20, l.91; ``pip install
  git+https://github.com/InternLM/AdaptiveGEMM``): no backend of fp8-doctor's vocabulary, so
  ``intent.backend`` is Unknown saying so. TENSORWISE GEMMs are ``torch._scaled_mm``
  (``float8_linear_tensor_wise.py`` l.58): backend ``scaled_mm``.
- ``Config.fromfile(...)["trainer"]``: the ``TrainerConfig(model_cfg=...)`` of the file
  (``xtuner/v1/train/trainer.py`` l.393-400), or a script's ``Trainer(model_cfg=...)``
  (l.524-528). A Float8Config no trainer of the file takes is not the job's FP8; with no trainer
  in the file at all it is Unknown.
- ``compile_cfg=False`` turns torch.compile off (None / True: the model's default compile);
  ``ep_size`` is the expert-parallel size.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.frameworks.xtuner_sizes import experts, shard_size
from preflight.reading import shellcalls
from preflight.reading.launchenv import process_env
from preflight.reading.overridelaunch import LaunchRead, Syntax, find_launch
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.refs import named
from preflight.reading.shellvars import collect_variables, strip_comments
from preflight.reading.types import Linked, ReaderOutput

KIND = "xtuner"
PREFIX = f"config.{KIND}"
_SRC = "InternLM/xtuner@b934f462"
PY_HINT = re.compile(r"\bxtuner\.v1\b|\bfrom xtuner\b")
FLOAT8 = re.compile(r"^xtuner\.v1\.float8(?:\.\w+)*\.Float8Config$")
TRAINER = re.compile(r"^xtuner\.v1\.train(?:\.\w+)*\.(?:TrainerConfig|Trainer)$")
MODEL = re.compile(r"^xtuner\.v1\.(?:model|config)(?:\.\w+)*\.\w+Config$")
LOADER = re.compile(r"^xtuner\.v1\.utils(?:\.\w+)*\.Config\.fromfile$")
GRAN = ("scaling_granularity_gemm", "scaling_granularity_grouped_gemm")
_RECIPE = {"tilewise": "blockwise", "tensorwise": "tensorwise"}
ENTRY = re.compile(r"(?:^|/)xtuner/v1/train/cli/(?:sft|rl)\.py$|"
                   r"^xtuner\.v1\.train\.cli\.(?:sft|rl)$")
HINT = re.compile(r"xtuner/v1/train/cli/(?:sft|rl)\.py|xtuner\.v1\.train\.cli\.(?:sft|rl)\b")
# TrainingArguments (xtuner/v1/train/arguments/arguments.py l.37-111 @ b934f462): sft.py takes
# them instead of --config (cli/sft.py l.29-35); --model-cfg names a Python file whose `model`
# is the model config (l.217-222: Config.fromfile(model_cfg)["model"]) or a registered name
ARGS = frozenset({"model-cfg", "model_cfg", "load-from", "load_from", "chat-template",
                  "chat_template", "tokenize-fn", "tokenize_fn", "tokenizer-path",
                  "tokenizer_path", "dataset", "cache-dir", "cache_dir", "max-length",
                  "max_length", "lr", "optim", "work-dir", "work_dir", "total-step",
                  "total_step", "epoch-num", "epoch_num", "global-batch-size",
                  "global_batch_size"})
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({"config", *ARGS}))
MODEL_ENTRY = "model"
"""What xtuner takes from a ``--model-cfg`` file (``Config.fromfile(...)["model"]``)."""
def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``... xtuner/v1/train/cli/sft.py --config cfg.py``: the config, linked to be read as
    Python (xtuner runs it; this reads it with ``ast``)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    line = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    facts: dict[str, Any] = {f"{PREFIX}.entry": read.launch.entry.text}
    prov: dict[str, str] = {f"{PREFIX}.entry": line}
    config = read.flag("config")
    linked: list[Linked] = []
    if config is None:
        _arguments(path, text, outer, read, facts, prov, linked)
    elif isinstance(config[0], str) and "$" not in config[0]:
        # xtuner runs the config in the training process (Config.fromfile): its os.environ
        # lookups see what the launch line gives (examples/v1/config/sft_qwen3p5.py: FP8=1)
        clean = strip_comments(text.replace("\r\n", "\n"))
        caller = outer.get(shellcalls.CALLER, path)
        env = process_env(path, clean, read.launch.entry.offset, collect_variables(clean, outer, script=path),
                          [(n, caller) for n in outer.get(shellcalls.ENVIRON, "").split(",")
                           if n])
        linked.append(replace(named(config[0], KIND, path, config[1], key="--config",
                                    line=config[1].line),
                              environ=env))
        facts[f"{PREFIX}.config"], prov[f"{PREFIX}.config"] = config
    else:
        value = config[0]
        facts[f"{PREFIX}.base_config"] = Unknown(
            f"--config {value.reason if isinstance(value, Unknown) else str(value)[:80]!r} is "
            "known only when the launch script runs")
        prov[f"{PREFIX}.base_config"] = config[1]
    return ReaderOutput(facts, prov, tuple(read.problems), tuple(linked))


def _arguments(path: str, text: str, outer: dict[str, str], read: LaunchRead,
               facts: dict[str, Any], prov: dict[str, Any], linked: list[Linked]) -> None:
    """sft.py's TrainingArguments flags (no --config): the ``--model-cfg`` file followed (its
    ``model``), a registered model name kept; ``--float8-config.*`` flags set the model's
    float8_cfg (to_trainer_config, arguments.py l.141-142), not read here: Unknown."""
    line = Source(path, text.count("\n", 0, read.launch.offset) + 1) if read.launch else path
    f8 = next((k for k in read.flags if k.replace("_", "-").startswith("float8-config")), None)
    if f8 is not None:
        facts[f"{PREFIX}.float8_cfg"] = Unknown(
            f"--{f8} on the launch line sets the model's float8_cfg (TrainingArguments "
            "float8_config), not read here")
        prov[f"{PREFIX}.float8_cfg"] = read.flags[f8][1]
    model = read.flag("model-cfg", "model_cfg")
    if model is None:
        facts[f"{PREFIX}.base_config"] = Unknown(
            "the launch line gives no --config and no --model-cfg (the model comes from "
            "--load-from's HF config, not read here)")
        prov[f"{PREFIX}.base_config"] = line
        return
    value, where = model
    if isinstance(value, str) and value.endswith(".py") and "$" not in value:
        link = named(value, KIND, path, where, key="--model-cfg", line=where.line)
        linked.append(replace(link, entry=MODEL_ENTRY))
        facts[f"{PREFIX}.model_cfg_file"], prov[f"{PREFIX}.model_cfg_file"] = model
    elif isinstance(value, str) and "$" not in value:
        # a name of xtuner's model registry (get_model_config): float8_cfg None there
        facts[f"{PREFIX}.model_cfg_name"], prov[f"{PREFIX}.model_cfg_name"] = model
    else:
        facts[f"{PREFIX}.base_config"] = Unknown(
            f"--model-cfg {value.reason if isinstance(value, Unknown) else str(value)[:80]!r} "
            "is known only when the launch script runs")
        prov[f"{PREFIX}.base_config"] = where


def _gran(value: Any) -> Any:
    """A ScalingGranularity as its value (``ScalingGranularity.TILEWISE`` or ``"tilewise"``)."""
    if isinstance(value, Ref):
        return value.last.lower()
    if isinstance(value, str):
        return value.lower()
    return value


def read_python(module: Module) -> ReaderOutput:
    """The trainer's ``model_cfg`` and its ``float8_cfg`` -> ``config.xtuner.*``."""
    out = PyOut(module)
    floats: list[Call] = []
    trainers: list[Call] = []
    for call, _ in out.calls():
        if FLOAT8.match(call.func):
            floats.append(call)
        elif TRAINER.match(call.func):
            trainers.append(call)
        elif LOADER.match(call.func):
            # the CLI entry (cli/sft.py l.37): the trainer is the --config file's, read there
            out.put(f"{PREFIX}.loads_config", call.func.rsplit(".", 2)[-2] + ".fromfile",
                    call.line)
    for call in trainers:
        with out.made(call):
            out.put(f"{PREFIX}.trainer", call.name, call.line)
            _resume(out, call)
            _fsdp(out, call)
            model = call.value("model_cfg")
            line = call.lines.get("model_cfg", call.line)
            if not isinstance(model, Call):
                out.put(f"{PREFIX}.float8_cfg", model if isinstance(model, Unresolved) else
                        Unresolved(f"model_cfg at line {line} is not built in this file"), line)
                continue
            _model(out, model)
    if not trainers and module.entry == MODEL_ENTRY:
        # a --model-cfg file: its `model` is the model config (arguments.py l.217-222)
        end = max((getattr(n, "end_lineno", 0) or 0 for n in module.tree.body), default=0)
        name = ast.Name(id="model", ctx=ast.Load(), lineno=end + 1, col_offset=0,
                        end_lineno=end + 1, end_col_offset=5)   # its value at the file's end
        model = module.evaluate(name, module.module)
        if isinstance(model, Call) and MODEL.match(model.func):
            with out.made(model):
                _model(out, model)
        else:
            out.put(f"{PREFIX}.float8_cfg", model if isinstance(model, Unresolved) else
                    Unresolved("the --model-cfg file builds no `model = ...Config(...)` "
                               "read here"), getattr(model, "line", 1) or 1)
        return out.output()
    if not trainers and floats:
        first = floats[0]
        out.put(f"{PREFIX}.float8_cfg", Unresolved(
            f"a Float8Config is built at line {first.line}, but no TrainerConfig / Trainer in "
            "this file takes it: whether the job uses it is not known"), first.line)
    return out.output()


def _resume(out: PyOut, call: Call) -> None:
    """What restarts from a checkpoint (TrainerConfig ``auto_resume``, ``resume_cfg=
    ResumeConfig(auto_resume=)``, ``load_checkpoint_cfg=LoadCheckpointConfig(checkpoint_path=)``,
    trainer.py l.417-419 @ b934f462, alike at v1.0.1): the float8 resume failure of xtuner 1.0.1
    is a rule's (ledger/InternLM__xtuner.yaml)."""
    if "auto_resume" in call.kwargs:
        out.put(f"{PREFIX}.auto_resume", call.kwargs["auto_resume"],
                call.lines.get("auto_resume", call.line))
    for key, field in (("resume_cfg", "auto_resume"), ("load_checkpoint_cfg", "checkpoint_path")):
        inner = call.kwargs.get(key)
        if isinstance(inner, Call) and field in inner.kwargs:
            out.put(f"{PREFIX}.{key}.{field}", inner.kwargs[field],
                    inner.lines.get(field, inner.line))


def _fsdp(out: PyOut, call: Call) -> None:
    """``fsdp_cfg=FSDPConfig(ep_size=, hsdp_sharding_size=, tp_size=)``: with the model's
    ``ep_size`` they give the FSDP shard mesh (``fsdp_shard_size``: the tile-wise all-gather
    failure of xtuner PR 1948 is a rule's, FP8D-XTUNER-0002)."""
    if "fsdp_cfg" not in call.kwargs:
        return
    inner = call.value("fsdp_cfg")
    line = call.lines.get("fsdp_cfg", call.line)
    if not isinstance(inner, Call):
        out.put(f"{PREFIX}.fsdp_cfg", inner if isinstance(inner, Unresolved) else Unresolved(
            f"fsdp_cfg at line {line} is not built in this file"), line)
        return
    out.put(f"{PREFIX}.fsdp_cfg", inner.name, line)
    for key in ("ep_size", "hsdp_sharding_size", "tp_size"):
        if key in inner.kwargs:
            out.put(f"{PREFIX}.fsdp_cfg.{key}", inner.kwargs[key], inner.lines.get(key, inner.line))
    if inner.star is not None:
        out.put(f"{PREFIX}.fsdp_cfg", Unresolved(f"fsdp_cfg at line {line} takes **{{...}} "
                                                 "this file does not give"), line)


def _model(out: PyOut, model: Call) -> None:
    out.put(f"{PREFIX}.model_cfg", model.name, model.line)
    for key in ("compile_cfg", "ep_size", "n_routed_experts", "num_experts_per_tok"):
        if key in model.kwargs:
            out.put(f"{PREFIX}.model_cfg.{key}", model.kwargs[key],
                    model.lines.get(key, model.line))
    found = list(_float8s(model, model.line, 0))
    if model.star is not None:
        found.append(("float8_cfg", model.star, model.star.line or model.line))
    if not found:
        out.put(f"{PREFIX}.float8_cfg", None, model.line)       # base.py l.127 default
        return
    for where, value, line in found:
        if isinstance(value, Call) and FLOAT8.match(value.func):
            out.put(f"{PREFIX}.float8_cfg", "Float8Config", value.line)
            for key in GRAN:
                out.put(f"{PREFIX}.float8_cfg.{key}", _gran(value.value(key)),
                        value.lines.get(key, value.line))
        elif value is None or isinstance(value, Unresolved):
            out.put(f"{PREFIX}.float8_cfg", value, line)
        else:
            out.put(f"{PREFIX}.float8_cfg", Unresolved(
                f"{where} at line {line} is not a Float8Config built in this file"), line)


def _float8s(call: Any, line: int, depth: int) -> Any:
    """Every ``float8_cfg`` the model config sets, its own or a sub-config's
    (``model_cfg.text_config.float8_cfg = Float8Config(...)``: the Qwen3.5-VL configs of
    examples/v1/config/sft_qwen3p5.py), as (path, value, line)."""
    if depth > 3:
        return
    if isinstance(call, Call):
        items, lines = call.kwargs.items(), call.lines
        line = call.line
    elif isinstance(call, tuple) and len(call) == 2 and isinstance(call[1], dict):
        items, lines = call[1].items(), {}       # attributes set on a default sub-config
    elif isinstance(call, dict):
        items, lines = call.items(), {}
    else:
        return
    for key, value in list(items)[:256]:
        at = lines.get(key) or getattr(value, "line", None) or line
        if key == "float8_cfg":
            yield key, value, at
        else:
            for where, inner, inner_line in _float8s(value, at, depth + 1):
                yield f"{key}.{where}", inner, inner_line


def score(data: Any) -> int:
    """XTuner V1 configs are Python: no data file of its own."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("XTuner V1 is read from its Python config (the file --config names)")


def _recipe(v: View) -> tuple[Any, Any, str]:
    """(recipe, backend, source) of the two granularities."""
    given = {k: v.facts.get(f"{PREFIX}.float8_cfg.{k}") for k in GRAN}
    src = v.src(f"float8_cfg.{GRAN[0]}") if given[GRAN[0]] is not None else \
        v.src(f"float8_cfg.{GRAN[1]}")
    for key, value in given.items():
        if isinstance(value, Unknown):
            return value, value, v.src(f"float8_cfg.{key}")
        if value is not None and (not isinstance(value, str) or value not in _RECIPE):
            # a list or set (unhashable: redteam10's traceback) is no ScalingGranularity either
            why = Unknown(f"{key} {str(value)[:40]!r} is not TILEWISE or TENSORWISE: "
                          "Float8Handler's assert stops the job (float8_handler.py l.64-71)")
            return why, why, v.src(f"float8_cfg.{key}")
    names = {value for value in given.values() if value is not None}
    if len(names) > 1:
        why = Unknown(f"GEMMs {given[GRAN[0]]} and grouped GEMMs {given[GRAN[1]]}: two "
                      "scalings in one model")
        return why, why, src
    name = names.pop()
    if name == "tensorwise":
        return "tensorwise", "scaled_mm", src
    return "blockwise", Unknown(
        "xtuner's own tile-wise FP8 kernels (AdaptiveGEMM, derived from DeepGEMM: "
        "float8_linear_tile_wise.py) are no backend fp8-doctor names"), src


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    fc = v.facts.get(f"{PREFIX}.float8_cfg")
    if isinstance(fc, Unknown):
        out["fp8"] = (fc, v.src("float8_cfg"))
    elif fc == "Float8Config":
        grans = [v.facts.get(f"{PREFIX}.float8_cfg.{k}") for k in GRAN]
        if all(g is None for g in grans):
            out["fp8"] = (False, v.src("float8_cfg") + " (Float8Config with no scaling "
                                                        "granularity: enable_float8 is False)")
        else:
            recipe, backend, src = _recipe(v)
            out["fp8"] = (True, src)
            out["recipe"] = (recipe, src)
            out["backend"] = (backend, src)
            out["format"] = ("e4m3", src + " (float8_e4m3fn, float8_utils.py)")
    elif v.has("model_cfg") or v.has("float8_cfg"):
        out["fp8"] = (False, v.src("float8_cfg", v.src("model_cfg") + f" ({_SRC} "
                                   "xtuner/v1/model/base.py l.127: float8_cfg = None)"))
    elif v.has("base_config"):
        out["fp8"] = (v.facts[f"{PREFIX}.base_config"], v.src("base_config"))
    elif v.has("model_cfg_name"):
        out["fp8"] = (False, v.src("model_cfg_name") + f" ({_SRC} a registered model config: "
                      "xtuner/v1/model/base.py l.127 float8_cfg = None)")
    if v.has("model_cfg.compile_cfg"):
        compiled = v.get("model_cfg.compile_cfg")
        if compiled is False:
            out["compile"] = (False, v.src("model_cfg.compile_cfg"))
    experts(v, out)
    ep = v.int("model_cfg.ep_size")
    if ep is not None:
        out["ep"] = (ep, v.src("model_cfg.ep_size"))
    fsdp_ep = v.int("fsdp_cfg.ep_size")
    if fsdp_ep is not None and fsdp_ep > 1 and (ep is None or ep == 1):
        out["ep"] = (fsdp_ep, v.src("fsdp_cfg.ep_size"))     # trainer.py l.1717-1719 @ v1.0.1
    gpus, nodes = v.int("launch.nproc_per_node"), v.int("launch.nnodes")
    if gpus is not None and gpus > 0:        # the torchrun line (jobs/launchfacts.py)
        out["num_gpus"] = (gpus * (nodes if nodes is not None and nodes > 0 else 1),
                           v.src("launch.nproc_per_node"))
    shard_size(v, out, ep)
    if v.has("model_cfg") or v.has("float8_cfg"):
        out["distributed"] = ("fsdp2", f"{_SRC} docs/en/pretrain_sft/advanced_tutorial/float8.md "
                                       "(\"XTuner V1 is developed based on PyTorch FSDP\")")
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="XTuner V1", formats=("python", "text"), score=score, read=read,
    derive=derive, precedence=29,
    defaults=(
        Default("float8_cfg", "None (no FP8)", "xtuner 1.0.0rc0-1.0.1, b934f462",
                "xtuner/v1/model/base.py"),
    ),
    distributions=("xtuner",), from_source=True,
    rule_area="XTUNER", area_title="XTuner V1",
    read_python=read_python, python_hint=PY_HINT,
    launch=Launch(read_text, command=HINT),
    torchrun_size=True,      # torchrun's --nproc-per-node / --nnodes: its world size
)
