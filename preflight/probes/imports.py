"""Import probe: import torch / transformer_engine / torchao / deepspeed in child processes.

Used by the smoke step and ``--deep``. Each module is imported in its own child Python with a
timeout, so an ABI error, a segfault in a CUDA library or a hang becomes a fact
(``import.<module>.error_kind``) instead of killing or hanging the doctor. The children run in
parallel; an ``import torch`` costs 2-4 s.

Error classes and the messages they come from (research notes, TE section 4):
- ``abi_undefined_symbol``: ``transformer_engine_torch...so: undefined symbol: _ZN3c10...``
  (torch upgraded after TE was built; NVIDIA/TransformerEngine#1684, #1192)
- ``missing_library``: ``cannot open shared object file``, ``Could not find shared object file
  for Transformer Engine ...``, ``{cudnn|nvrtc|curand} shared object not found``
- ``version_mismatch``: ``Transformer Engine package version mismatch`` (TE 1.10 wording
  ``TransformerEngine package version mismatch``), ``Minimum torch version ... required``
- ``broken_install``: ``Found empty `transformer-engine` meta package``, ``Could not find TE core
  package``
- ``missing_dependency``: ``No module named X`` for an X other than the module itself
- ``not_installed``, ``timeout``, ``crash`` (killed by a signal or no result), ``other``
"""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.base import isolate, proc
from preflight.base.proc import ProcResult
from preflight.probes.base import ProbeResult, ProbeStatus

MODULES: tuple[str, ...] = ("torch", "transformer_engine", "torchao", "deepspeed")
TIMEOUT_S = 90.0
_MARK = "@@fp8-doctor-import@@"

# The child: import one module, report JSON on the last line of stdout. `python -c` puts the
# current directory first on sys.path; drop it, or running fp8-doctor inside a TE / DeepSpeed /
# torchao source checkout would import the source tree instead of what is installed (and disagree
# with the packages probe, which reads installed metadata). PYTHONPATH entries stay.
_CHILD = r"""
import json, sys, time, traceback
if sys.path and sys.path[0] == "":
    del sys.path[0]
name = sys.argv[1]
out = {"module": name}
t0 = time.perf_counter()
try:
    mod = __import__(name)
    if name == "transformer_engine":
        # TE 2.x loads its torch extension in transformer_engine.pytorch only: the top package
        # imports fine without it (TE 2.20.2 on an H100, fp8-doctor issue 15).
        __import__("transformer_engine.pytorch")
    out["ok"] = True
    out["version"] = str(getattr(mod, "__version__", "") or "")
    if name == "torch":
        out["cuda_version"] = mod.version.cuda
        try:
            out["cuda_available"] = bool(mod.cuda.is_available())
            out["device_count"] = int(mod.cuda.device_count())
        except Exception as exc:
            out["cuda_error"] = f"{type(exc).__name__}: {exc}"
except BaseException as exc:
    out["ok"] = False
    out["type"] = type(exc).__name__
    out["missing"] = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    out["error"] = f"{type(exc).__name__}: {exc}"
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    out["traceback"] = "".join(tb)[-4000:]
out["seconds"] = time.perf_counter() - t0
sys.stdout.flush()
print("\n" + MARK + json.dumps(out), flush=True)
""".replace("MARK", repr(_MARK))

_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("abi_undefined_symbol", ("undefined symbol",)),
    ("version_mismatch", ("package version mismatch", "minimum torch version", "version mismatch")),
    ("broken_install", ("found empty `transformer-engine` meta package",
                        "could not find te core package", "could not find `transformer-engine`")),
    ("missing_library", ("cannot open shared object file", "could not find shared object file",
                         "shared object not found", "could not find libtransformer_engine",
                         "libcuda.so", "libcudart.so")),
)


