"""Whether the NeMo-RL checkout a job runs from carries fixes and options its version cannot tell
(``config.nemo_rl.source.*``), read from the job's own copy of NeMo-RL's source.

A NeMo-RL checkout of main reports the last release's version (``nemo_rl/package_info.py``: 0.6.0
on main after v0.7.0), so FP8D-NRL-0005 / FP8D-NRL-0006 cannot tell from ``pkg.nemo-rl.version``
whether a main checkout has the fix, nor FP8D-NRL-0007 whether it reads ``is_mx``. When the job
holds NeMo-RL's source (``nemo_rl/`` in a folder at or above the config, inside the read boundary;
NeMo-RL runs from its checkout, ``uv run examples/run_grpo.py``), the files the fixes changed are
read there (bounded, parsed, never imported):

- ``colocated_refit_kv_scales``: PR 3226 (d5824c064, 2026-07-22) added ``kv_scales=kv_scales`` to
  the colocated refit's ``policy.stream_weights_via_ipc_zmq(...)`` call in
  ``nemo_rl/algorithms/grpo.py`` (L2224-L2226 at d5824c064; the call without it: L1157 at v0.6.0,
  L1924 at v0.7.0). True: every such call passes ``kv_scales``; false: one does not; Unknown: no
  such call (the refit moved) or the file cannot be parsed.
- ``ray_v2_fp8_patch``: PR 3754 (merged 2026-08-21, "apply FP8 patches with RayExecutorV2")
  wraps ``RayWorkerProc.initialize_worker`` in ``nemo_rl/models/generation/vllm/quantization/
  fp8.py``; before it the file patches only ``RayDistributedExecutor.collective_rpc`` (L95-L121
  at 7ea279abf). True: the file names ``RayWorkerProc`` or ``RayExecutorV2``; false: it names
  only ``RayDistributedExecutor``; Unknown otherwise.
- ``vllm_is_mx``: PR 1887 (ff2404c5b, 2026-07-07, on main only: v0.7.0 branched on 2026-06-27)
  taught ``init_fp8`` in the same ``fp8.py`` to read ``vllm_cfg.is_mx`` (L193, L212-L231 at
  7ea279abf); before it the file never names ``is_mx`` and builds 128x128 block scales whatever the
  config says (``FP8_BLOCK_QUANT_KWARGS``, L33 and L204 at v0.7.0). True: the file names
  ``is_mx``; false: it does not (read and valid text).
- ``fp8_vllm010_weight_patch``: PR 543 (bc24887c7, 2025-08-21, first released in v0.4.0) put the FP8
  rollout's vLLM patches in ``nemo_rl/models/generation/fp8.py``; its
  ``process_weights_after_loading`` rebuilt the block-FP8 weights through vLLM 0.10's
  ``Fp8LinearMethod._maybe_pad_weight`` (L421 at v0.4.0). PR 1432 (6a035bcc6, 2025-11-10) replaced
  that with vLLM 0.11's ``fp8_utils.process_fp8_weight_block_strategy`` after PR 1334 (3f36d14b5,
  2025-10-26) had moved main to vLLM 0.11.0 (issue 1368). True: that file calls
  ``_maybe_pad_weight``; false: it does not (read and valid text); absent where the file is not
  there (NeMo-RL 0.5.0 moved it to ``vllm/quantization/fp8.py``).

Absent where the job does not hold the source: the rules then go by the version, as before; but
``fp8_vllm010_weight_patch`` is also inferred, and its provenance says so, from NeMo-RL's own base
config ``examples/configs/grpo_math_1B.yaml`` where the job holds it (a recipe's ``defaults:``
chain): a base with ``grpo.overlong_filtering`` (added by PR 724, 0358a86f6, 2025-09-01) and
without ``policy.offload_optimizer_for_logprob`` (added by PR 1404, 8615ee9ab, 2025-11-06, never
removed since: v0.5.0, v0.6.0, v0.7.0, 7ea279abf) comes from a checkout of 2025-09-01 to
2025-11-06, after PR 543's FP8 patch and before PR 1432: true (holdout17, issue 1368, whose base
is at 0a769cc3553a). Any other base says nothing (absent).
"""

from __future__ import annotations

import ast
import os
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import textcache
from preflight.reading.boundary import above
from preflight.reading.parse import ParseError, parse_yaml, read_text
from preflight.reading.pyenviron import Noted
from preflight.reading.types import ReaderOutput

PREFIX = "config.nemo_rl.source"
MAX_UP = 6
GRPO = os.path.join("nemo_rl", "algorithms", "grpo.py")
FP8 = os.path.join("nemo_rl", "models", "generation", "vllm", "quantization", "fp8.py")
FP8_OLD = os.path.join("nemo_rl", "models", "generation", "fp8.py")
_CALL = "stream_weights_via_ipc_zmq"


def checkout(config: str) -> str | None:
    """The folder holding ``nemo_rl/algorithms/grpo.py`` at or above ``config``, inside the
    job; None when the job does not hold NeMo-RL's source."""
    return above(config, GRPO, False, MAX_UP)


def _text(path: str) -> tuple[str | None, str]:
    try:
        return read_text(path), ""
    except (ParseError, OSError, ValueError) as exc:
        return None, str(exc)[:120]


def kv_scales(path: str) -> tuple[Any, Source]:
    """(colocated_refit_kv_scales, where) from ``grpo.py`` at ``path``."""
    text, why = _text(path)
    if text is None:
        return Unknown(f"{os.path.basename(path)} not read: {why}"), Source(path)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Unknown(f"{os.path.basename(path)} is not Python that parses"), Source(path)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and
             isinstance(n.func, ast.Attribute) and n.func.attr == _CALL]
    if not calls:
        return Unknown(f"{os.path.basename(path)} has no {_CALL}(...) call (NeMo-RL moved its "
                       "colocated refit): whether it passes the KV scales is not known"), \
            Source(path)
    bare = next((c for c in calls if not any(k.arg == "kv_scales" for k in c.keywords)), None)
    if bare is not None:
        return False, Source(path, bare.lineno)
    return True, Source(path, calls[0].lineno)


