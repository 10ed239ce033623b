"""The environment slime's and miles' training processes run with, for :mod:`.slime` (issue 22):
``NVTE_*`` / ``NCCL_*`` variables read from where they reach the trainer, not from anywhere in
the launch script's text (an ``echo``, a comment or an unused JSON string reached no process).

Both build each training actor's environment the same way (THUDM/slime v0.3.1
slime/ray/actor_group.py l.64-71; radixark/miles 7e7926b13 miles/ray/train/actor_factory.py
l.27-38)::

    env_vars = {"NVTE_FP8_BLOCK_SCALING_FP32_SCALES": os.environ.get(NAME, DEFAULT), ...,
                **args.train_env_vars}

so, last wins:

1. ``--train-env-vars JSON`` of train.py (``type=json.loads``; slime/utils/arguments.py l.117 at
   v0.3.1, miles/utils/arguments.py l.182 at 7e7926b13): ``config.slime.train_env.<NAME>``;
2. the driver's environment: ``ray job submit --runtime-env-json`` ``env_vars`` on the launch
   command that runs train.py (``config.slime.env.<NAME>``), a miles Python launcher's
   ``extra_env_vars`` (:mod:`.miles_py`), the launch line's exports (``env.<NAME>``);
3. the default: slime ``"1"``; miles since 7e7926b13 (PR 1584, 2026-07-21) decides it by
   hardware (miles/utils/environ.py ``default_fp8_block_scaling_fp32_scales``: ``"0"`` on
   compute capability >= 10, where TE emulates the blockwise recipe with MXFP8 and needs
   power-of-two scales; ``"1"`` below), before it ``"1"``.

Which of the two runs (``config.slime.package``) is read from the launcher (miles' or slime's
``execute_train``) or from the paths the script names (``/root/miles/``, ``miles/utils/``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.shellexpand import TooLarge, launches, split_text

PREFIX = "config.slime"
# NVTE_* / NCCL_*, and slime's GLM-5 DSA attention switch of simulated FP8 KV (kv_fake_quant)
NAME = re.compile(r"(?:NVTE|NCCL)_[A-Z0-9_]+|DSA_KV_FP8_QAT")
MAX_JSON = 64 * 1024
"""Characters of a JSON argument parsed."""
MAX_LAUNCHES = 8
_MILES = re.compile(r"(?:/|\b)miles(?:/|\.(?:utils|backends|ray)\b)|/miles\b|\bradixark/miles\b")
_SLIME = re.compile(r"(?:/|\b)slime(?:/|\.(?:utils|backends|ray)\b)|/slime\b|\bTHUDM/slime\b")
SCALES = "NVTE_FP8_BLOCK_SCALING_FP32_SCALES"


def read(path: str, text: str, outer: dict[str, str], facts: dict[str, Any],
         prov: dict[str, Any]) -> None:
    """Add the ``env.*`` (runtime env), ``train_env.*`` and ``package`` facts of a launch
    script's text (see the module's docstring) to ``facts`` / ``prov``."""
    for name, (value, line) in _runtime_env(text, outer).items():
        facts[f"{PREFIX}.env.{name}"] = value
        prov[f"{PREFIX}.env.{name}"] = Source(path, line)
    raw = facts.get(f"{PREFIX}.train_env_vars")
    if raw is not None:
        where = prov.get(f"{PREFIX}.train_env_vars", path)
        for name, value in _train_env(raw).items():
            facts[f"{PREFIX}.train_env.{name}"] = value
            prov[f"{PREFIX}.train_env.{name}"] = where
    if f"{PREFIX}.package" not in facts:
        package = _package(text, outer)
        if package is not None:
            facts[f"{PREFIX}.package"] = package[0]
            prov[f"{PREFIX}.package"] = Source(path, text.count("\n", 0, package[1]) + 1)


def _train_env(raw: Any) -> dict[str, Any]:
    """``NVTE_*`` / ``NCCL_*`` of a ``--train-env-vars`` value; ``*`` (Unknown) when it is not
    known here (computed when the script runs, not a JSON object)."""
    if isinstance(raw, Unknown):
        return {"*": raw}
    try:
        data = json.loads(str(raw)[:MAX_JSON]) if len(str(raw)) <= MAX_JSON else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return {"*": Unknown(f"--train-env-vars {str(raw)[:60]!r} is no JSON object read here "
                             "(train.py parses it with json.loads)")}
    return {str(k): str(v) if isinstance(v, (str, int, float, bool)) else
            Unknown(f"{k} is given as {type(v).__name__} in --train-env-vars")
            for k, v in list(data.items())[:256] if NAME.fullmatch(str(k))}


def _runtime_env(text: str, outer: dict[str, str]) -> dict[str, tuple[Any, int]]:
    """``env_vars`` of ``--runtime-env-json`` on the launch commands that run train.py (as
    the shell expands them); a name the launches set differently is Unknown."""
    try:
        found = launches(split_text(text), _is_train, outer, limit=MAX_LAUNCHES)
    except TooLarge:
        return {}
    per: list[dict[str, tuple[Any, int]]] = []
    for lr in found:
        got: dict[str, tuple[Any, int]] = {}
        words = [a for a in lr.before]
        for n, arg in enumerate(words):
            value = arg.text.split("=", 1)[1] if arg.text.startswith("--runtime-env-json=") \
                else words[n + 1].text if arg.text == "--runtime-env-json" and \
                n + 1 < len(words) else None
            if value is None:
                continue
            line = text.count("\n", 0, arg.offset) + 1
            # a part only the run knows (`\"${HAS_NVLINK}\"`, miles' two-node script) is
            # left as written: that value is not known, the others are
            opaque = arg.opaque or (words[n + 1].opaque if "=" not in arg.text else None)
            try:
                data = json.loads(value[:MAX_JSON]) if len(value) <= MAX_JSON else None
            except (ValueError, RecursionError):
                data = None
            env = data.get("env_vars") if isinstance(data, dict) else None
            if not isinstance(env, dict):
                got["*"] = (Unknown("--runtime-env-json is no JSON object with env_vars read "
                                    f"here{f' ({opaque[:120]})' if opaque else ''}"), line)
                continue
            if isinstance(env, dict):
                for key, val in list(env.items())[:256]:
                    if opaque and NAME.fullmatch(str(key)) and "$" in str(val):
                        got[str(key)] = (Unknown(f"{key} in --runtime-env-json is known only "
                                                 f"when the script runs ({opaque[:120]})"), line)
                    elif NAME.fullmatch(str(key)) and isinstance(val, (str, int, float, bool)):
                        # where the name is written last before the command (the JSON's own
                        # line, in a variable or inline), else the command's
                        at = text.rfind(str(key), 0, max(arg.offset + len(arg.text), 0))
                        where = text.count("\n", 0, at) + 1 if at >= 0 else line
                        raw = text[at:text.find("\n", at)] if at >= 0 else "$"
                        changes = opaque or arg.conditional is not None or (
                            n + 1 < len(words) and words[n + 1].conditional is not None)
                        got[str(key)] = (str(val), where) if not changes or "$" not in raw \
                            else (Unknown(f"{key} in --runtime-env-json comes from a shell "
                                          "variable set in a branch or at run time"), where)
        per.append(got)
    out: dict[str, tuple[Any, int]] = {}
    for name in {n for got in per for n in got}:
        values = {str(got.get(name, (None,))[0]) for got in per}
        first = next(got[name] for got in per if name in got)
        out[name] = first if len(values) == 1 else (Unknown(
            f"the launches of train.py set {name} differently in --runtime-env-json"), first[1])
    return out


def _package(text: str, outer: dict[str, str]) -> tuple[str, int] | None:
    """``("miles" | "slime", offset)`` where the launch commands of train.py name one checkout
    only (``python3 /root/miles/train.py``, ``PYTHONPATH`` in the runtime env, the words as the
    shell expands them: no comment or echo counts); None otherwise."""
    try:
        found = launches(split_text(text), _is_train, outer, limit=MAX_LAUNCHES)
    except TooLarge:
        return None
    seen: dict[str, int] = {}
    for lr in found:
        for arg in (lr.entry, *lr.before, *lr.args):
            for name, shape in (("miles", _MILES), ("slime", _SLIME)):
                if shape.search(arg.text) and not arg.opaque:
                    seen.setdefault(name, arg.offset)
    return next(iter(seen.items())) if len(seen) == 1 else None


def _is_train(word: str) -> bool:
    return word.endswith(".py") and word.rsplit("/", 1)[-1].startswith("train")


def fp32_scales(f: Mapping[str, Any], prov: Mapping[str, str]) -> tuple[Any, str]:
    """Whether the training actors run with ``NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1`` (see the
    module's docstring); ``f``: every fact (the launch line's ``env.*``, ``gpu.max_cc``)."""
    found = _set_for_trainer(f, prov, (f"{PREFIX}.train_env.{SCALES}", f"{PREFIX}.train_env.*",
                                       f"{PREFIX}.env.{SCALES}", f"{PREFIX}.env.*",
                                       f"env.{SCALES}"))
    if found is not None:
        value, src = found
        return (value if isinstance(value, Unknown) else str(value).strip() == "1"), src
    package = f.get(f"{PREFIX}.package")
    cc = _cc(f.get("gpu.max_cc"))
    slime = ("slime default for its Ray actors (slime/ray/actor_group.py l.68 at v0.3.1: 1 "
             "unless set)")
    if package == "slime":
        return True, slime
    if cc is not None and cc < 10:
        return True, ("slime and miles default below compute capability 10 (slime actor_group."
                      "py l.68 at v0.3.1; miles/utils/environ.py at 7e7926b13)")
    why = ("miles since 7e7926b13 (PR 1584) sets 0 on compute capability >= 10 and 1 below, "
           "earlier miles and slime 1: which checkout runs is not read")
    if package != "miles":
        why = "slime sets 1, " + why
    return Unknown(why if cc is not None else why + "; the GPU is not known"), \
        prov.get(f"{PREFIX}.package", "slime/miles default")


def kv_fake_quant(f: Mapping[str, Any], prov: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """``config.slime.train_kv_fake_quant``: ``fp8`` where the trainer's environment sets
    ``DSA_KV_FP8_QAT`` on (slime a74ae3a0 slime_plugins/models/glm5/glm5.py l.254-262:
    "1"/"true"/"yes"/"on" after strip().lower(); alignment/env.py l.19-55 sets it for GLM-5
    train/rollout alignment): the GLM-5 DSA attention quantizes its K/V to FP8 and back
    (``quantize_k_cache`` / ``dequantize_k_cache``, straight-through backward) in BF16 compute,
    simulated FP8 KV, no FP8 GEMM or FP8 storage; ``none`` where set off; None where not set.
    Same precedence as :func:`fp32_scales` (``--train-env-vars``, then the runtime env)."""
    found = _set_for_trainer(f, prov, (f"{PREFIX}.train_env.DSA_KV_FP8_QAT",
                                       f"{PREFIX}.train_env.*", f"{PREFIX}.env.DSA_KV_FP8_QAT"))
    if found is not None:
        value, src = found
        if isinstance(value, Unknown):
            return value, src
        return ("fp8" if str(value).strip().lower() in ("1", "true", "yes", "on") else "none"), src
    return None


def _set_for_trainer(f: Mapping[str, Any], prov: Mapping[str, Any],
                     keys: tuple[str, ...]) -> tuple[Any, Any] | None:
    """The first of ``keys`` the facts hold, in precedence order, with its source: an Unknown
    (``train_env.*``: a runtime env the text does not show) stops the search; a known ``*``
    entry only says other variables were read, so the search goes on."""
    for key in keys:
        if key in f:
            value = f[key]
            if isinstance(value, Unknown):
                return value, prov.get(key, key)
            if not key.endswith("*"):
                return value, prov.get(key, key)
    return None


def _cc(value: Any) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None
