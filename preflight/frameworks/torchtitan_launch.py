"""torchtitan launch lines: ``torchrun ... -m torchtitan.train --job.config_file X.toml
--a.b value`` and ``CONFIG_FILE=X.toml ./run_train.sh --a.b value`` (issue 22 item 2).

torchtitan's ``ConfigManager.parse_args`` (torchtitan/config/manager.py at v0.2.2, commit
73a0e6979dd10b6b1904098eb3c8f62c18ab87ce) loads the TOML named by ``--job.config_file`` /
``--job.config-file`` and hands it to ``tyro.cli`` as the default, so every ``--section.field
value`` (or ``--section.field=value``) on the line wins over the TOML. tyro takes ``-`` or ``_``
in names, a bare boolean flag means true and ``--section.no-field`` false, and ``list[str]``
fields are given comma-separated (``register_tyro_rules``: ``"a,b".split(",")``).
``run_train.sh`` passes ``"$@"`` on after ``--job.config_file ${CONFIG_FILE}`` (default
``./torchtitan/models/llama3/train_configs/debug_model.toml``).

The facts are ``config.torchtitan.*``, what the TOML reader gives, so the torchtitan framework
(:mod:`.torchtitan`) derives intent from the merged config. Python config registries (torchtitan
main since 2026-02) are read elsewhere.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.findings import Source
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.overrides import Override
from preflight.reading.types import ReaderOutput

KIND = "torchtitan"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"^torchtitan\.train$|(?:^|/)torchtitan/train\.py$|(?:^|/)run_train\.sh$")
HINT = re.compile(r"torchtitan[./]train\b|--job\.config[-_]file\b|"
                  r"(?:^|[\s/])run_train\.sh\b[^\n]*--[a-z_]+\.[a-z_]")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), dotted_flags=True)
# list[str] fields of JobConfig at v0.2.2 (torchtitan/config/job_config.py)
_LISTS = re.compile(r"^(?:model\.converters|compile\.components|checkpoint\.exclude_from_loading|"
                    r"activation_checkpoint\.per_op_sac_force_recompute_mm_shapes_by_fqns|"
                    r"(?:[\w.]+\.)?filter_fqns|(?:[\w.]+\.)?fqns)$")
DEFAULT_CONFIG = "./torchtitan/models/llama3/train_configs/debug_model.toml"


def _tyro(ov: Override) -> Override:
    """A flag as tyro reads it: ``-`` = ``_``, ``--a.no-b`` = ``a.b`` false, lists split."""
    path = tuple(p.replace("-", "_") for p in ov.path)
    value = ov.value
    if path[-1].startswith("no_") and value is True:
        path, value = (*path[:-1], path[-1][3:]), False
    if isinstance(value, str) and _LISTS.match(".".join(path)):
        value = [v for v in value.split(",") if v]
    return Override(ov.op, path, value, ov.raw)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    read.overrides[:] = [(_tyro(ov), src) for ov, src in read.overrides]
    base: tuple[Any, Source] | None = None
    for ov, src in read.overrides:
        if ov.path == ("job", "config_file"):
            base = (ov.value, src)
    if base is None and read.launch.entry.text.endswith("run_train.sh"):
        env = dict(read.launch.env)
        line = Source(path, text.count("\n", 0, read.launch.offset) + 1)
        base = (env.get("CONFIG_FILE", DEFAULT_CONFIG), line)
    merged = merged_facts(read, KIND, base, style="toml", key="--job.config_file")
    facts, prov = merged.facts, merged.provenance
    if not any(n.startswith(f"{PREFIX}.") and n != f"{PREFIX}.base_config" for n in facts):
        return ReaderOutput(problems=tuple(read.problems))
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)
