"""FP8 scaling state across save, load and resume: train a few steps, save as jobs do, load into a
fresh model, then compare the scaling state and the next step's output and gradients.

Runs inside the smoke child only (imports torch). Every outcome is one of :data:`STATUSES`:

- ``restored``: the state and the next step match the uninterrupted model;
- ``refused``: loading raised (TE 2.16.1, 2.17.1 and >= 2.18 refuse pickled DelayedScaling
  ``_extra_state`` unless ``NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1``, TE PR 3123;
  ``torch.load(weights_only=True)`` refuses classes not allow-listed, torchtitan issue 651; DCP
  cannot load TE's extra state in place, TE issue 1860);
- ``drifted``: loading succeeded but the state or the next step differs (``_extra_state`` dropped:
  scales restart at 1.0, the loss spike after a resume of TE issues 982 and 759);
- ``not_applicable``: the recipe keeps no FP8 state (current scaling, MXFP8, torchao dynamic
  scaling) and the next step matches;
- ``error``: the check itself could not run (the error says where).

Files go to a private temporary folder that is removed afterwards; nothing else is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

STATUSES = ("restored", "refused", "drifted", "not_applicable", "error")
STEPS = 3               # optimizer steps before the save: fills a DelayedScaling amax history
RESUME_REL_TOL = 1e-3   # bf16 reruns of the same kernels are bit-identical; dropped scales are not
UNSAFE_PICKLE_ENV = "NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE"   # TE 2.16.1, 2.17.1, >= 2.18 (PR 3123)
EXTRA_STATE_SUFFIX = "_extra_state"
DIM, TOKENS = 256, 128  # one Linear: FP8 GEMMs engage, and it stays quick on the CPU

Step = Callable[[Any], dict[str, Any]]


def failure(exc: BaseException) -> str:
    """``Type: message`` (600 characters), for any exception but a request to stop.

    torch.distributed.checkpoint raises ``CheckpointException``, a ``BaseException`` (seen on
    torch 2.11: a TE ``_extra_state`` size mismatch escaped ``except Exception`` and ended the
    smoke child), so the checks here catch ``BaseException`` and re-raise only these two.
    """
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if len(lines) > 1:
        # DCP wraps the rank's traceback into its message: the last error line is the cause
        # ("ValueError: Size mismatch between saved ... for ..._extra_state").
        cause = next((ln for ln in reversed(lines) if "Error" in ln or "Exception" in ln),
                     lines[-1])
        return f"{type(exc).__name__}: {cause}"[:600]
    return f"{type(exc).__name__}: {exc}"[:600]


def classify(load_error: str | None, rel_diff: float | None, state_equal: bool | None,
             stateful: bool | None) -> str:
    """The verdict from what was measured. Pure: unit-tested with hypothesis on the CPU."""
    if load_error:
        return "refused"
    if rel_diff is None:
        return "error"
    if rel_diff > RESUME_REL_TOL or state_equal is False:
        return "drifted"
    if stateful is False:
        return "not_applicable"
    return "restored"


def fix_for(error: str | None, status: str) -> str | None:
    """What to do about a refused or drifted resume (None when nothing is to be done)."""
    if status == "refused" and error and UNSAFE_PICKLE_ENV in error:
        return ("Transformer Engine 2.16.1, 2.17.1 and >= 2.18 refuse pickled DelayedScaling "
                f"extra state: set {UNSAFE_PICKLE_ENV}=1 when loading checkpoints you trust, or "
                "train with a stateless recipe (Float8CurrentScaling, MXFP8); never drop _extra_state to get "
                "past the error (the FP8 scales restart at 1.0)")
    if status == "refused" and error and error.startswith("unreadable"):
        return "the checkpoint file is truncated or not a torch checkpoint: save it again"
    if status == "refused" and error and "Unsupported global" in error:
        return ("torch.load(weights_only=True) refuses the float8 tensor subclass: register it "
                "with torch.serialization.add_safe_globals([...]), or load checkpoints you trust "
                "with weights_only=False")
    mismatch = error is not None and "_extra_state" in error and "size mismatch" in error.lower()
    if status == "refused" and mismatch:
        return ("torch.distributed.checkpoint loads in place, into tensors of the size the fresh "
                "model has: Transformer Engine's DelayedScaling _extra_state is a pickle whose "
                "size changes with its content (empty before the first FP8 forward), so the load "
                "fails. Save and load TE models with torch.save / load_state_dict (or Megatron's "
                "dist_checkpointing, which handles TE's extra state), or use a stateless recipe")
    if status == "refused":
        return "see the error; the checkpoint cannot be loaded into a fresh model"
    if status == "drifted":
        return ("load the FP8 state with the weights (keep _extra_state, load_state_dict with "
                "strict=True) so that the scales and amax history resume where they stopped")
    return None


def train(model: Any, device: str, forward: Callable[[Any, Any], Any],
          weight: Callable[[Any], Any], *, seed: int, scale: float = 1.0) -> Step:
    """Train ``model`` :data:`STEPS` AdamW steps on fixed bf16 inputs; ``forward(model, x)`` runs
    it (inside the backend's autocast, where it has one). Returns the next step, to run on this
    model and on every loaded copy: output, input gradient and ``weight(model)``'s gradient."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    xs = [torch.randn((TOKENS, DIM), generator=g).to(device=device, dtype=torch.bfloat16) * scale
          for _ in range(STEPS + 1)]
    go = torch.randn((TOKENS, DIM), generator=g).to(device=device, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for x in xs[:-1]:
        opt.zero_grad(set_to_none=True)
        forward(model, x).float().pow(2).mean().backward()
        opt.step()

    def step(m: Any) -> dict[str, Any]:
        m.zero_grad(set_to_none=True)
        x = xs[-1].clone().requires_grad_(True)
        y = forward(m, x)
        y.backward(go)
        return {"out": y.detach().clone(), "xgrad": x.grad.detach().clone(),
                "wgrad": weight(m).grad.detach().clone()}

    return step


def rel_diff(ref: dict[str, Any], got: dict[str, Any]) -> float:
    """Largest |ref - got| / max|ref| over the next step's tensors (output, x.grad, w.grad)."""
    worst = 0.0
    for key, a in ref.items():
        b = got[key]
        a32, b32 = a.detach().float(), b.detach().float()
        scale = float(a32.abs().max()) or 1.0
        worst = max(worst, float((a32 - b32).abs().max()) / scale)
    return worst


def max_abs_diff(ref: dict[str, Any], got: dict[str, Any]) -> float:
    return max(float((a.detach().float() - got[k].detach().float()).abs().max())
               for k, a in ref.items())


@contextlib.contextmanager
def private_dir() -> Iterator[str]:
    """A temporary folder of our own, removed whatever happens."""
    path = tempfile.mkdtemp(prefix="fp8-doctor-resume-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def env_set(name: str, value: str | None) -> Iterator[None]:
    """Set (or, with None, leave alone) one variable for the block; restore it afterwards."""
    old = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if value is not None:
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def torch_load(path: str, weights_only: bool | None = None) -> tuple[Any, str | None]:
    """(state dict, None) or (None, why): a truncated file or a non-checkpoint says so."""
    import torch

    kwargs: dict[str, Any] = {"map_location": "cpu"}
    if weights_only is not None:
        kwargs["weights_only"] = weights_only
    try:
        return torch.load(path, **kwargs), None
    except BaseException as exc:  # noqa: BLE001 - every failure is a result
        text = failure(exc)
        if "Unsupported global" in text:   # a readable file holding a class not allow-listed
            return None, text
        return None, f"unreadable checkpoint {os.path.basename(path)}: {text}"


def load_into(model: Any, sd: Any, *, strict: bool = True) -> str | None:
    """load_state_dict; the error text (first 600 characters) when it raises."""
    try:
        model.load_state_dict(sd, strict=strict)
    except BaseException as exc:  # noqa: BLE001
        return failure(exc)
    return None


def dcp_round_trip(sd: dict[str, Any], fresh: Any, folder: str) -> str | None:
    """torch.distributed.checkpoint save and load on one rank (no process group)."""
    try:
        import torch.distributed.checkpoint as dcp

        dcp.save({"model": sd}, checkpoint_id=folder)
        target = {"model": fresh.state_dict()}
        dcp.load(target, checkpoint_id=folder)
    except BaseException as exc:  # noqa: BLE001
        return failure(exc)
    return load_into(fresh, target["model"])


def outcome(name: str, ref: dict[str, Any], fresh: Any, step: Step, load_error: str | None,
            state: Callable[[Any], Any] | None, ref_state: Any, stateful: bool | None
            ) -> dict[str, Any]:
    """Run the fresh model's next step (unless loading failed) and judge it."""
    out: dict[str, Any] = {"mode": name}
    diff = equal = None
    if load_error is None:
        try:
            got_state = state(fresh) if state else None
            equal = None if state is None else _same(ref_state, got_state)
            got = step(fresh)
            diff = rel_diff(ref, got)
            out["max_abs_diff"] = round(max_abs_diff(ref, got), 6)
        except BaseException as exc:  # noqa: BLE001
            out["error"] = failure(exc)
    status = classify(load_error, diff, equal, stateful)
    out.update(status=status, rel_diff=None if diff is None else round(diff, 6),
               state_equal=equal)
    if load_error:
        out["error"] = load_error
    fix = fix_for(load_error, status)
    if fix:
        out["fix"] = fix
    return out


def _same(a: Any, b: Any) -> bool:
    """Two scaling-state snapshots (dicts of float lists) are equal."""
    return bool(a == b)


def summary(prefix: str, res: dict[str, Any]) -> dict[str, Any]:
    """Flat result fields (resume_status, resume_error, ...) from one mode's outcome."""
    out = {f"{prefix}status": res.get("status")}
    for key in ("error", "fix", "max_abs_diff"):
        if res.get(key) is not None:
            out[f"{prefix}{key}"] = res[key]
    return out
