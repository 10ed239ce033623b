"""accelerate: the ``accelerate config`` / ``--config_file`` YAML (old installs: JSON).

Every key as written (the wizard's misspellings ``amax_history_length``, ``amax_compute_algorithm``,
``optimization_level`` stay visible; ``override_linear_precision`` keeps its type: list,
``"(false, false, false)"`` string or bare bool). ``deepspeed_config.deepspeed_config_file`` is
followed and read as a DeepSpeed JSON: accelerate opens it relative to the launch directory; we
try the YAML's folder first, then the current directory, and report a missing file as a problem
at the key's line. ``accelerate launch`` flags are read by :mod:`.accelerate_launch` into the
same ``config.accelerate.*`` names.

``parallelism_config`` (accelerate >= 1.10.0: ``parallelism_config_tp_size``, ``_cp_size``, ...
under that key, or the same names as ``accelerate launch`` flags, which win) gives intent.tp and
intent.cp, and so does ``Accelerator(parallelism_config=ParallelismConfig(...))`` in a script
(:mod:`.accelerate_plugins`). Without any of them the sizes stay unstated.

``Accelerator(...)`` in a script is read by :mod:`.accelerate_script` (:func:`read_python`,
re-exported here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from preflight.base.versions import comparison_key
from preflight.facts import Unknown
from preflight.frameworks import accelerate_launch
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View, first
from preflight.frameworks.accelerate_backend import auto_backend
from preflight.frameworks.accelerate_script import HANDLERS, PY_HINT, read_python
from preflight.frameworks.deepspeed import ds_precision
from preflight.reading.parse import Parsed, flatten
from preflight.reading.readers import link
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "accelerate"
OWN_KEYS = frozenset({
    "compute_environment", "distributed_type", "fp8_config", "main_training_function",
    "deepspeed_config", "dynamo_config", "downcast_bf16", "megatron_lm_config", "rdzv_backend",
    "same_network", "tpu_use_cluster", "enable_cpu_affinity", "num_processes", "num_machines",
    "machine_rank", "gpu_ids", "main_process_ip", "main_process_port"})
"""accelerate config fields (accelerate commands/config/config_args.py) that claim a file."""


def _fsdp_keys(data: Any) -> bool:
    fsdp = data.get("fsdp_config")
    return isinstance(fsdp, dict) and any(str(k).startswith("fsdp_") for k in fsdp)


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like an accelerate config."""
    top = {str(k) for k in data}
    if not owns(top, OWN_KEYS) and not _fsdp_keys(data):
        return 0   # `mixed_precision` or `use_cpu` alone is any trainer's (frameworks/_claim.py)
    s = 3 * len(top & {"compute_environment", "distributed_type", "fp8_config",
                       "main_training_function", "deepspeed_config", "dynamo_config",
                       "downcast_bf16", "megatron_lm_config", "rdzv_backend",
                       "same_network", "tpu_use_cluster", "enable_cpu_affinity"})
    s += len(top & {"mixed_precision", "num_processes", "num_machines", "machine_rank",
                    "use_cpu", "gpu_ids", "main_process_ip", "main_process_port"})
    return s + 2 * _fsdp_keys(data)