def ray_v2(path: str) -> tuple[Any, Source]:
    """(ray_v2_fp8_patch, where) from ``quantization/fp8.py`` at ``path``."""
    text, why = _text(path)
    if text is None:
        return Unknown(f"{os.path.basename(path)} not read: {why}"), Source(path)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Unknown(f"{os.path.basename(path)} is not Python that parses"), Source(path)
    # names the code uses (imported, referred to, patched), never a comment or a string that
    # mentions one (redteam11: `# TODO: patch RayWorkerProc` read as the fix)
    named: dict[str, int] = {}
    for node in ast.walk(tree):
        found = (node.id if isinstance(node, ast.Name) else node.attr
                 if isinstance(node, ast.Attribute) else node.name.rsplit(".", 1)[-1]
                 if isinstance(node, ast.alias) else None)
        if found is not None:
            named.setdefault(found, getattr(node, "lineno", 1))
    for word, value in (("RayWorkerProc", True), ("RayExecutorV2", True),
                        ("RayDistributedExecutor", False)):
        if word in named:
            return value, Source(path, named[word])
    return Unknown(f"{os.path.basename(path)} patches no vLLM Ray executor NeMo-RL is known to "
                   "patch"), Source(path)


def is_mx(path: str) -> tuple[Any, Source]:
    """(vllm_is_mx, where) from ``quantization/fp8.py`` at ``path``: whether the checkout's FP8
    rollout reads ``vllm_cfg.is_mx`` (MXFP8) at all."""
    return _marked(path, "is_mx")


def pads_weight(path: str) -> tuple[Any, Source]:
    """(fp8_vllm010_weight_patch, where) from the pre-0.5 ``generation/fp8.py`` at ``path``:
    whether it still calls vLLM 0.10's ``_maybe_pad_weight`` (before NeMo-RL PR 1432)."""
    return _marked(path, "._maybe_pad_weight(")


def _marked(path: str, marker: str) -> tuple[Any, Source]:
    """Whether the file at ``path`` holds ``marker``, and the line of its first occurrence."""
    text, why = _text(path)
    if text is None:
        return Unknown(f"{os.path.basename(path)} not read: {why}"), Source(path)
    at = text.find(marker)
    if at < 0:
        return False, Source(path)
    return True, Source(path, text.count("\n", 0, at) + 1)


def evidence(config: str) -> dict[str, tuple[Any, Source]]:
    """``config.nemo_rl.source.*`` for the checkout ``config`` is in (empty: not in the job);
    worked out once per check and checkout."""
    root = checkout(config)
    if root is None:
        return {}

    def work() -> dict[str, tuple[Any, Source]]:
        out = {f"{PREFIX}.colocated_refit_kv_scales": kv_scales(os.path.join(root, GRPO))}
        if os.path.isfile(os.path.join(root, FP8)):
            out[f"{PREFIX}.ray_v2_fp8_patch"] = ray_v2(os.path.join(root, FP8))
            out[f"{PREFIX}.vllm_is_mx"] = is_mx(os.path.join(root, FP8))
        if os.path.isfile(os.path.join(root, FP8_OLD)):
            out[f"{PREFIX}.fp8_vllm010_weight_patch"] = pads_weight(os.path.join(root, FP8_OLD))
        return out

    got: dict[str, tuple[Any, Source]] = textcache.memo((__name__, root), work)
    return got


def with_source(path: str, out: ReaderOutput) -> ReaderOutput:
    """``out`` (a NeMo-RL config or launch line read at ``path``) with the checkout's evidence,
    where it states NeMo-RL settings."""
    if not any(n.startswith("config.nemo_rl.") for n in out.facts):
        return out
    found = evidence(path) or dated(path, out)
    if not found:
        return out
    facts, prov = dict(out.facts), dict(out.provenance)
    for name, (value, where) in found.items():
        facts.setdefault(name, value)
        prov.setdefault(name, where)
    return ReaderOutput(facts, prov, out.problems, out.linked)


BASE = "grpo_math_1B.yaml"


def dated(path: str, out: ReaderOutput) -> dict[str, tuple[Any, Source]]:
    """``fp8_vllm010_weight_patch`` inferred from the keys of the job's copy of NeMo-RL's base
    config (the module docstring says which); empty where it holds none or the keys say
    nothing."""
    files = [path, *(link.path for link in out.linked if not link.missing)]
    base = next((f for f in files if os.path.basename(f) == BASE and os.path.isfile(f)), None)
    if base is None:
        return {}
    text, _ = _text(base)
    try:
        parsed = parse_yaml(text) if text is not None else None
    except ParseError:
        return {}
    data = parsed.data if parsed is not None else None
    if parsed is None or not isinstance(data, dict):
        return {}
    grpo, policy = data.get("grpo"), data.get("policy")
    if not (isinstance(grpo, dict) and "overlong_filtering" in grpo and
            isinstance(policy, dict) and "offload_optimizer_for_logprob" not in policy):
        return {}
    where = Noted(base, parsed.line_of(("grpo", "overlong_filtering")),
                  "inferred: this base has grpo.overlong_filtering, PR 724, and not "
                  "policy.offload_optimizer_for_logprob, PR 1404: a NeMo-RL checkout of "
                  "2025-09-01 to 2025-11-06, before PR 1432")
    return {f"{PREFIX}.fp8_vllm010_weight_patch": (True, where)}
