"""XTuner V1: the sizes a config's settings give (split from frameworks/xtuner.py, its reader).

The FSDP2 shard size of the trainer's mesh (FP8D-XTUNER-0002: tile-wise float8 over a shard mesh
of one rank) and the MoE model's expert count and top-k (FP8D-ACC-0097 and the MoE rules), given
to the model's config or taken from its class's defaults.
"""

from __future__ import annotations

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, Stated, View

_SRC = "InternLM/xtuner@b934f462"

# the MoE model configs' expert counts (class defaults: n_routed_experts, num_experts_per_tok)
# at b934f462: xtuner/v1/model/moe/qwen3.py l.159-161, l.193-195; deepseek_v3.py l.90-92;
# glm52.py l.214-216; gpt_oss.py l.212-213, l.244-245; qwen3_5_text.py l.225-227
MOE_CLASSES = {
    "Qwen3MoE30BA3Config": (128, 8, "qwen3.py l.159-161"),
    "Qwen3MoE235BA22Config": (128, 8, "qwen3.py l.193-195"),
    "DeepSeekV3Config": (256, 8, "deepseek_v3.py l.90-92"),
    "Glm52MoEConfig": (256, 8, "glm52.py l.214-216"),
    "GptOss21BA3P6Config": (32, 4, "gpt_oss.py l.212-213"),
    "GptOss117BA5P8Config": (128, 4, "gpt_oss.py l.244-245"),
    "Qwen3_5_VLTextMoE35BA3BConfig": (256, 8, "qwen3_5_text.py l.225-227"),
}


def shard_size(v: View, out: IntentOut, model_ep: int | None) -> None:
    """Ranks FSDP2 shards each parameter over: the ``fsdp`` dim of the (world / ep, ep) mesh, or
    ``hsdp_sharding_size`` (``MoE._init_device_mesh``, moe.py l.1122-1173 @ v1.0.1). The
    trainer takes the ep_size that is not 1 of the model's and FSDPConfig's (trainer.py
    l.1715-1722 @ v1.0.1). Unknown where the file does not say (a tensor-parallel mesh too)."""
    if not (v.has("model_cfg") or v.has("float8_cfg")):
        return
    if v.unknown("fsdp_cfg") is not None or v.unknown("fsdp_cfg.ep_size") is not None \
            or v.unknown("fsdp_cfg.hsdp_sharding_size") is not None \
            or v.unknown("model_cfg.ep_size") is not None:
        why = v.unknown("fsdp_cfg") or Unknown("ep_size or hsdp_sharding_size is known only "
                                               "when the config runs")
        out["fsdp_shard_size"] = (why, v.src("fsdp_cfg", v.src("model_cfg")))
        return
    tp = v.int("fsdp_cfg.tp_size")
    if v.has("fsdp_cfg.tp_size") and tp != 1:
        return                          # a tensor-parallel mesh: not worked out here
    hsdp = v.int("fsdp_cfg.hsdp_sharding_size")
    if hsdp is not None and hsdp > 0:
        out["fsdp_shard_size"] = (hsdp, v.src("fsdp_cfg.hsdp_sharding_size"))
        return
    eps = [e for e in (model_ep, v.int("fsdp_cfg.ep_size")) if e is not None and e > 1]
    gpus, nodes = v.int("launch.nproc_per_node"), v.int("launch.nnodes")
    if gpus is None or gpus <= 0 or len(set(eps)) > 1:
        return
    world = gpus * (nodes if nodes is not None and nodes > 0 else 1)
    ep = eps[0] if eps else 1
    if world % ep == 0:
        src = v.src("model_cfg.ep_size") if model_ep and model_ep > 1 else \
            v.src("fsdp_cfg.ep_size", v.src("launch.nproc_per_node"))
        out["fsdp_shard_size"] = (world // ep, src)


def experts(v: View, out: IntentOut) -> None:
    """The MoE model's expert count and top-k: given to its config, else its class's."""
    cls = v.get("model_cfg")
    table = MOE_CLASSES.get(cls) if isinstance(cls, str) else None
    names: tuple[tuple[Stated, str, int], ...] = (("moe.experts", "n_routed_experts", 0),
                                                   ("moe.top_k", "num_experts_per_tok", 1))
    for name, key, n in names:
        given = v.int(f"model_cfg.{key}")
        if given is not None:
            out[name] = (given, v.src(f"model_cfg.{key}"))
        elif v.has(f"model_cfg.{key}"):
            out[name] = (Unknown(f"{key} is {str(v.get(f'model_cfg.{key}'))[:40]!r}"),
                         v.src(f"model_cfg.{key}"))
        elif table is not None:
            out[name] = (table[n], f"{v.src('model_cfg')} ({_SRC} xtuner/v1/model/moe/"
                                   f"{table[2]}: {cls} {key})")
