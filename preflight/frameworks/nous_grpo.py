"""The rollout of Nous Research's torchtitan GRPO fork (NousResearch/torchtitan): a torchtitan
TOML with the fork's ``[grpo]`` section, whose inference servers (``sglang_urls``, or the last
``sglang_slurm_num_nodes`` nodes of the Slurm allocation) are launched apart from the trainer's
config and reached by URL (holdout23's Qwen3-30B-A3B ScienceQA control).

Read at a9efced3 (2026-01-28), ``torchtitan/grpo/vllm_handling/vllm_patching/
distributed_updater.py``: the servers' weight updater takes every parameter the trainer sends
(an all-gather over the trainer's shards, ``weight_updater_process``) into the server parameter
of the same name in that parameter's own dtype (``target_dtype = state_dict[name].dtype``); no
FP8 scale is ever sent. So the rollout serves the trainer's weights, unquantized unless the
servers' own launch (not in the config) quantizes them, and its FP8 is read at the engines'
defaults (:mod:`.rollout_apart`: SGLang and vLLM both default to no quantization). The
``sglang_*`` settings serve both engines (the fork's vLLM patches read the same ones), so the
engine is not named.
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._derived import IntentOut
from preflight.frameworks._view import View
from preflight.frameworks.ckptname import says_fp8

_REL = "NousResearch/torchtitan@a9efced3"
_UPDATER = (f"{_REL} torchtitan/grpo/vllm_handling/vllm_patching/distributed_updater.py "
            "weight_updater_process (each server parameter refit from the trainer's in its own "
            "dtype; no FP8 scales sent)")
SERVERS = ("grpo.sglang_urls", "grpo.sglang_slurm_num_nodes")
"""The ``[grpo]`` settings that name the fork's inference servers."""


def rollout(t: View, out: IntentOut) -> None:
    """State the fork's rollout (engine, FP8, FP8 KV cache) where its ``[grpo]`` names servers."""
    key = next((k for k in SERVERS if t.has(k)), None)
    if key is None:
        return
    src = t.src(key)
    out["rollout.engine"] = (Unknown(
        "the [grpo] sglang_* servers are SGLang or vLLM (the fork's vLLM patches read the same "
        "settings); which one is the servers' own launch, not in the config"), src)
    fp8: Any = False
    ckpt = t.get("model.hf_assets_path")
    if isinstance(ckpt, str) and says_fp8(ckpt[:4096]) is True:
        # an FP8 checkpoint for servers the trainer refits in their own dtypes with no scales
        fp8 = Unknown(f"model.hf_assets_path {ckpt[:80]!r} is named FP8: the servers' updater "
                      "casts the trainer's weights to each parameter's dtype with no FP8 scales "
                      "(distributed_updater.py at a9efced3); what they serve is not known here")
        out["rollout.fp8"] = (fp8, t.src("model.hf_assets_path"))
    elif isinstance(t.unknown("model.hf_assets_path"), Unknown):
        out["rollout.fp8"] = (t.unknown("model.hf_assets_path"), t.src("model.hf_assets_path"))
    else:
        # no FP8 KV cache is stated either: that is a flag of the servers' own launch
        apart.put(out, fp8, f"{src} ({_UPDATER})", "any")
