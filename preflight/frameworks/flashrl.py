"""FlashRL (pip ``flash-llm-rl``, yaof20/Flash-RL at 7c828233): the rollout precision that the
``FLASHRL_CONFIG`` environment variable asks of the vLLM engine of an RL job (verl, SkyRL).

FlashRL installs ``import flash_rl`` into site-packages' usercustomize.py (setup.py
``setup_flashrl_env``); on import it patches vLLM's ``LLM.__init__`` when ``FLASHRL_CONFIG`` is
set (flash_rl/__init__.py:51; SGLang's engine instead when ``SGLANG_PATCH`` is set, :75). The
patch (vllm_patch.py:533-556 ``load_flashrl_config``) takes a profile-free name - ``fp8``,
``fp8_vllm``, ``fp8_fast``, ``fp8_vllm_fast`` (configs/fp8.py: ``quantization="fp8"``, vLLM's
online dynamic FP8: per-tensor E4M3 weight scales, re-quantized at each weight sync) or ``bf16``
(no quantization, the logprob patch only) - else a profile YAML path, local or
``<org>/<repo>/<file>`` on the Hugging Face hub, whose ``configs:`` list (one per data-parallel
rank, round robin) has each a ``fn`` (``int8*``, ``fp8*``, ``bf16``) and maybe ``quantization``.
A profile inside the job is read; one outside is never opened: its name (``...bf16.yaml``,
a ``quantized.w8a8`` model repo: INT8) is judged as :mod:`.ckptname` judges checkpoints, else the
rollout precision is Unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import ckptname, envfile
from preflight.reading import shellcalls
from preflight.reading.launchenv import process_env
from preflight.reading.parse import ParseError, parse_yaml
from preflight.reading.parse import read_text as read_text_file
from preflight.reading.refs import locate, under_roots
from preflight.reading.shellvars import collect_variables, runtime_reason, strip_comments

VAR = "FLASHRL_CONFIG"
_SRC = "yaof20/Flash-RL@7c828233"
# vllm_patch.py:537: the names load_flashrl_config takes without a profile file
_FP8 = frozenset({"fp8", "fp8_vllm", "fp8_fast", "fp8_vllm_fast"})
# llm-compressor / RedHatAI names for INT8 weight(-and-activation) conversions
_INT8_NAME = re.compile(r"(?i)(?:^|[-_./])(?:w8a8|w8a16|int8)(?:$|[-_./])")
_MAX_PROFILES = 64


@dataclass(frozen=True)
class Rollout:
    """What FlashRL makes of the rollout: ``fp8`` (True, False or Unknown), the FP8 recipe when
    known, and the precision in words (FP8, INT8, BF16)."""

    fp8: bool | Unknown
    recipe: str | None
    precision: str


def environ(path: str, text: str, at: int, before: Sequence[Any],
            outer: Mapping[str, str]) -> dict[str, tuple[Any, Any]]:
    """``FLASHRL_CONFIG`` and ``SGLANG_PATCH`` as the command at offset ``at`` gets them
    (:func:`.launchenv.process_env`: exports, prefix assignments, ``env``, a container or
    ``sudo`` start), then, where not set so, a ``uv run --env-file`` inside the job
    (:mod:`.envfile`); a variable an unread env file may set is Unknown."""
    clean = strip_comments(text.replace("\r\n", "\n"))
    caller = outer.get(shellcalls.CALLER, path)
    given = process_env(path, clean, at, collect_variables(clean, dict(outer), script=path),
                        [(n, caller) for n in outer.get(shellcalls.ENVIRON, "").split(",") if n])
    env = {name: (_value(value), where) for name, value, where in given}
    # "any variable": kept where a file or string not read may set them (`srun
    # --export-file`, `env -S`); a container's or sudo's own environment has no FLASHRL_CONFIG
    # the script does not give it, as a script that exports none has none
    star = env.pop("*", None)
    if star is not None and not any(w in str(star[0]) for w in ("env file", "env -S")):
        star = None
    names = envfile.files_named(before)
    got = envfile.read_files(names, path, text) if names is not None else None
    if star is not None and got is not None and not got.unread and "env file" in str(star[0]):
        star = None                 # the env file named is uv's, read here
    out: dict[str, tuple[Any, Any]] = {}
    for name in (VAR, "SGLANG_PATCH"):
        if name in env:
            out[name] = env[name]   # uv's dotenvy never overrides the environment
        elif got is not None and name in got.values:
            out[name] = got.values[name]
        elif star is not None:
            out[name] = star
        elif got is not None and got.unread:
            out[name] = got.unread[0]
    return out


def _value(value: Any) -> Any:
    """A :func:`.shellvars.runtime` marker as Unknown (its reason), else the value."""
    why = runtime_reason(value) if isinstance(value, str) else None
    return Unknown(why) if why is not None else value


def rollout(value: Any, script: str) -> Rollout:
    """The rollout precision ``FLASHRL_CONFIG=value`` asks for (``script``: the file that names
    it, for a relative profile path)."""
    if isinstance(value, Unknown):
        return Rollout(value, None, "unknown")
    name = str(value).strip()
    if name in _FP8:
        return Rollout(True, "tensorwise", "FP8")
    if name == "bf16":
        return Rollout(False, None, "BF16")
    found = (locate(name, script) or under_roots(name)) if name else None
    if found is not None:
        return _profile(found)
    judged = ckptname.says_fp8(name)
    if judged is None and _INT8_NAME.search(name):
        return Rollout(False, None, "INT8")
    if judged is not None:
        return Rollout(judged, None, "FP8" if judged else "BF16")
    return Rollout(Unknown(f"{VAR}={name[:80]!r}: a FlashRL profile not in the job (a local path "
                           "or one on the Hugging Face hub), not read, whose name does not say "
                           "its precision"), None, "unknown")


def _profile(path: str) -> Rollout:
    """A profile YAML of the job's own: FP8 when any of its configs is FP8 (FlashRL gives each
    data-parallel rank one of them in turn)."""
    try:
        data = parse_yaml(read_text_file(path)).data
    except ParseError as exc:
        return Rollout(Unknown(f"the FlashRL profile {path} was not read: {exc}"), None,
                       "unknown")
    configs = data.get("configs") if isinstance(data, dict) else None
    if not isinstance(configs, list) or not configs:
        return Rollout(Unknown(f"the FlashRL profile {path} has no configs: list"), None,
                       "unknown")
    kinds = set()
    for item in configs[:_MAX_PROFILES]:
        fn = str(item.get("fn", "int8")) if isinstance(item, dict) else ""
        quant = str(item.get("quantization", "")) if isinstance(item, dict) else ""
        kinds.add("FP8" if fn.startswith("fp8") or quant == "fp8" else
                  "BF16" if fn == "bf16" else "INT8" if fn.startswith("int8") else "?")
    if "FP8" in kinds:
        return Rollout(True, None, "FP8")
    if "?" in kinds:
        return Rollout(Unknown(f"the FlashRL profile {path} names a config fn not known here"),
                       None, "unknown")
    return Rollout(False, None, "INT8" if "INT8" in kinds else "BF16")


def facts(path: str, text: str, at: int, before: Sequence[Any],
          outer: Mapping[str, str]) -> dict[str, tuple[Any, Any]]:
    """The reader's ``flashrl.*`` facts (relative to its prefix) for the command at offset
    ``at``: ``flashrl.fp8``, ``flashrl.precision``, ``flashrl.engine`` (the engine FlashRL
    patches) and ``flashrl.recipe``; none when the job does not set ``FLASHRL_CONFIG``."""
    env = environ(path, text, at, before, outer)
    if VAR not in env:
        return {}
    value, where = env[VAR]
    got = rollout(value, where.path if isinstance(where, Source) else path)
    out: dict[str, tuple[Any, Any]] = {
        "flashrl.fp8": (got.fp8, where), "flashrl.precision": (got.precision, where),
        "flashrl.engine": (_patched(env.get("SGLANG_PATCH")), where)}
    if got.recipe is not None:
        out["flashrl.recipe"] = (got.recipe, where)
    return out


def _patched(sglang: tuple[Any, Any] | None) -> str | Unknown:
    """The engine FlashRL patches: SGLang's with ``SGLANG_PATCH`` set (flash_rl/__init__.py:75),
    else vLLM's; Unknown when whether it is set is."""
    if sglang is None:
        return "vllm"
    return sglang[0] if isinstance(sglang[0], Unknown) else "sglang"


def apply(out: Any, f: Mapping[str, Any], prefix: str, src: Any, engine: Any) -> bool:
    """Set ``rollout.fp8`` (and the recipe) from the ``flashrl.*`` facts under ``prefix`` when
    the rollout engine is the one FlashRL patches (``src(key)``: where a fact was read); True
    when it did."""
    fp8 = f.get(f"{prefix}.flashrl.fp8")
    if fp8 is None and f"{prefix}.flashrl.fp8" not in f:
        return False
    patched = f.get(f"{prefix}.flashrl.engine")
    if isinstance(engine, str) and isinstance(patched, str) and engine != patched:
        return False
    # where FLASHRL_CONFIG is set (what it means: flashrl.precision, beside it in the facts)
    why = src("flashrl.fp8")
    out["rollout.fp8"] = (fp8, why)
    recipe = f.get(f"{prefix}.flashrl.recipe")
    if recipe is not None:
        out["rollout.recipe"] = (recipe, why)
    return True
