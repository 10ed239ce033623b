"""The smoke child imports TE's PyTorch side only: transformer_engine.jax is refused while TE is
imported (TE's __init__ tolerates ImportError there), and nothing else is affected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = """
import sys
from preflight.smoke.te_check import _without_te_jax
with _without_te_jax():
    import transformer_engine
print("jax" if transformer_engine.JAX else "no-jax", "pytorch" if transformer_engine.PT else "no-pt")
import transformer_engine.jax        # afterwards the finder is gone again
print("late", transformer_engine.jax.LOADED)
"""


def test_te_jax_is_skipped_during_the_import_only(tmp_path: Path) -> None:
    pkg = tmp_path / "transformer_engine"
    (pkg / "jax").mkdir(parents=True)
    (pkg / "pytorch").mkdir()
    (pkg / "__init__.py").write_text(
        "JAX = PT = False\n"
        "try:\n    from . import pytorch\n    PT = True\nexcept ImportError:\n    pass\n"
        "try:\n    from . import jax\n    JAX = True\nexcept ImportError:\n    pass\n")
    (pkg / "jax" / "__init__.py").write_text("LOADED = True\n")
    (pkg / "pytorch" / "__init__.py").write_text("")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": f"{tmp_path}:{root}", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["no-jax", "pytorch", "late", "True"]
