"""slime's DeepGEMM forward on selected training linears, for :mod:`.slime`: block-FP8 training
on part of the model.

Read at THUDM/slime a74ae3a0 (2026-08-11), slime/backends/megatron_utils/alignment/
deepgemm_forward.py and deepgemm_moe_forward.py, slime/utils/arguments.py l.1471-1500,
slime/backends/megatron_utils/model.py l.451-455 / l.554-558:

- ``--megatron-deepgemm-forward-layers L...`` (global zero-based decoder layers) and
  ``--megatron-deepgemm-forward-modules SUFFIX...`` (default: the attention and MLP projections,
  ``_DEFAULT_TARGET_SUFFIXES`` l.68) select Transformer Engine linears whose forward becomes
  SGLang's block-FP8 DeepGEMM (128x128 e4m3 weight blocks, 1x128 activation groups), backward
  explicit BF16 GEMMs (module docstring; ``enable_deepgemm_forward`` l.580-620);
  ``--megatron-deepgemm-moe-forward-layers`` does the same for routed experts' TEGroupedMLP
  (block-FP8 fc1 / fc2). Every other layer stays BF16: FP8 training on part of the model
  (``intent.fp8_scope`` partial).
- The flags do nothing alone: only slime's installers read them, and only a hook runs an
  installer: ``--custom-megatron-before-train-step-hook-path`` (called with ``(args, rollout_id,
  step_id, model, optimizer, opt_param_scheduler)``: ``enable_deepgemm_all_forward_before_train_
  step``) or ``--custom-megatron-before-log-prob-hook-path`` (``(args, model, store_prefix)``:
  ``enable_deepgemm_all_forward`` / ``enable_deepgemm_forward`` / ``enable_deepgemm_moe_forward``);
  the wrapped ``module.forward`` stays replaced, so training steps run it either way.
- Both installers raise ``RuntimeError`` unless the tensor-parallel size is 1 (l.583-584;
  deepgemm_moe_forward.py l.1201-1209, expert-tensor-parallel size 1 too): FP8D-SLIME-0001.

``config.slime.deepgemm_forward``: True where an installer is hooked and layers are selected;
False where the flags are given with no installer hooked (nothing reads them); Unknown where a
hook of the job's own, or a value only the run knows, decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, View

PREFIX = "config.slime"
NAME = f"{PREFIX}.deepgemm_forward"
_SRC = "slime a74ae3a0 slime/backends/megatron_utils/alignment/deepgemm_forward.py"
_LAYERS = ("megatron_deepgemm_forward_layers", "megatron_deepgemm_moe_forward_layers")
_MODULES = ("megatron_deepgemm_forward_modules", "megatron_deepgemm_moe_forward_modules")
_HOOKS = ("custom_megatron_before_train_step_hook_path",
          "custom_megatron_before_log_prob_hook_path")
_INSTALLERS = ("slime.backends.megatron_utils.alignment.deepgemm_forward.",
               "slime.backends.megatron_utils.alignment.deepgemm_moe_forward.")


def _selected(value: Any) -> bool:
    """A layer list that selects something (argparse nargs='+': a list, or one value)."""
    if isinstance(value, list):
        return bool(value)
    return value not in (None, False, "")


def _installs(hook: Any) -> bool | None:
    """Whether ``hook`` (a dotted ``module.function`` path) is one of slime's DeepGEMM
    installers; None where it is the job's own (it may call them: not known)."""
    text = str(hook).strip()
    for module in _INSTALLERS:
        if text.startswith(module):
            return text[len(module):].startswith("enable_deepgemm")
    return None


def fact(facts: Mapping[str, Any], prov: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """``config.slime.deepgemm_forward`` and its source; None where no layer flag is given."""
    given = [k for k in _LAYERS if f"{PREFIX}.{k}" in facts]
    if not given:
        return None
    where = prov.get(f"{PREFIX}.{given[0]}")
    values = [facts[f"{PREFIX}.{k}"] for k in given]
    unknown = next((v for v in values if isinstance(v, Unknown)), None)
    hooks = [(k, facts[f"{PREFIX}.{k}"]) for k in _HOOKS if f"{PREFIX}.{k}" in facts]
    if not hooks:
        return False, (f"{where}: no --custom-megatron-*-hook-path runs slime's DeepGEMM "
                       f"installer, the only reader of the flag ({_SRC} l.580-590, l.1116)")
    verdicts = [(k, v, v if isinstance(v, Unknown) else _installs(v)) for k, v in hooks]
    if any(d is True for _, _, d in verdicts):
        # layers only the run knows still select some whenever the job starts (argparse
        # refuses an empty nargs='+' list or a non-integer word)
        if unknown is None and not any(_selected(v) for v in values):
            return False, f"{where}: no layer selected (the installer raises, {_SRC} l.587-588)"
        return True, where
    open_ = next(((k, v, d) for k, v, d in verdicts if d is None or isinstance(d, Unknown)),
                 None)
    if open_ is not None:
        key, value, _ = open_
        why = value.reason[:160] if isinstance(value, Unknown) else \
            f"{str(value)[:120]!r} is the job's own hook"
        return Unknown(f"--{key.replace('_', '-')}: {why}; whether it installs slime's "
                       "DeepGEMM forward is not known"), prov.get(f"{PREFIX}.{key}", where)
    return False, (f"{where}: the hooks named are not slime's DeepGEMM installers; nothing "
                   f"reads the flag ({_SRC} l.580-590, l.1116)")


def intent(s: View, f: Mapping[str, Any], out: IntentOut) -> None:
    """FP8 on the selected layers where Megatron's own FP8 is off (module docstring)."""
    on = f.get(NAME)
    if on is None or on is False or out.get("fp8", (False,))[0] is True:
        return
    src = s.src("deepgemm_forward")
    if isinstance(on, Unknown):
        out["fp8"] = (on, src)
        return
    layers = next(s.get(k) for k in _LAYERS if s.has(k))
    if isinstance(layers, Unknown) or isinstance(layers, list) and any(
            isinstance(x, Unknown) or "unknown" in str(x) for x in layers):
        # `$LAYERS` only the run knows: an empty expansion is refused by argparse (nargs='+'),
        # any other selects some layers, so whenever the job trains, FP8 is on part of it
        layers = "known only at run time"
    modules = next((s.get(k) for k in _MODULES if s.has(k)), "the default projections")
    out["fp8"] = (True, src)
    out["recipe"] = ("blockwise", f"{src} (DeepGEMM 128x128 block-FP8, {_SRC})")
    out["format"] = ("e4m3", f"{src} (DeepGEMM block-FP8 e4m3)")
    out["backend"] = (Unknown("slime's DeepGEMM forward (SGLang's kernels, BF16 backward) is "
                              "none of the FP8 backends fp8-doctor names"), src)
    out["fp8_scope"] = ("partial", f"{src}: DeepGEMM forward on layers {str(layers)[:80]}, "
                                   f"modules {str(modules)[:120]}; the others BF16")
