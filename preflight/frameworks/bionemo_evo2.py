"""BioNeMo's Evo2 trainer, ``train_evo2`` (a console script: ``torchrun --no-python train_evo2
...``, ``train_evo2 ...``, ``python -m bionemo.evo2.run.train ...``), and its precision flags.

Two programs have carried that name, read at NVIDIA/bionemo-framework:

- **Megatron-Bridge** (bionemo-recipes/recipes/evo2_megatron, ``bionemo.evo2.run.train:main``,
  from 7caf18c0, 2025-12-19, through abd0ecb6 "Fix evo2 recipe fp8" and 3a9d005b, 2026-04):
  ``--mixed-precision-recipe NAME`` (``choices=list(MIXED_PRECISION_RECIPES.keys())``, default
  ``bf16_mixed``, run/train.py l.239-245 @ 7caf18c0) goes to the recipe as ``precision_config``
  and through Megatron-Bridge's ``get_mixed_precision_config`` (recipes/evo2.py l.185-186 @
  3a9d005b): a Megatron-Bridge preset, ``-`` or ``_`` (:mod:`.megatron_bridge_presets`).
  From 3a9d005b ``--no-fp8-param-gather`` / ``--no-fp8-wgrad`` turn those preset fields off
  (run/train.py l.845-852). Parallel sizes: ``--tensor-model-parallel-size``,
  ``--context-parallel-size``, ``--sequence-parallel``; argparse takes a unique prefix
  (``--tensor-model-parallel 1``, Megatron-Bridge issue 1707's own command).
- **NeMo 2** (sub-packages/bionemo-evo2 at v2.7.1, b4ea6f6b, same entry point): ``--fp8``
  (store_true) gives ``MegatronMixedPrecision(fp8="hybrid", fp8_recipe=--fp8-recipe)``, the
  recipe ``delayed`` by default (run/train.py l.249, 461-469, 1075-1086); bf16 compute always.

Neither takes the other's precision flag (argparse refuses it), so the flags on the line tell
which program runs; with neither, both run BF16 (no FP8). A preset name Megatron-Bridge lacks,
or a value set at launch, leaves FP8 Unknown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.frameworks import megatron_walk
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = "bionemo_evo2"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/NVIDIA/bionemo-framework/blob"
_MBRIDGE = f"{_REPO}/7caf18c04/bionemo-recipes/recipes/evo2_megatron/src/bionemo/evo2/run/train.py"
_NEMO2 = f"{_REPO}/v2.7.1/sub-packages/bionemo-evo2/src/bionemo/evo2/run/train.py"
COMMAND = re.compile(r"(?<![\w./$-])(?:train_(?:evo2|eden)|bionemo\.(?:evo2|eden)\.run\.train)"
                     r"(?![\w.-])")
"""The console scripts (pyproject.toml ``[project.scripts] train_evo2``, and ``train_eden`` of
bionemo-recipes/recipes/eden_megatron, whose run/train.py has the same options and
``--mixed-precision-recipe`` at 3a9d005b: eden.py l.133-134 ``get_mixed_precision_config``) or
their modules."""
MAX_LAUNCHES = 8

FLAGS: frozenset[str] = frozenset({
    "activation-checkpoint-recompute-num-layers", "adam-beta1", "adam-beta2", "adam-eps",
    "add-bias-output", "align-param-gather", "attention-dropout", "average-in-collective",
    "bf16-main-grads", "ckpt-async-save", "ckpt-dir", "ckpt-format", "clip-grad",
    "constant-steps", "context-parallel-size", "create-tensorboard-logger",
    "create-tflops-callback", "cross-entropy-loss-fusion", "dataset-config", "dataset-dir",
    "dataset-num-epochs", "dataset-seed", "debug", "debug-ddp-parity-freq", "decay-steps",
    "devices", "disable-checkpointing", "disable-tensorboard-logger", "early-stop-on-step",
    "enable-preemption", "eod-pad-in-loss-mask", "eval-interval", "eval-iters",
    "experiment-name", "fasta-data", "fasta-file", "ffn-hidden-size", "finetune-ckpt-dir",
    "fp8", "fp8-recipe", "fp8-wgrad", "garbage-collect-at-inference", "gc-interval",
    "global-batch-size", "grad-acc-batches", "grad-reduce-in-fp32", "hf-tokenizer-model-name",
    "hf-tokenizer-model-path", "hidden-dropout", "hybrid-override-pattern",
    "limit-test-batches", "limit-val-batches", "log-every-n-steps", "log-interval",
    "log-num-zeros-in-grad", "log-parameters-and-shapes", "log-windows", "lora-alpha",
    "lora-checkpoint-path", "lora-dim", "lora-dropout", "lora-finetune",
    "lora-skip-freeze-modules", "lora-target-modules", "lr", "mamba-lowercase-loss-weight",
    "max-steps", "metric-to-monitor-for-checkpoints", "micro-batch-size", "min-lr",
    "mixed-precision-recipe", "mock-data", "model-size", "most-recent-k",
    "no-activation-checkpointing", "no-calculate-per-token-loss", "no-check-for-nan-in-grad",
    "no-fp32-residual-connection", "no-fp8-param-gather", "no-fp8-wgrad", "no-renormalize-loss",
    "no-save-last-checkpoint", "no-weight-decay-embeddings", "nsys-end-step", "nsys-profiling",
    "nsys-ranks", "nsys-start-step", "num-layers", "num-nodes", "nvidia-fault-tolerance",
    "optim-fmt-pre-mcore-014", "optim-full-reshardable", "overlap-grad-reduce",
    "overlap-param-gather", "pipeline-model-parallel-size", "rc-aug",
    "restore-optimizer-from-ckpt", "result-dir", "save-last-checkpoint", "save-top-k", "seed",
    "selective-activation-checkpointing", "seq-len-interpolation-factor", "seq-length",
    "sequence-db-dir", "sequence-parallel", "sharded-eden-data", "spike-no-more-embedding-init",
    "stride", "tensor-model-parallel-size", "tensor-parallel-size", "test-window-db",
    "tp-comm-overlap-backend", "train-window-db", "use-megatron-comm-overlap-llama3-8k",
    "use-precision-aware-optimizer", "use-subquadratic-ops", "use-subquadratic_ops",
    "use-targeted-variance-loss", "val-check-interval", "val-window-db", "wandb-anonymous",
    "wandb-entity", "wandb-group", "wandb-id", "wandb-job-type", "wandb-log-model",
    "wandb-offline", "wandb-project", "wandb-run-name", "wandb-tags", "warmup-steps", "wd",
    "window-log-dir", "window-min-length-threshold", "workers",
})
"""Every option of train_evo2's parser at 7caf18c0, 3a9d005b and v2.7.1 (its add_argument calls,
read with ``ast``): argparse's unique-prefix abbreviations are resolved against them."""
BARE: frozenset[str] = frozenset({
    "add-bias-output", "align-param-gather", "average-in-collective", "bf16-main-grads",
    "ckpt-async-save", "create-tensorboard-logger", "create-tflops-callback",
    "cross-entropy-loss-fusion", "debug", "disable-checkpointing", "disable-tensorboard-logger",
    "enable-preemption", "eod-pad-in-loss-mask", "fasta-data", "fp8", "fp8-wgrad",
    "garbage-collect-at-inference", "grad-reduce-in-fp32", "log-num-zeros-in-grad",
    "log-parameters-and-shapes", "log-windows", "lora-finetune", "mock-data",
    "no-activation-checkpointing", "no-calculate-per-token-loss", "no-check-for-nan-in-grad",
    "no-fp32-residual-connection", "no-fp8-param-gather", "no-fp8-wgrad", "no-renormalize-loss",
    "no-save-last-checkpoint", "no-weight-decay-embeddings", "nsys-profiling",
    "nvidia-fault-tolerance", "optim-fmt-pre-mcore-014", "optim-full-reshardable",
    "overlap-grad-reduce", "overlap-param-gather", "rc-aug", "restore-optimizer-from-ckpt",
    "save-last-checkpoint", "selective-activation-checkpointing", "sequence-parallel",
    "sharded-eden-data", "spike-no-more-embedding-init", "use-megatron-comm-overlap-llama3-8k",
    "use-precision-aware-optimizer", "use-subquadratic-ops", "use-subquadratic_ops",
    "use-targeted-variance-loss", "wandb-anonymous", "wandb-log-model", "wandb-offline",
})
"""Its store_true options: never take a value."""
ARITY = megatron_walk.Arity(bare=BARE, needs=frozenset({"mixed-precision-recipe", "fp8-recipe"}),
                            multi=frozenset({"nsys-ranks", "wandb-tags"}))
