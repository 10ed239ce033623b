"""Expert counts of well-known MoE models named by their hub id, for a job that names the model
by ``--model_name_or_path org/name`` / ``from_pretrained("org/name")`` with no config.json in
the job (:mod:`.hfmoe` reads one that is there; the hub is never asked: fp8-doctor reads only
the job).

Each row is what the model's own ``config.json`` on the hub says (``model_type``, the expert
key, its value, ``num_experts_per_tok``). Where XTuner V1 ships a config class for the model,
its defaults agree and are the pinned source (InternLM/xtuner@b934f462
xtuner/v1/model/moe/qwen3.py l.159-161, l.193-195, deepseek_v3.py l.90-92, gpt_oss.py
l.212-213, l.244-245). The others cite the hub's config.json by path only: this session could not
reach the hub to pin a commit (``pinned`` False). A name not in the table states Unknown with
the reason, never a guess: the same family's other sizes differ (Qwen3-30B-A3B has 128 experts,
Qwen3-Coder-480B-A35B 160).
"""

from __future__ import annotations

from typing import NamedTuple


class Known(NamedTuple):
    model_type: str
    key: str            # the config.json key of the expert count
    experts: int
    top_k: int
    source: str
    pinned: bool


_XT = "InternLM/xtuner@b934f462 xtuner/v1/model/moe/"
_HUB = "https://huggingface.co/{}/blob/main/config.json"

_ROWS: tuple[tuple[tuple[str, ...], str, str, int, int, str | None], ...] = (
    (("Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Base", "Qwen/Qwen3-30B-A3B-FP8",
      "Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Thinking-2507"),
     "qwen3_moe", "num_experts", 128, 8, _XT + "qwen3.py l.159-161 (Qwen3MoE30BA3Config)"),
    (("Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B-FP8", "Qwen/Qwen3-235B-A22B-Instruct-2507",
      "Qwen/Qwen3-235B-A22B-Thinking-2507"),
     "qwen3_moe", "num_experts", 128, 8, _XT + "qwen3.py l.193-195 (Qwen3MoE235BA22Config)"),
    (("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base", "deepseek-ai/DeepSeek-V3-0324"),
     "deepseek_v3", "n_routed_experts", 256, 8, _XT + "deepseek_v3.py l.90-92 (DeepSeekV3Config)"),
    (("openai/gpt-oss-20b",), "gpt_oss", "num_local_experts", 32, 4,
     _XT + "gpt_oss.py l.212-213 (GptOss21BA3P6Config)"),
    (("openai/gpt-oss-120b",), "gpt_oss", "num_local_experts", 128, 4,
     _XT + "gpt_oss.py l.244-245 (GptOss117BA5P8Config)"),
    (("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
     "mixtral", "num_local_experts", 8, 2, None),
    (("mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1"),
     "mixtral", "num_local_experts", 8, 2, None),
    (("zai-org/GLM-4.5", "zai-org/GLM-4.5-FP8"), "glm4_moe", "n_routed_experts", 160, 8, None),
    (("zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-Air-FP8"), "glm4_moe", "n_routed_experts", 128, 8,
     None),
    (("moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Base"),
     "kimi_k2", "n_routed_experts", 384, 8, None),
    (("meta-llama/Llama-4-Scout-17B-16E", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
     "llama4", "text_config.num_local_experts", 16, 1, None),
    (("meta-llama/Llama-4-Maverick-17B-128E", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
      "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"),
     "llama4", "text_config.num_local_experts", 128, 1, None),
)

KNOWN: dict[str, Known] = {
    name.lower(): Known(model_type, key, experts, top_k, source or _HUB.format(name),
                        source is not None)
    for names, model_type, key, experts, top_k, source in _ROWS for name in names}


def hub_id(name: str) -> bool:
    """Whether ``name`` is written as a hub id (``org/name``), not a path."""
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "~", "$")) and \
        all(p.replace("-", "").replace("_", "").replace(".", "").isalnum() for p in parts)


def lookup(name: str) -> Known | None:
    """The row for hub id ``name`` (case-insensitive, as the hub resolves it)."""
    return KNOWN.get(name.strip().lower())
