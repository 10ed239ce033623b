"""slime's and miles' ``--custom-config-path``: a YAML file whose every key is set on the parsed
arguments after parsing, over what the command line says (issue 22, holdout11: miles'
``--enable-mis`` writes ``use_tis: true`` there and FP8D-RL-0001 fired).

How they read it: slime ``slime_validate_args`` (slime/utils/arguments.py l.1949-1954 @ v0.3.1)
``yaml.safe_load``s the file and ``setattr(args, k, v)`` for each key; miles the same
(miles/utils/arguments.py l.3475-3480 @ 31f1ca96) through ``resolve_file_arg``, which also takes
an inline ``base64:<payload>`` (miles/utils/file_arg_utils.py), the form miles' Python
launchers build with ``U.encode_pseudo_file(config_text)`` (scripts/run_qwen3_4b.py
l.272-288; :mod:`preflight.reading.pyargs` computes that string as miles does). The shell
launchers name a file of the repository (examples/infra_features/train_infer_mismatch_helper/
run-qwen3-4b-mis.sh l.125: ``mis.yaml``).

Read here, never executed: the payload decoded (at most :data:`MAX_PAYLOAD` characters), or the
file where it lies inside the job (:func:`preflight.reading.parse.read_text`: bounded, inside the
read boundary), parsed as safe YAML; each scalar key becomes ``config.slime.<key>`` (and
``config.megatron.<key>`` where Megatron's flag of that name was read), at the key's line in the
file, or at the flag's line for a payload. Where the config cannot be read (a path computed when
the script runs, a file outside the job, bad YAML), ``use_tis`` -- the key the rules read from it
-- is Unknown with why, never "no".
"""

from __future__ import annotations

import base64
import binascii
import os
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.parse import ParseError, parse_yaml, read_text, usable_key
from preflight.reading.refs import locate, under_roots
from preflight.reading.shellvars import runtime_reason

PREFIX = "config.slime"
MEGATRON = "config.megatron"
FLAG = f"{PREFIX}.custom_config_path"
READ = f"{PREFIX}.custom_config"
"""True where the config was read; Unknown with why where not."""
PSEUDO = "base64:"
MAX_PAYLOAD = 1024 * 1024
MAX_KEYS = 256
RULES_READ = ("use_tis",)
"""Keys of the custom config the rules read (intent.rollout.is_correction): Unknown when the
config is not read, since it may set them."""


def apply(naming_file: str, facts: dict[str, Any], prov: dict[str, Any]) -> None:
    """Set the custom config's keys over the command line's (module docstring)."""
    if FLAG not in facts:
        return
    where = prov.get(FLAG, Source(naming_file, None))
    data, at = _load(facts[FLAG], naming_file)
    if isinstance(data, Unknown):
        facts[READ], prov[READ] = data, where
        for key in RULES_READ:
            facts[f"{PREFIX}.{key}"] = Unknown(f"--custom-config-path sets slime's arguments "
                                               f"after parsing and was not read: {data.reason}")
            prov[f"{PREFIX}.{key}"] = where
        return
    facts[READ], prov[READ] = True, where
    for n, (key, value) in enumerate(data.data.items()):
        if n >= MAX_KEYS or not isinstance(key, str) or not usable_key(key):
            continue
        src = Source(at, data.line_of((key,))) if at is not None else where
        names = [f"{PREFIX}.{key}"] + ([f"{MEGATRON}.{key}"] if f"{MEGATRON}.{key}" in facts
                                       else [])
        for name in names:
            if value is None:            # setattr(args, k, None): the flag is unset again
                facts.pop(name, None)
                prov.pop(name, None)
            elif key in RULES_READ and isinstance(value, (str, list, dict)):
                # slime tests it as Python does (loss.py l.987 `if ... or args.use_tis:` @
                # v0.3.1): `use_tis: 'false'` is on, `[]` off (redteam8: 'false' read as off)
                facts[name], prov[name] = bool(value), src
            elif isinstance(value, (bool, int, float, str)):
                facts[name], prov[name] = value, src
            else:
                facts[name], prov[name] = Unknown(f"{key} is a {type(value).__name__} in the "
                                                  "custom config"), src


def _load(value: Any, naming_file: str) -> tuple[Any, str | None]:
    """The parsed custom config and the file it came from (None for a payload), or Unknown."""
    if isinstance(value, Unknown):
        return Unknown(f"its path is not known here ({value.reason[:200]})"), None
    if not isinstance(value, str) or not value.strip():
        return Unknown("it is given no path"), None
    late = runtime_reason(value)
    if late is not None or "$" in value:
        return Unknown(f"its path is computed when the script runs ({(late or value)[:200]})"
                       ), None
    value = value.strip()
    if value.startswith(PSEUDO):
        payload = value[len(PSEUDO):]
        if len(payload) > MAX_PAYLOAD:
            return Unknown("its inline base64 payload is larger than any config"), None
        try:
            text = base64.b64decode(payload, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return Unknown("its inline base64: payload does not decode (miles refuses it)"), None
        return _parse(text, "the inline config"), None
    found = locate(value, naming_file) or under_roots(value)
    if found is None:
        return Unknown(f"no file {value[:120]!r} inside the job (next to "
                       f"{os.path.basename(naming_file)} or at the job's top)"), None
    try:
        text = read_text(found)
    except ParseError as exc:
        return Unknown(f"{value[:120]}: {exc.message}"), None
    return _parse(text, value[:120]), found


def _parse(text: str, what: str) -> Any:
    try:
        parsed = parse_yaml(text)
    except ParseError as exc:
        return Unknown(f"{what}: {exc.message}")
    if parsed.data is None:
        return parsed.__class__({}, {}, text)
    if not isinstance(parsed.data, dict):
        return Unknown(f"{what} is no YAML mapping (slime calls .items() on it)")
    return parsed
