"""Why a speed-up child could not run, said as what to install, not as an exception's class.

Both children (``speedup/child.py``, the kernel timing; ``speedup/trial_child.py``, the trial)
import torch and the FP8 backend only inside themselves. Without torch they said ``no trial:
ModuleNotFoundError: No module named 'torch'`` (session 38's newcomer run): true, but a
traceback's words. A module that is not installed is named with the package that provides it
(the children run fp8-doctor's own interpreter, base/isolate.py); any other
failure keeps its class and message, which is what a broken install needs to be fixed.
Imports nothing: the children load it before torch.
"""

from __future__ import annotations

PACKAGES = {
    "torch": ("torch", "pip install torch"),
    "transformer_engine": ("Transformer Engine", "pip install transformer-engine[pytorch]"),
    "transformer_engine_torch": ("Transformer Engine's PyTorch extension",
                                 "pip install transformer-engine[pytorch], built against this torch"),
    "torchao": ("torchao", "pip install torchao"),
}
"""Top-level modules the children import: what each is called, and how to install it."""


def reason(exc: BaseException, limit: int = 300, failed: str = "") -> str:
    """One sentence for ``exc``: a missing module as what to install; else ``failed`` (what
    did not work, e.g. "Transformer Engine does not import here") with class and message."""
    name = exc.name if isinstance(exc, ModuleNotFoundError) else None
    if isinstance(name, str) and name:
        top = name.split(".")[0]
        label, install = PACKAGES.get(top, (f"the module {name[:80]}", "install it"))
        return f"{label} is not installed in the Python fp8-doctor runs in: {install}"
    detail = f"{type(exc).__name__}: {str(exc)[:limit]}"
    return f"{failed} ({detail})" if failed else detail
