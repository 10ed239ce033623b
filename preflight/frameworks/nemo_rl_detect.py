"""How a NeMo-RL YAML is recognised (detection; :mod:`.nemo_rl` reads it): ``policy`` with an
algorithm's section, a ``defaults: x.yaml`` base or one of PolicyConfig's own fields, never
``policy:`` alone (frameworks/_claim.py)."""

from __future__ import annotations

from typing import Any

from preflight.frameworks._claim import owns

_ALGORITHMS = frozenset({"grpo", "sft", "dpo", "distillation", "rm", "ppo"})
_POLICY_OWN = frozenset({
    "dtensor_cfg", "megatron_cfg", "train_global_batch_size", "train_micro_batch_size",
    "logprob_batch_size", "generation_batch_size", "max_total_sequence_length",
    "make_sequence_length_divisible_by", "dynamic_batching", "sequence_packing"})
"""NeMo-RL PolicyConfig fields (nemo_rl/models/policy/__init__.py at v0.4.0) that claim a
``policy:`` section; an algorithm section or a ``defaults: x.yaml`` base claims the file too."""


def score(data: Any) -> int:
    """A NeMo-RL YAML: ``policy`` with its algorithm's section (grpo, sft, dpo ...)."""
    top = {str(k) for k in data}
    if "policy" not in top:
        return 0
    policy, defaults = data.get("policy"), data.get("defaults")
    yaml_base = isinstance(defaults, str) and defaults.endswith((".yaml", ".yml"))
    if not (owns(top, _ALGORITHMS) or yaml_base
            or (isinstance(policy, dict) and owns(map(str, policy), _POLICY_OWN))):
        return 0   # `policy:` alone is any RL trainer's (frameworks/_claim.py)
    s = 4 + 2 * len(top & {"grpo", "sft", "dpo", "distillation", "rm", "ppo", "loss_fn",
                           "cluster", "checkpointing", "env"})
    return s + 2 * yaml_base
