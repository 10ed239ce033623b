"""A name a Python job file imports from a module outside the job whose value the reader does not
have (``from somepkg import FP8``, ``import cfg; cfg.USE_FP8`` with no ``cfg.py`` in the job):
Unknown with that reason, never its own dotted name read as the setting's value.

:meth:`.pyscopes.Layout.ref` keeps every imported name as a :class:`.pyvalues.Ref` (a call of it
is still a call: ``somepkg.build(...)``), and a job module's top-level value replaces it where
the job holds that module (:mod:`preflight.jobs.pynames`). What is left where a setting's value
is wanted (a fact, a test, a comparison) is one of:

- a name of a library the readers know (``torch.bfloat16``, ``Format.HYBRID`` of
  ``transformer_engine``), of the standard library or a builtin, or the file's own function or
  class (``__main__.``): a name with a meaning, kept;
- a class of any other module (``mypkg.MyStrategy``: a capitalised name with lower-case
  letters), kept as the name it is;
- anything else -- a constant or a lower-case name of a module the job does not hold or the
  reader does not read (``somepkg.FP8``, ``cfg.USE_FP8``, ``.settings.mp``): :func:`why`
  gives the reason it is Unknown (session 43, pyfix8 item 1: ``enabled='somepkg.FP8'`` was read
  as a set flag).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from preflight.reading.pyvalues import Ref

LIBRARIES = frozenset((
    # the FP8 stacks and the libraries whose names (dtypes, enums, classes) readers interpret;
    # the frameworks' own packages are added by :func:`know` (their kinds and distributions,
    # from the framework records: no framework is named outside preflight/frameworks/)
    "torch", "torchvision", "torchaudio", "transformer_engine", "transformer_engine_torch",
    "torchao", "transformers", "peft", "vllm", "sglang", "apex", "msamp", "bitsandbytes",
    "flash_attn", "xformers", "liger_kernel", "modelopt", "ray", "fairscale", "triton",
    "diffusers", "timm", "datasets", "tokenizers", "safetensors", "numpy", "jax", "flax",
    "optax", "ml_dtypes", "omegaconf", "hydra", "yaml", "click", "typer", "fire",
    "jsonargparse", "pydantic", "einops", "wandb", "mlflow", "tensorboard", "nvidia",
    "lightning_fabric", "pytorch_lightning", "nemo_run", "composer", "skyrl_train", "realhf",
    "miles", "kernels", "unsloth_zoo", "megatron_core",
))
"""Top-level packages whose names a reader gives a meaning."""
_KNOWN: set[str] = set()
"""The frameworks' packages (:func:`know`)."""


def know(roots: Iterable[str]) -> None:
    """Add the top-level packages of the frameworks the readers know (called by the job reader
    with each framework record's kind and distributions)."""
    _KNOWN.update(r.lower().replace("-", "_") for r in roots)


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "__main__"}


def _a_class(last: str) -> bool:
    """``MyStrategy``: a capitalised name with lower-case letters (PEP 8's class names), not a
    constant (``FP8``, ``USE_FP8``)."""
    return last[:1].isupper() and any(c.islower() for c in last)


def why(value: object) -> str | None:
    """The reason ``value`` (a :class:`Ref`) is not known from the text: a constant or a
    lower-case name of a module outside the job or not read; None for any other value."""
    if not isinstance(value, Ref):
        return None
    name = value.name
    root = name.split(".", 1)[0]
    if root in LIBRARIES or root in _KNOWN or root in _STDLIB:
        return None
    parts = name.lstrip(".").split(".")
    if any(_a_class(p) for p in parts[1:]) or len(parts) < 2 and _a_class(parts[0]):
        return None     # a class, or an attribute of one (`mypkg.Precision.FP8`: an enum)
    owner = name.rpartition(".")[0] or name
    return (f"{name[:80]} is imported from {owner[:60]}, a module outside the job (or not "
            "read): its value is known only when the script runs")
