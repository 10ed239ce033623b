"""The model a speed-up trial trains (child side: imports torch; never in the doctor's process).

The job's own architecture with random weights, cut to a small depth: the framework's model class
(``transformers.AutoModelForCausalLM.from_config``) when transformers is importable and the config
names a model type from :data:`HF_TYPES`, otherwise a generic decoder (``_define``) faithful to
what matters for speed (RMSNorm, grouped-query causal SDPA, a SwiGLU or plain MLP, an untied LM
head, a float32 cross-entropy). Then the job's FP8 backend is applied: torchao
``convert_to_float8_training`` with the recipe, or every ``nn.Linear`` swapped for a ``te.Linear``
(what accelerate's ``convert_model`` does, the LM head included), with torchao the LM head left
in BF16 (torchao's recipes and torchtitan filter the output layer out); FP8 GEMMs also need
dimensions divisible by 16.

Nothing from the job folder is imported or executed: the HF config arrives as a JSON document,
reduced here to plain values, and only built-in transformers classes are used (no remote code).
"""

from __future__ import annotations

import math
from typing import Any

# Model types whose built-in transformers class the trial uses (dense decoders; anything else
# trains the generic decoder, said in a note). A type outside this list could allocate per-position
# buffers from config values (GPT-2's attention mask is max_positions^2).
HF_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo2", "granite")
# Config keys never passed on: code loading, quantization, and values the trial sets itself.
_DROP = ("auto_map", "quantization_config", "torch_dtype", "dtype", "attn_implementation",
         "_attn_implementation", "_name_or_path", "transformers_version", "architectures",
         "use_cache", "num_hidden_layers", "text_config", "layer_types")


def plain_config(cfg: dict[str, Any], depth: int, seq: int) -> dict[str, Any]:
    """The HF config reduced to plain JSON values, cut to ``depth`` layers: per-layer lists (as
    long as the full depth) dropped, non-finite numbers dropped, positions capped at what the
    trial runs (a config's max_position_embeddings of 1e9 must not size a buffer)."""
    layers = cfg.get("num_hidden_layers")
    out: dict[str, Any] = {}
    for key, value in cfg.items():
        if not isinstance(key, str) or key in _DROP or key.startswith("_"):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        if isinstance(value, list) and (len(value) == layers or len(value) > 64):
            continue
        if isinstance(value, (dict, list)) and len(repr(value)) > 4096:
            continue
        out[key] = value
    out["num_hidden_layers"] = depth
    out["max_position_embeddings"] = max(seq, 1)
    out["use_cache"] = False
    return out


def build(torch: Any, spec: dict[str, Any], depth: int, device: str) -> tuple[Any, str]:
    """(model in BF16 on ``device``, which class was built)."""
    hf = spec.get("hf_config")
    if isinstance(hf, dict) and hf.get("model_type") in HF_TYPES:
        try:
            return _build_hf(torch, hf, spec, depth, device)
        except ImportError:
            pass   # no transformers here: the generic decoder, said by the caller
    torch.manual_seed(0)
    with torch.device(device):
        model = _define(torch)(spec, depth).to(torch.bfloat16)
    return model, "generic decoder (fp8-doctor's; transformers not used)"


def _build_hf(torch: Any, hf: dict[str, Any], spec: dict[str, Any], depth: int,
              device: str) -> tuple[Any, str]:
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = plain_config(hf, depth, int(spec["seq"]))
    config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    torch.manual_seed(0)
    with torch.device(device):
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16,
                                                     attn_implementation="sdpa")
        except TypeError:   # transformers < 4.56 names it torch_dtype
            model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16,
                                                     attn_implementation="sdpa")
    return model.to(torch.bfloat16), (f"transformers {transformers.__version__} "
                                      f"{type(model).__name__}")


_DEFINED: dict[str, Any] = {}