def read_accelerate(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(data, parsed, "config.accelerate", path)
    if "dynamo_backend" in data:
        # The pre-dynamo_config key wins: accelerate's config loader replaces the whole
        # dynamo_config with what it says ({} for NO), commands/config/config_args.py l.117-119
        # at v0.34.0 through v1.14.0; what the file wrote under dynamo_config is never read.
        for name in [n for n in facts if n.startswith("config.accelerate.dynamo_config.")]:
            del facts[name]
            prov.pop(name, None)
    ds = data.get("deepspeed_config")
    linked: list[Linked] = []
    problems: list[ConfigProblem] = []
    if isinstance(ds, dict) and "deepspeed_config_file" in ds:
        linked, problems = link(path, parsed, ("deepspeed_config", "deepspeed_config_file"),
                                 ds["deepspeed_config_file"], "deepspeed")
    return ReaderOutput(facts, prov, tuple(problems), tuple(linked))


_ACC_DIST = {"DEEPSPEED": "deepspeed", "MULTI_GPU": "ddp", "NO": "none", "MEGATRON_LM": "megatron",
             "MULTI_CPU": "ddp", "MULTI_XPU": "ddp", "MULTI_NPU": "ddp", "MULTI_MLU": "ddp",
             "MULTI_MUSA": "ddp", "MULTI_HPU": "ddp", "MULTI_SDAA": "ddp", "XLA": "none",
             "TPU": "none"}


_ACC_BACKEND = {"TE": "te", "MSAMP": "msamp", "AO": "torchao"}


PRECISIONS = ("no", "fp8", "fp16", "bf16")
"""accelerate's ``PrecisionType`` values (utils/dataclasses.py at v1.14.0)."""


def from_accelerate(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    a = View(f, "accelerate", prov)
    out = IntentOut()
    mp = a.get("mixed_precision")
    mp_src = a.src("mixed_precision")
    if mp is None and isinstance(f.get("env.ACCELERATE_MIXED_PRECISION"), (str, Unknown)):
        mp, mp_src = f["env.ACCELERATE_MIXED_PRECISION"], prov.get(
            "env.ACCELERATE_MIXED_PRECISION", "env.ACCELERATE_MIXED_PRECISION")
    if isinstance(mp, Unknown) and a.get("mixed_precision") is None:
        # exported by the script under a condition the text does not decide (reading/pyenvset):
        # never "no" (state.py reads the variable when Accelerator gets no mixed_precision)
        out["fp8"] = (Unknown(f"ACCELERATE_MIXED_PRECISION is not known: {mp.reason}"), mp_src)
        mp = None
    fp8 = str(mp).lower() == "fp8"
    handlers = f.get(a.prefix + "kwargs_handlers")
    if isinstance(mp, str) and mp.lower() not in PRECISIONS:
        # accelerate lower-cases the value and refuses any other (PrecisionType, state.py at
        # v1.14.0): the job stops at Accelerator(), so whether it would use FP8 is not known.
        # Red team: mixed_precision='fp8\u202e' read as "FP8: no".
        out["fp8"] = (Unknown(f"mixed_precision {mp!r} is none of {', '.join(PRECISIONS)}: "
                              "accelerate refuses it at start-up"), mp_src)
    elif mp is not None:
        out["fp8"] = (fp8, mp_src)
    if not fp8 and isinstance(handlers, list) and any(h in HANDLERS for h in handlers):
        # A recipe handler in code sets Accelerator.fp8_backend and prepare() converts the model
        # with it whatever mixed_precision says (outside FSDP / DeepSpeed, Accelerator() refuses
        # a handler without mixed_precision="fp8"): accelerator.py at v1.4.0 l.480-490,
        # 1377-1381 and v1.10.0 l.440-512, 1541-1545.
        fp8 = True
        out["fp8"] = (True, a.src("kwargs_handlers"))
    elif not fp8 and (isinstance(handlers, Unknown) or a.unknown("mixed_precision")):
        # never "no" for what the script decides in a way the text does not show
        unknown = a.unknown("mixed_precision") or handlers
        assert isinstance(unknown, Unknown)
        what = "mixed_precision" if a.unknown("mixed_precision") else "kwargs_handlers"
        out["fp8"] = (Unknown(f"Accelerator({what}=...) is not known: {unknown.reason}"),
                      a.src(what))
    elif mp is None and a.unknown("cli.script"):    # the script it launches is not here
        out["fp8"] = (a.unknown("cli.script"), a.src("cli.script"))
    elif mp is None and a.any_prefix("fp8_config"):
        # With a deepspeed_config_file, mixed_precision must stay out of the YAML (FP8D-ACC-0003)
        # and comes from `accelerate launch --mixed_precision` or the script: an fp8_config block
        # says FP8 is meant, but only the launch line can say it is on.
        out["fp8"] = (Unknown("the accelerate YAML has an fp8_config but no mixed_precision: "
                              "FP8 is switched on by --mixed_precision fp8 or in the script"),
                      next((prov[k] for k in prov if k.startswith(a.prefix + "fp8_config.")),
                           "accelerate config"))
    if mp is False or str(mp).lower() in {"no", "bf16", "fp16"}:
        out["precision"] = ({"no": "fp32", "false": "fp32"}.get(str(mp).lower(), str(mp).lower()),
                            mp_src)
    dist = a.get("distributed_type")
    if isinstance(dist, str):
        value = _ACC_DIST.get(dist.upper())
        if dist.upper() == "FSDP":
            value = "fsdp2" if a.int("fsdp_config.fsdp_version") == 2 else "fsdp1"
        if value:
            out["distributed"] = (value, a.src("distributed_type"))
        if value in ("deepspeed", "megatron"):       # DEEPSPEED / MEGATRON_LM plugins
            out.runs_on = (value,)
    if a.int("deepspeed_config.zero_stage") is not None:
        out["zero_stage"] = (a.int("deepspeed_config.zero_stage"),
                             a.src("deepspeed_config.zero_stage"))
    if a.int("num_processes") is not None:
        out["num_gpus"] = (a.int("num_processes"), a.src("num_processes"))
    # dynamo_config.* of the YAML itself is dropped at read when a top-level dynamo_backend is
    # there (read_accelerate); one left here is the launch line's or the script's, which win.
    backend_key = "dynamo_config.dynamo_backend" if a.has("dynamo_config.dynamo_backend") \
        else "dynamo_backend"
    dyn = a.get(backend_key)
    if dyn is not None and str(dyn).upper() not in {"NO", "FALSE", "NONE"}:
        out["compile"] = (True, a.src(backend_key))
    else:
        # accelerate will not compile. A torch.compile call in the script is invisible to a config
        # reader; the rules (FP8D-TAO-0004, CONFIG_FACTS_USED.md) want the config's answer.
        out["compile"] = (False, a.src(backend_key, "accelerate config has no dynamo backend"))
    _parallelism(a, out)
    if a.has("fsdp_config.fsdp_activation_checkpointing"):
        out["activation_checkpointing"] = (a.truthy("fsdp_config.fsdp_activation_checkpointing"),
                                           a.src("fsdp_config.fsdp_activation_checkpointing"))
    if fp8:
        _accelerate_fp8(a, f, prov, out, str(mp).lower() == "fp8")
    if str(mp).lower() == "fp8" or isinstance(out.get("fp8", (None,))[0], Unknown):
        _kept_backend(a, f, prov, out)      # (an unknown precision may be fp8 with it too)
    return out.build()


_V1_9 = Version("1.9.0")


def _kept_backend(a: View, f: Mapping[str, Any], prov: Mapping[str, str], out: IntentOut) -> None:
    """The FP8 backend that still converts the model when another framework (the HF Trainer's
    ``bf16``) replaces accelerate's mixed precision: ``survives_override``.

    ``accelerate launch`` with ``mixed_precision: fp8`` exports ``ACCELERATE_FP8_BACKEND`` from
    ``fp8_config.backend`` (utils/launch.py setup_fp8_env at v1.11.0). From accelerate 1.9.0
    (PR 3677) ``Accelerator.fp8_backend`` falls back to that variable when no recipe handler
    is set (accelerator.py l.3998-4012 at v1.9.0), and ``prepare()`` converts by it: a TE
    backend is applied after the Trainer rewrote ``ACCELERATE_MIXED_PRECISION`` to bf16, with
    ``DelayedScaling()`` (no handler: utils/transformer_engine.py apply_fp8_autowrap l.161-177
    at v1.11.0). Before 1.9.0 nothing is converted (FP8D-HF-0001). Only TE: torchao and
    MS-AMP read a handler that was never built, and prepare() fails."""
    raw = a.get("cli.fp8_config.backend", a.get("fp8_config.backend"))
    src = a.src("cli.fp8_config.backend", a.src("fp8_config.backend"))
    if raw is None and isinstance(f.get("env.ACCELERATE_FP8_BACKEND"), str):
        raw, src = f["env.ACCELERATE_FP8_BACKEND"], "env.ACCELERATE_FP8_BACKEND"
    if isinstance(raw, Unknown):
        out.survives_override = (Unknown(f"the FP8 backend is not known: {raw.reason}"), src)
    if str(raw).upper() != "TE":
        return
    version = f.get("pkg.accelerate.version")
    key = comparison_key(version) if isinstance(version, str) else None
    if key is None:
        why = (version.reason if isinstance(version, Unknown) else "not installed here"
               if version is None else f"{str(version)[:40]!r}")
        out.survives_override = (Unknown(
            "accelerate >= 1.9.0 still converts the model with the TE backend `accelerate "
            f"launch` exports, earlier releases do not, and accelerate is {why} (--assume "
            "pkg.accelerate=V)"), src)
    elif key >= _V1_9:
        out.survives_override = ("te", src)


def _parallelism(a: View, out: IntentOut) -> None:
    """intent.tp / intent.cp from ``parallelism_config`` (accelerate >= 1.10.0).

    ``accelerate launch`` copies ``parallelism_config.<key>`` of the YAML to the flag of the same
    name unless that flag was given (commands/launch.py _validate_launch_command at v1.10.0 and
    v1.14.0), so a flag wins over the YAML key."""
    sizes: tuple[tuple[Stated, str], ...] = (("tp", "parallelism_config_tp_size"),
                                             ("cp", "parallelism_config_cp_size"))
    for name, size in sizes:
        key = first(a, size, f"parallelism_config.{size}")
        if key is None:
            continue
        value = a.int(key)
        if value is None or value < 1:
            out[name] = (Unknown(f"{size} is {str(a.get(key))[:40]!r}, not a size"), a.src(key))
        else:
            out[name] = (value, a.src(key))


def _accelerate_fp8(a: View, f: Mapping[str, Any], prov: Mapping[str, str], out: IntentOut,
                    mixed_fp8: bool = True) -> None:
    raw = a.get("fp8_config.backend")
    src = a.src("fp8_config.backend")
    if raw is None and isinstance(f.get("env.ACCELERATE_FP8_BACKEND"), str):
        raw, src = f["env.ACCELERATE_FP8_BACKEND"], "env.ACCELERATE_FP8_BACKEND"
    backend = _ACC_BACKEND.get(str(raw).upper()) if raw is not None else None
    if raw is None and mixed_fp8 and a.get("distributed_type") != "MEGATRON_LM":
        picked, why = auto_backend(f)       # what Accelerator picks from what is installed
        backend = picked if isinstance(picked, str) else None
        out["backend"] = (picked, why)
    elif backend is None:
        out["backend"] = (Unknown(f"fp8_config.backend {str(raw)[:40]!r} is none of TE, MSAMP, "
                                  "AO"), src)
    else:
        out["backend"] = (backend, src)
    te_code = "kwargs_handlers.TERecipeKwargs." if a.any_prefix("kwargs_handlers.TERecipeKwargs") \
        else "kwargs_handlers.FP8RecipeKwargs."
    if backend == "te":
        mx_key = first(a, "fp8_config.use_mxfp8_block_scaling",
                       te_code + "use_mxfp8_block_scaling")
        out["recipe"] = ("mxfp8" if a.truthy(mx_key) else "delayed", a.src(mx_key, src))
    elif backend == "torchao":
        key = first(a, "kwargs_handlers.AORecipeKwargs.recipe_name")
        # AORecipeKwargs default Float8LinearConfig(): tensorwise
        out["recipe"] = (a.get(key, "tensorwise"), a.src(key, src))
    fmt_key = first(a, "fp8_config.fp8_format", te_code + "fp8_format")
    fmt = a.get(fmt_key)
    if isinstance(fmt, str):
        out["format"] = (fmt.lower(), a.src(fmt_key))
    elif backend in (None, "te"):
        out["format"] = (Unknown("fp8_format not set: `accelerate launch` exported E4M3 before "
                                 "1.8.1 and HYBRID from 1.8.1"), "intent")
    if not mixed_fp8:
        return      # FP8 from a recipe handler: the rest runs in what mixed_precision says
    if out.get("distributed", (None,))[0] == "deepspeed":
        ds = ds_precision(f, prov, under_fp8=True)
        if ds is not None:
            out["precision"] = ds
        else:
            out["precision"] = ("bf16", "accelerate sets DeepSpeed bf16 for fp8")
    else:
        out["precision"] = ("bf16", "accelerate autocasts non-FP8 ops to bf16 under fp8")


FRAMEWORK = Framework(
    kind=KIND, title="Hugging Face Accelerate", formats=("yaml", "json", "text"),
    score=score, read=read_accelerate, derive=from_accelerate, precedence=3, zero_stage_rank=1,
    distributions=("accelerate",), rule_area="ACC", area_title="Accelerate",
    launch=Launch(accelerate_launch.read, command=accelerate_launch.COMMAND,
                  trains=accelerate_launch.TRAINS), read_python=read_python, python_hint=PY_HINT,
    references=(
        Reference("deepspeed_config.deepspeed_config_file", "deepspeed",
                  "opened relative to the launch directory (accelerate DeepSpeedPlugin)"),
        Reference("accelerate launch --config_file", "accelerate",
                  "opened relative to the launch directory"),
    ),
    defaults=(
        Default("dynamo_config.dynamo_backend", "no torch.compile", "all",
                "accelerate/utils/dataclasses.py (DynamoBackend.NO)"),
        Default("fp8_config.fp8_format", "E4M3 before 1.8.1, HYBRID from 1.8.1",
                "accelerate < 1.8.1 / >= 1.8.1", "accelerate commands/launch.py"),
        Default("parallelism_config.parallelism_config_tp_size / _cp_size", "1 (no TP / CP)",
                ">= 1.10.0", "accelerate commands/launch.py (--parallelism_config_* default 1)"),
    ),
    file_strings="words",
    file_strings_why=(
        "accelerate launch puts the YAML's values into the environment with str() "
        "(src/accelerate/utils/launch.py l.309-316 @ v1.13.0) and the plugins read them with "
        "str_to_bool / int() (utils/dataclasses.py l.1806, l.1862)"),
)
