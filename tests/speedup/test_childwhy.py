"""The speed-up children's reasons for not running: a module that is not installed is named with
what to install (not ``ModuleNotFoundError: No module named 'torch'``), and a trial that never ran
does not say "Trained" (session 38's newcomer run of ``speedup`` without torch)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.speedup import childwhy, trial
from preflight.speedup.trial_render import render_text
from tests.speedup.test_trial import TINY


def test_a_missing_module_is_named_with_what_to_install() -> None:
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("fp8_doctor_no_such_module_anywhere")
    text = childwhy.reason(info.value)
    assert "fp8_doctor_no_such_module_anywhere" in text and "not installed" in text
    assert "ModuleNotFoundError" not in text


def test_any_other_failure_keeps_its_class_and_what_failed() -> None:
    text = childwhy.reason(ImportError("undefined symbol: _ZN3c10"), 300, "TE does not import")
    assert text.startswith("TE does not import (ImportError: ") and "_ZN3c10" in text


def _child(module: str, blocked: str, arg: str) -> dict[str, object]:
    """Run a real speed-up child with ``blocked`` made unimportable (``sys.modules[name] =
    None``: Python's own way to refuse an import), and read its JSON result."""
    code = (f"import runpy, sys; sys.modules[{blocked!r}] = None; sys.argv = ['child', {arg!r}]; "
            f"runpy.run_module({module!r}, run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend, blocked, label", [
    ("torchao", "torch", "torch is not installed"),
    ("te", "transformer_engine", "Transformer Engine is not installed"),
])
def test_the_trial_child_says_what_is_not_installed(backend: str, blocked: str, label: str,
                                                    tmp_path: Path) -> None:
    req = tmp_path / "req.json"
    req.write_text(json.dumps({"backend": backend, "precisions": ["bf16", "fp8"],
                               "device": "cpu"}))
    res = _child("preflight.speedup.trial_child", blocked, str(req))
    assert res["status"] == "failed" and label in str(res["reason"])
    assert "ModuleNotFoundError" not in str(res["reason"])


def test_the_kernel_timing_child_says_torch_is_not_installed() -> None:
    res = _child("preflight.speedup.child", "torch", json.dumps({"backend": "torchao"}))
    assert res["status"] == "failed" and "torch is not installed" in str(res["reason"])


def test_a_trial_that_never_ran_does_not_say_trained() -> None:
    report = trial.trial(TINY, backend="te", recipe="delayed", compiled=False, device="cpu")
    assert report.bf16 is None
    text = render_text(report)
    assert "Not trained (would train): BF16 and te delayed" in text
    assert "\nTrained:" not in text