_NEMO2_RECIPES = {"delayed": "delayed", "tensorwise": "tensorwise", "mxfp8": "mxfp8",
                  "blockwise": "blockwise"}


def _entry(word: str) -> bool:
    return COMMAND.fullmatch(os.path.basename(word)) is not None


def score(data: Any) -> int:
    """train_evo2 has no config file: its settings are flags on its launch line."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("BioNeMo's train_evo2 is read from the script that launches it")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The flags of the train_evo2 commands the script runs, walked as the shell runs it."""
    found = megatron_walk.commands(text, outer, _entry, MAX_LAUNCHES)
    if found is None:
        return ReaderOutput(problems=(megatron_walk.not_walked(path, "its train_evo2 flags were"),))
    if not found:
        return ReaderOutput()
    got = megatron_walk.read(path, text, found, PREFIX, ARITY)
    facts, prov = _unabbreviated(got.facts, got.prov)
    facts[f"{PREFIX}.cli.launch"] = True
    prov[f"{PREFIX}.cli.launch"] = next(iter(prov.values()), path)
    programs = {"eden" if "eden" in lr.entry.text else "evo2" for lr in found}
    facts[f"{PREFIX}.cli.program"] = programs.pop() if len(programs) == 1 else Unknown(
        "the script runs both train_evo2 and train_eden")
    prov[f"{PREFIX}.cli.program"] = prov[f"{PREFIX}.cli.launch"]
    return ReaderOutput(facts, prov, tuple(got.problems))


