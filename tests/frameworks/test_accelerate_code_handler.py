"""FP8D-ACC-0001 (FP8 silently lost under DeepSpeed) sees a recipe handler passed in code:
``Accelerator(mixed_precision="fp8", kwargs_handlers=[TERecipeKwargs()])`` is converted from
accelerate 1.4.0 (``has_fp8_handler``, accelerator.py l.437-450 and l.3684-3697 at v1.4.0), an
explicit ``FP8RecipeKwargs(backend="TE")`` on 0.34.x (l.368-371, l.1315 at v0.34.2), while 1.0-1.3
ignore it (issue 3360). Real launch lines and scripts, read by their syntax tree, never run."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.jobs.read import read_paths

DS_YAML = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
           "deepspeed_config:\n  zero_stage: 2\nmixed_precision: fp8\nnum_processes: 8\n")
SCRIPT = """from accelerate import Accelerator
from accelerate.utils import AORecipeKwargs, FP8RecipeKwargs, TERecipeKwargs


def main(handlers):
    accelerator = Accelerator(mixed_precision="fp8", kwargs_handlers={handlers})
    model, optimizer = accelerator.prepare(model, optimizer)
"""


def _job(tmp: Path, handlers: str) -> list[str]:
    (tmp / "ds.yaml").write_text(DS_YAML)
    (tmp / "train.py").write_text(SCRIPT.format(handlers=handlers))
    (tmp / "launch.sh").write_text("accelerate launch --config_file ds.yaml train.py\n")
    return [str(tmp / "launch.sh")]


def _outcome(paths: list[str], version: str) -> str:
    report = preflight.check(paths, smoke=False, assume={
        "gpu": "H100", "pkg.accelerate": version, "pkg.transformer-engine": "2.8.0",
        "pkg.deepspeed": "0.16.4", "pkg.torchao": "0.12.0"})
    if any(f.rule_id == "FP8D-ACC-0001" for f in report.findings):
        return "fire"
    undetermined = {u.rule_id for u in report.undetermined}
    return "undetermined" if "FP8D-ACC-0001" in undetermined else "quiet"


@pytest.mark.parametrize(("handlers", "version", "expect"), [
    ('[TERecipeKwargs(fp8_format="HYBRID")]', "1.6.0", "quiet"),    # fired before: handler unseen
    ("[AORecipeKwargs()]", "1.4.0", "quiet"),
    ('[FP8RecipeKwargs(backend="te")]', "0.34.2", "quiet"),
    ('[FP8RecipeKwargs(backend="msamp")]', "0.34.2", "fire"),      # 0.34 has no enable_msamp
    ("[TERecipeKwargs()]", "1.3.0", "fire"),                       # ignored on 1.0-1.3
    ("[]", "1.6.0", "fire"),                                       # no handler: silent BF16
    ("[]", "1.8.1", "quiet"),                    # 1.8: mixed_precision="fp8" in code is enough
    ("[FP8RecipeKwargs()]", "1.6.0", "undetermined"),  # backend from the environment
    ("handlers", "1.6.0", "undetermined"),             # a parameter: not in the text
])
def test_acc0001_with_a_recipe_handler_in_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               handlers: str, version: str, expect: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert _outcome(_job(tmp_path, handlers), version) == expect


def test_the_code_handler_backend_is_a_fact_with_its_line(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    read = read_paths(_job(tmp_path, '[FP8RecipeKwargs(backend="te")]'))
    assert read.facts["config.accelerate.accelerator.fp8_backend"] == "TE"
    assert read.provenance["config.accelerate.accelerator.fp8_backend"].endswith("train.py:6")
    read = read_paths(_job(tmp_path, "[FP8RecipeKwargs()]"))
    unknown = read.facts["config.accelerate.accelerator.fp8_backend"]
    assert isinstance(unknown, Unknown) and "ACCELERATE_FP8_BACKEND" in unknown.reason
