"""Which framework a config file belongs to: by format, then by the keys each framework writes.

Each kind has marker keys with weights; the best-scoring kind wins when it is clearly ahead. A
file matching nothing is "unknown" (a problem when the user named it, skipped in a folder scan).
"""

from __future__ import annotations

import os
import re
from typing import Any

KINDS = ("accelerate", "deepspeed", "llmfoundry", "torchtitan", "megatron", "lightning",
         "hf_trainer", "nemo")

YAML_EXT = (".yaml", ".yml")
JSON_EXT = (".json",)
TOML_EXT = (".toml",)
TEXT_EXT = (".sh", ".bash", ".args", ".txt", ".slurm", ".sbatch", ".cfg", "")

# Formats each kind can be written in (DeepSpeed opens its config with json.load only). The
# first is what a file of another format is parsed as when the user forces the kind. "text" is a
# launch script or argument file: `accelerate launch` flags, HF Trainer flags, Megatron flags.
FORMATS: dict[str, tuple[str, ...]] = {
    "accelerate": ("yaml", "json", "text"),
    "deepspeed": ("json",),
    "llmfoundry": ("yaml",),
    "torchtitan": ("toml",),
    "megatron": ("text", "yaml"),
    "lightning": ("yaml",),
    "hf_trainer": ("yaml", "json", "text"),
    "nemo": ("yaml",),
}


def format_of(path: str, head: str) -> str:
    """yaml | json | toml | text, from the extension, else from the first characters."""
    ext = os.path.splitext(path)[1].lower()
    if ext in YAML_EXT:
        return "yaml"
    if ext in JSON_EXT:
        return "json"
    if ext in TOML_EXT:
        return "toml"
    if ext in TEXT_EXT and ext:
        return "text"
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "json"
    # A shebang, or a line that starts with a --flag (argument files, launch scripts); a YAML
    # file whose comments or strings merely contain "--" stays YAML.
    if stripped.startswith("#!") or re.search(r"(?m)^\s*--[A-Za-z]", head) or \
            re.search(r"(?m)^\s*(?:accelerate|torchrun|deepspeed|python3?|srun)\s", head):
        return "text"
    return "yaml"


def _keys(node: Any) -> set[str]:
    return {str(k) for k in node} if isinstance(node, dict) else set()


def score(kind: str, data: Any) -> int:
    """How strongly ``data`` (a parsed mapping) looks like a config of ``kind``."""
    if not isinstance(data, dict):
        return 0
    top = _keys(data)
    model = data.get("model")
    trainer = data.get("trainer")
    s = 0
    if kind == "accelerate":
        s += 3 * len(top & {"compute_environment", "distributed_type", "fp8_config",
                            "main_training_function", "deepspeed_config", "dynamo_config",
                            "downcast_bf16", "megatron_lm_config", "rdzv_backend",
                            "same_network", "tpu_use_cluster", "enable_cpu_affinity"})
        s += len(top & {"mixed_precision", "num_processes", "num_machines", "machine_rank",
                        "use_cpu", "gpu_ids", "main_process_ip", "main_process_port"})
        if any(k.startswith("fsdp_") for k in _keys(data.get("fsdp_config"))):
            s += 2
    elif kind == "deepspeed":
        s += 3 * len(top & {"zero_optimization", "train_micro_batch_size_per_gpu",
                            "zero_allow_untested_optimizer", "steps_per_print",
                            "wall_clock_breakdown", "bfloat16", "msamp", "flops_profiler",
                            "prescale_gradients", "communication_data_type", "comms_logger"})
        s += len(top & {"train_batch_size", "gradient_clipping", "data_types", "amp"})
        for key in ("fp16", "bf16"):
            if isinstance(data.get(key), dict):
                s += 2
        if isinstance(data.get("optimizer"), dict) and "type" in data["optimizer"]:
            s += 2
    elif kind == "llmfoundry":
        s += 3 * len(top & {"train_loader", "eval_loader", "max_duration", "variables",
                            "global_train_batch_size", "device_train_microbatch_size",
                            "eval_first", "save_folder", "fsdp_config", "icl_tasks"})
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            s += 2
        if str(data.get("precision", "")).startswith("amp_"):
            s += 3
        if isinstance(data.get("fsdp_config"), dict) and any(
                k.startswith("fsdp_") for k in data["fsdp_config"]):
            s -= 3  # that is accelerate's fsdp_config
    elif kind == "torchtitan":
        s += 3 * len(top & {"float8", "parallelism", "quantize", "activation_checkpoint",
                            "experimental", "mx"})
        s += len(top & {"job", "training", "model", "optimizer", "lr_scheduler", "checkpoint",
                        "metrics", "compile", "comm"})
    elif kind == "megatron":
        s += 4 * len(top & {"language_model", "model_parallel", "MODEL_ARGS"})
        s += 2 * len(top & {"transformer_impl", "use_distributed_optimizer", "ENV_VARS",
                            "TEST_TYPE"})
    elif kind == "lightning":
        if isinstance(trainer, dict):
            s += 2 + len(_keys(trainer) & {"precision", "strategy", "devices", "accelerator",
                                           "max_epochs", "num_nodes", "callbacks"})
        s += 2 * len(top & {"seed_everything", "ckpt_path", "data", "lr_scheduler"})
        if isinstance(model, dict) and "class_path" in model:
            s += 3
        s -= 4 * _nemo_model_keys(model)
    elif kind == "hf_trainer":
        s += 3 * len(top & {"output_dir", "per_device_train_batch_size",
                            "per_device_eval_batch_size", "num_train_epochs", "logging_steps",
                            "save_steps", "save_strategy", "eval_strategy",
                            "evaluation_strategy", "lr_scheduler_type", "warmup_ratio",
                            "model_name_or_path", "report_to", "optim",
                            "gradient_checkpointing", "torch_compile"})
        s += len(top & {"learning_rate", "max_steps", "gradient_accumulation_steps", "seed",
                        "weight_decay", "warmup_steps", "deepspeed", "fsdp"})
        for key in ("bf16", "fp16"):
            if isinstance(data.get(key), bool):
                s += 1
        if top & {"log_history", "global_step", "best_model_checkpoint"}:
            s = 0   # trainer_state.json in a checkpoint folder, not the job's arguments
    elif kind == "nemo":
        s += 4 * _nemo_model_keys(model)
        if isinstance(trainer, dict) and "exp_manager" in top:
            s += 3
        if str(data.get("name", "")).startswith("megatron"):
            s += 3
    return s


def _nemo_model_keys(model: Any) -> int:
    return len(_keys(model) & {"transformer_engine", "fp8", "fp8_hybrid", "fp8_e4m3",
                               "megatron_amp_O2", "mcore_gpt", "encoder_seq_length",
                               "tensor_model_parallel_size", "nemo_version"})


def detect(fmt: str, data: Any) -> tuple[str | None, list[tuple[str, int]]]:
    """Best kind for parsed ``data`` of format ``fmt`` (None when nothing or a tie)."""
    scores = sorted(((k, score(k, data)) for k in KINDS if fmt in FORMATS[k]),
                    key=lambda kv: -kv[1])
    scores = [(k, s) for k, s in scores if s > 0]
    if not scores:
        return None, []
    if len(scores) > 1 and scores[1][1] == scores[0][1]:
        return None, scores
    return scores[0][0], scores
