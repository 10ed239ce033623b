"""fp8-doctor: will this FP8 training run work, really use FP8, stay sound and beat BF16?

Public API (DESIGN.md contract)::

    import preflight
    report = preflight.check(paths=[...], smoke=False, assume={...})
    preflight.assert_ready(paths=[...], smoke=True, fail_on="error")   # raises PreflightError
    preflight.assert_ready(paths=[...], strict=True)   # undetermined rules / skipped smoke fail too
    preflight.inspect(model, optimizer=None, accelerator=None, expect_fp8=True)

``paths`` is one path (str or os.PathLike) or a list of them.

Names are loaded lazily so ``import preflight`` stays cheap and never imports torch.
"""

# No imports here, not even ``from __future__`` (a real import of a module named __future__):
# ``python -m preflight`` runs this file while the current folder is still first on sys.path,
# before any code of ours can take it off (preflight/_startup.py), so a ``typing.py`` or
# ``__future__.py`` there would be imported. Typing is for type checkers only (mypy honours any
# name TYPE_CHECKING). It also keeps the window before the console script's Ctrl-C handling
# starts short (issue 21 item 8).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

__all__ = ["PreflightError", "Report", "assert_ready", "check", "inspect", "__version__"]

_LAZY = {
    "check": ("preflight.api", "check"),
    "assert_ready": ("preflight.api", "assert_ready"),
    "PreflightError": ("preflight.preflight_error", "PreflightError"),
    "Report": ("preflight.report", "Report"),
    # The live-object inspector lives in preflight.live: a submodule named ``inspect`` would be
    # bound over this function the moment it is imported.
    "inspect": ("preflight.live", "inspect"),
}


def __getattr__(name: str) -> "Any":
    if name in _LAZY:
        from importlib import import_module

        module, attr = _LAZY[name]
        value = getattr(import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'preflight' has no attribute {name!r}")