def classify(module: str, error: str, missing: str | None = None) -> str:
    """The failure class of one import error message (see the module docstring)."""
    low = error.lower()
    for kind, needles in _RULES:
        if any(n in low for n in needles):
            return kind
    if error.startswith("ModuleNotFoundError"):
        top = (missing or "").split(".")[0]
        return "not_installed" if top == module.split(".")[0] else "missing_dependency"
    return "other"


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""


def _result(module: str, res: ProcResult, timeout: float) -> dict[str, Any]:
    p = f"import.{module}"
    out, err, seconds = res.stdout, res.stderr, res.seconds
    if res.timed_out:
        return {f"{p}.ok": False, f"{p}.error_kind": "timeout", f"{p}.seconds": round(seconds, 3),
                f"{p}.error": f"import {module} did not finish within {timeout:g} s (killed)"}
    if res.overflowed:  # a flood of warnings, not an import: stopped at the cap (issue 13)
        return {f"{p}.ok": False, f"{p}.error_kind": "crash", f"{p}.seconds": round(seconds, 3),
                f"{p}.error": f"import {module} printed without end ({res.overflow_reason})"}
    payload = None
    for line in reversed(out.splitlines()):
        if line.startswith(_MARK):
            try:
                payload = json.loads(line[len(_MARK):])
            except ValueError:
                payload = None
            break
    if payload is None:
        code = res.returncode
        how = f"exit code {code}"
        if code is not None and code < 0:
            try:
                how = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        detail = _last_line(err)
        return {f"{p}.ok": False, f"{p}.error_kind": "crash", f"{p}.seconds": round(seconds, 3),
                f"{p}.error": f"import {module} crashed the interpreter ({how})"
                              + (f": {detail}" if detail else "")}
    facts: dict[str, Any] = {f"{p}.ok": bool(payload.get("ok")),
                             f"{p}.seconds": round(float(payload.get("seconds", seconds)), 3)}
    if payload.get("ok"):
        if payload.get("version"):
            facts[f"{p}.version"] = payload["version"]
        if module == "torch":
            if payload.get("cuda_version"):
                facts["import.torch.cuda_version"] = payload["cuda_version"]
            if "cuda_available" in payload:
                facts["import.torch.cuda_available"] = payload["cuda_available"]
                facts["import.torch.device_count"] = payload["device_count"]
        return facts
    error = str(payload.get("error", ""))
    facts[f"{p}.error"] = _last_line(error) or error[:500]
    facts[f"{p}.error_kind"] = classify(module, error, payload.get("missing"))
    return facts


def import_facts(modules: Sequence[str] = MODULES, *, timeout: float = TIMEOUT_S,
                 env: Mapping[str, str] | None = None,
                 python: str | None = None) -> dict[str, Any]:
    """``import.<module>.*`` facts; every module imported in its own child, in parallel
    (``python``: another interpreter than this one)."""
    # All children start at once and each has its own deadline, so the probe takes about as long
    # as the slowest import (bounded by ``timeout``), not the sum.
    # isolate: the job's and the cwd's modules are not importable there (issue 21 item 1)
    argv, child_env = isolate.python_argv, isolate.python_env(env)
    children = [(module, proc.start(argv("-c", _CHILD, module, executable=python), timeout,
                                    env=child_env))
                for module in modules]
    facts: dict[str, Any] = {}
    for module, child in children:
        if child.error:
            facts.update({f"import.{module}.ok": False, f"import.{module}.error_kind": "crash",
                          f"import.{module}.error": f"cannot start {child.error}"})
            continue
        facts.update(_result(module, proc.collect(child), timeout))
    return facts


def probe_imports(modules: Sequence[str] = MODULES, *, timeout: float = TIMEOUT_S,
                  env: Mapping[str, str] | None = None) -> ProbeResult:
    """The import probe as a :class:`ProbeResult` (provenance ``import-probe``)."""
    facts = import_facts(modules, timeout=timeout, env=env)
    status = ProbeStatus.OK
    return ProbeResult("imports", facts, {n: "import-probe" for n in facts}, status)