def _unabbreviated(facts: dict[str, Any], prov: dict[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each option under the name argparse gives it: a unique prefix of one of train_evo2's
    options is that option (``allow_abbrev``, the default); anything else stays as written."""
    out: dict[str, Any] = {}
    where: dict[str, Any] = {}
    for name, value in facts.items():
        flag = name[len(PREFIX) + 1:].replace("_", "-")
        if flag not in FLAGS:
            hits = [f for f in FLAGS if f.startswith(flag)]
            if len(hits) == 1:
                flag = hits[0]
        key = f"{PREFIX}.{flag.replace('-', '_')}"
        out[key], where[key] = value, prov.get(name, "config")
    return out, where


def _size(v: View, key: str) -> Any:
    if v.unknown(key) is not None:
        return v.unknown(key)
    if not v.has(key):
        return 1
    n = v.int(key)
    return n if n is not None and n >= 1 else Unknown(f"--{key.replace('_', '-')} "
                                                       f"{str(v.get(key))[:40]!r} is no size")


def _mbridge(v: View, out: IntentOut) -> None:
    """``--mixed-precision-recipe``: a Megatron-Bridge preset (default bf16_mixed)."""
    key = "mixed_precision_recipe"
    name = v.get(key, "bf16_mixed")
    src = v.src(key, f"train_evo2 default (--mixed-precision-recipe bf16_mixed, {_MBRIDGE}#L239)")
    if v.unknown(key) is not None:
        out["fp8"] = (v.unknown(key), src)
        return
    got = presets.preset(name) if isinstance(name, str) else None
    if got is None:
        out["fp8"] = (Unknown(f"--mixed-precision-recipe {str(name)[:60]!r} is no Megatron-Bridge "
                              f"preset ({presets.SOURCE}): train_evo2's argparse refuses it"), src)
        return
    out["precision"] = (got["precision"], src)
    fmt, fp4 = got.get("fp8"), got.get("fp4")
    if not fmt and not fp4:
        out["fp8"] = (False, src)
        return
    out["fp8"] = (True, src)
    out["backend"] = ("te", src)
    if fmt:
        out["format"] = (str(fmt), src)
        out["recipe"] = (got["fp8_recipe"], src)
        params = bool(got["fp8_param_gather"]) and not v.truthy("no_fp8_param_gather")
        out["fp8_params"] = (params, v.src("no_fp8_param_gather", src))
    else:
        out["recipe"] = ("nvfp4", src)


def _nemo2(v: View, out: IntentOut) -> None:
    """NeMo 2's ``--fp8`` with ``--fp8-recipe`` (default delayed), format hybrid."""
    src = v.src("fp8")
    out["fp8"] = (True, src)
    out["backend"] = ("te", src)
    out["format"] = ("hybrid", src)
    out["precision"] = ("bf16", f"{_NEMO2}#L1075 (MegatronMixedPrecision(precision='bf16-mixed'))")
    recipe = v.get("fp8_recipe", "delayed")
    rsrc = v.src("fp8_recipe", f"train_evo2 default (--fp8-recipe delayed, {_NEMO2}#L461)")
    out["recipe"] = (_NEMO2_RECIPES.get(str(recipe), Unknown(
        f"--fp8-recipe {str(recipe)[:40]!r} is none of NeMo's Fp8Recipe names (argparse "
        "refuses it)")) if v.unknown("fp8_recipe") is None else v.unknown("fp8_recipe"), rsrc)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    out["distributed"] = ("megatron", v.src("cli.launch", prov.get("config.files", "config")))
    # NeMo 2's --fp8 exists only on the old train_evo2 (train_eden is Megatron-Bridge's alone)
    old = v.has("fp8") and v.unknown("fp8") is None and v.get("fp8") is not False and \
        v.get("cli.program") != "eden"
    if old and v.has("mixed_precision_recipe"):
        out["fp8"] = (Unknown("--fp8 (NeMo 2 train_evo2, BioNeMo v2.x) and --mixed-precision-recipe "
                              "(the Megatron-Bridge train_evo2) on one line: no release takes "
                              "both, so which program runs is not known"), v.src("fp8"))
    elif old:
        _nemo2(v, out)
        out.runs_on = ("nemo2",)
    elif v.unknown("fp8") is not None:
        out["fp8"] = (v.unknown("fp8"), v.src("fp8"))
    else:
        _mbridge(v, out)
        out.runs_on = ("megatron_bridge",)
    tp = _size(v, "tensor_model_parallel_size") if v.has("tensor_model_parallel_size") else \
        _size(v, "tensor_parallel_size")
    out["tp"] = (tp, v.src("tensor_model_parallel_size", v.src("tensor_parallel_size",
                                                                 "train_evo2 default (TP 1)")))
    out["cp"] = (_size(v, "context_parallel_size"),
                 v.src("context_parallel_size", "train_evo2 default (CP 1)"))
    if v.int("seq_length"):
        out["seq_len"] = (v.int("seq_length"), v.src("seq_length"))
    if v.int("micro_batch_size"):
        out["micro_batch"] = (v.int("micro_batch_size"), v.src("micro_batch_size"))
    gpus, nodes = v.int("nproc_per_node"), v.int("nnodes")
    if gpus and (nodes or not v.has("nnodes")):
        out["num_gpus"] = (gpus * (nodes or 1), v.src("nproc_per_node"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="BioNeMo Evo2 / Eden (train_evo2, train_eden)", formats=("text",), score=score, read=read,
    derive=derive, precedence=48, distributions=("bionemo-evo2",), from_source=True,
    defaults=(
        Default("--mixed-precision-recipe", "bf16_mixed (Megatron-Bridge train_evo2)",
                "bionemo-recipes evo2_megatron 7caf18c0 - 3a9d005b", f"{_MBRIDGE}#L239"),
        Default("--fp8 / --fp8-recipe", "off / delayed (NeMo 2 train_evo2)",
                "bionemo-framework v2.x", f"{_NEMO2}#L249"),
    ),
    launch=Launch(read_text, command=COMMAND, trains=(("train_evo2",),)),
)
"""Source: NVIDIA/bionemo-framework (see the module docstring)."""