def _define(torch: Any) -> Any:
    """The generic decoder as an ``nn.Module`` (defined here so torch loads only in the child)."""
    if "Decoder" in _DEFINED:   # one class per process: torch.compile caches by code
        return _DEFINED["Decoder"]
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):  # type: ignore[name-defined]
        def __init__(self, s: dict[str, Any]) -> None:
            super().__init__()
            h, kv_heads, heads = s["hidden"], s["kv_heads"], s["heads"]
            self.heads, self.kv_heads, self.hd = heads, kv_heads, h // heads
            kv = self.hd * kv_heads
            self.split = [h, kv, kv]
            self.n1, self.n2 = nn.RMSNorm(h), nn.RMSNorm(h)
            self.qkv = nn.Linear(h, h + 2 * kv, bias=False)
            self.out = nn.Linear(h, h, bias=False)
            self.gated = bool(s.get("gated", True))
            self.fc1 = nn.Linear(h, (2 if self.gated else 1) * s["ffn"], bias=False)
            self.fc2 = nn.Linear(s["ffn"], h, bias=False)

        def forward(self, x: Any) -> Any:
            b, t, h = x.shape
            q, k, v = self.qkv(self.n1(x)).split(self.split, dim=-1)
            q = q.view(b, t, self.heads, self.hd).transpose(1, 2)
            k = k.view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            v = v.view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               enable_gqa=self.kv_heads != self.heads)
            x = x + self.out(a.transpose(1, 2).reshape(b, t, h))
            y = self.fc1(self.n2(x))
            if self.gated:
                g, u = y.chunk(2, dim=-1)
                y = F.silu(g) * u
            else:
                y = F.gelu(y)
            return x + self.fc2(y)

    class GenericDecoder(nn.Module):  # type: ignore[name-defined]
        def __init__(self, s: dict[str, Any], depth: int) -> None:
            super().__init__()
            self.vocab = s["vocab"]
            self.emb = nn.Embedding(s["vocab"], s["hidden"])
            self.blocks = nn.ModuleList(Block(s) for _ in range(depth))
            self.norm = nn.RMSNorm(s["hidden"])
            self.lm_head = nn.Linear(s["hidden"], s["vocab"], bias=False)

        def forward(self, ids: Any) -> Any:
            x = self.emb(ids)
            for blk in self.blocks:
                x = blk(x)
            logits = self.lm_head(self.norm(x))
            return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())

    _DEFINED["Decoder"] = GenericDecoder
    return GenericDecoder


def train_loss(model: Any, ids: Any, generic: bool) -> Any:
    """The training loss as the model's framework computes it (HF: ``labels`` -> shifted CE)."""
    return model(ids) if generic else model(input_ids=ids, labels=ids).loss


def _fp8_ok(lin: Any, fqn: str, head: bool = False) -> bool:
    """FP8 GEMMs need both dimensions divisible by 16; the LM head only with ``head``."""
    return (head or not fqn.endswith("lm_head")) and lin.in_features % 16 == 0 \
        and lin.out_features % 16 == 0


def to_torchao(torch: Any, model: Any, recipe: str, emulate: bool) -> int:
    """Convert in place with torchao's recipe; returns how many linears were converted."""
    import dataclasses

    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    config = (Float8LinearConfig.from_recipe_name(recipe) if recipe != "tensorwise"
              else Float8LinearConfig())
    if emulate:
        config = dataclasses.replace(config, emulate=True)
    convert_to_float8_training(
        model, config=config,
        module_filter_fn=lambda mod, fqn: isinstance(mod, torch.nn.Linear) and _fp8_ok(mod, fqn))
    return sum(1 for m in model.modules() if type(m).__name__ == "Float8Linear")


def to_te(torch: Any, model: Any, device: str, head: bool = True) -> int:
    """Swap each eligible ``nn.Linear`` for a ``te.Linear`` with the same weights; returns how
    many were swapped. ``head``: the LM head too, as accelerate's ``convert_model`` does (it
    converts every ``nn.Linear`` whose weight dimensions are multiples of 16:
    huggingface/accelerate commit 0fade1b4, src/accelerate/utils/transformer_engine.py,
    ``convert_model``)."""
    import transformer_engine.pytorch as te

    swapped = 0
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            fqn = f"{parent_name}.{name}" if parent_name else name
            if type(child) is not torch.nn.Linear or not _fp8_ok(child, fqn, head):
                continue
            new = te.Linear(child.in_features, child.out_features, bias=child.bias is not None,
                            params_dtype=torch.bfloat16, device=device)
            with torch.no_grad():
                new.weight.copy_(child.weight)
                if child.bias is not None:
                    new.bias.copy_(child.bias)
            setattr(parent, name, new)
            swapped += 1
    return swapped


def te_recipe(name: str) -> Any:
    """The TE recipe object for ``delayed`` / ``current`` / ``mxfp8`` (TE's defaults otherwise)."""
    from transformer_engine.common import recipe

    if name == "current":
        return recipe.Float8CurrentScaling()
    if name == "mxfp8":
        return recipe.MXFP8BlockScaling()
    return recipe.DelayedScaling()
