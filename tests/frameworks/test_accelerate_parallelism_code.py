"""``Accelerator(parallelism_config=ParallelismConfig(...))`` built in the script gives intent.tp /
intent.cp as the YAML's ``parallelism_config`` keys would (holdout7: accelerate issue 3827, TE FP8
with tp_size=2 left FP8D-ACC-0093 quiet because the sizes were never read)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts
from preflight.jobs.read import read_paths


def _values(folder: Path, config: str) -> dict:
    (folder / "train.py").write_text(textwrap.dedent(f"""
        from accelerate import Accelerator
        from accelerate.parallelism_config import ParallelismConfig
        from accelerate.utils import TERecipeKwargs
        parallelism_config = {config}
        accelerator = Accelerator(mixed_precision="fp8", kwargs_handlers=[TERecipeKwargs()],
                                  parallelism_config=parallelism_config)
    """))
    read = read_paths([str(folder / "train.py")])
    values, prov = intent.derive(Facts(read.facts, read.provenance))
    return {**values, "_prov": prov}


@pytest.mark.parametrize("config, tp, cp", [
    ("ParallelismConfig(dp_shard_size=4, tp_size=2)", 2, None),
    ("ParallelismConfig(1, 2, 2, 2)", 2, 2),
    ("ParallelismConfig(cp_size=4)", None, 4),
])
def test_the_sizes_given_in_code_are_the_job_s(tmp_path: Path, config: str, tp: int | None,
                                               cp: int | None) -> None:
    values = _values(tmp_path, config)
    for name, want in (("intent.tp", tp), ("intent.cp", cp)):
        if want is None:          # a size not given is the environment's (PARALLELISM_CONFIG_*)
            assert not isinstance(values[name], int)
        else:
            assert values[name] == want
            assert values["_prov"][name].endswith("train.py:5")


def test_another_object_passed_states_nothing(tmp_path: Path) -> None:
    values = _values(tmp_path, "make_config()")
    assert not isinstance(values["intent.tp"], int)
