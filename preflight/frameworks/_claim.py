"""The keys no framework may claim a config file on: names every trainer uses.

Detection (:func:`preflight.frameworks.detect`) names the framework whose score is highest and
above zero. A key such as ``seed`` or ``output_dir`` is in half the trainers' YAMLs: when a score
counts it alone, a file of a framework fp8-doctor does not read is claimed by one it does, and
that reader, finding none of its FP8 settings, says "FP8 not asked" (holdout8: two AReaL YAMLs
read as HF TrainingArguments on ``seed`` alone, FP8 "no" instead of Unknown; issue 22). So every
score gives 0 unless the mapping has at least one key that is the framework's own
(:func:`owns`); the generic keys below only add weight to a file already claimed. A file no
framework claims is reported as ``unknown_framework`` (FP8 undetermined), never read as "no".
``tests/frameworks/test_detect_generic.py`` holds every framework to it.
"""

from __future__ import annotations

from collections.abc import Iterable

GENERIC: frozenset[str] = frozenset({
    "seed", "model", "models", "data", "dataset", "datasets", "train_dataset",
    "valid_dataset", "eval_dataset", "tokenizer", "tokenizer_path", "optimizer", "optim_config",
    "lr", "learning_rate", "lr_scheduler", "scheduler", "weight_decay", "warmup_steps",
    "max_steps", "epochs", "num_epochs", "total_train_epochs", "batch_size",
    "micro_batch_size", "global_batch_size", "train_batch_size",
    "gradient_accumulation_steps", "output_dir", "save_dir", "log_dir", "logging", "logger",
    "checkpoint", "checkpointing", "saver", "recover", "resume", "name", "run_name",
    "experiment_name", "trial_name", "trainer", "training", "train", "eval", "evaluation",
    "evaluator", "validation", "cluster", "launcher", "env", "environment", "wandb",
    "stats_logger", "defaults", "hydra", "debug", "precision", "mixed_precision", "dtype",
    "compile", "metrics", "callbacks", "distributed", "use_cpu",
    "deepspeed", "fsdp", "rollout", "actor", "critic", "ref", "reward", "gconfig",
    "enable_offload", "command", "image", "variables", "loss", "loss_fn", "amp", "job",
    # TrainingArguments' names that other trainers copy at their top level: ROLL's BaseConfig
    # (alibaba/ROLL v0.3.0 roll/configs/base_config.py: save_steps, logging_steps, eval_steps,
    # logging_dir, max_grad_norm, resume_from_checkpoint in 100+ of its example YAMLs; holdout9)
    "save_steps", "logging_steps", "eval_steps", "logging_dir", "max_grad_norm",
    "resume_from_checkpoint",
})
"""Top-level keys shared by many trainers' configs (TrainingArguments, Lightning, torchtitan,
Megatron-Bridge, AReaL, verl, NeMo-RL ...): never enough, alone, to claim a file."""


def owns(top: Iterable[str], own: Iterable[str]) -> bool:
    """Whether the top-level keys ``top`` include one of a framework's ``own`` keys."""
    return not set(own).isdisjoint(top)


FOREIGN: frozenset[str] = frozenset({
    # SimpleTuner (bghira/SimpleTuner 002cabbb simpletuner/helpers/configuration/cmd_args.py)
    "model_family", "model_flavour", "base_model_precision", "data_backend_config",
    "validation_prompt_library", "checkpoint_step_interval", "text_encoder_1_precision",
    # kohya-ss/sd-scripts v0.9.1 (library/train_util.py, train_network.py)
    "network_module", "network_dim", "network_alpha", "fp8_base", "full_bf16", "full_fp16",
    "save_model_as", "train_data_dir", "cache_latents", "save_precision",
    # kohya-ss/musubi-tuner v0.2.13 (hv_train_network.py)
    "fp8_scaled", "fp8_llm", "dit", "dit_dtype", "blocks_to_swap", "discrete_flow_shift",
    # Nerogar/OneTrainer (modules/util/config/TrainConfig.py)
    "training_method", "base_model_name", "weight_dtype", "output_model_destination",
    "output_model_format", "train_dtype", "fallback_train_dtype", "concept_file_name",
})
"""Top-level keys of the diffusion fine-tuners' configs (several share TrainingArguments names:
``report_to``, ``hub_model_id``, ``num_train_epochs``, ``gradient_checkpointing``) that no
TrainingArguments file carries: a file with one is not read as TrainingArguments (a SimpleTuner
config.json was, its ``mixed_precision: bf16`` hiding ``base_model_precision: fp8-torchao``;
holdout20)."""
