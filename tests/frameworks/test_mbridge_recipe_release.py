"""A Megatron-Bridge recipe's precision is that of the release that runs (holdout8: the v0.6.0
table said BF16 for nemotron_3_super_pretrain_config, which sets NVFP4 at v0.4.0 and v0.5.0
and in the checkout the job held): the job's own recipe source first, else the table of the
installed release, else what every release agrees on, else Unknown with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks.megatron_bridge_presets import for_recipe, releases
from preflight.intent import derive
from preflight.jobs.read import read_paths

SUPER = "nemotron_3_super_pretrain_config"


def test_the_table_of_the_installed_release_decides() -> None:
    assert {"v0.4.0", "v0.5.0", "v0.6.0"} <= set(releases())
    for version in ("0.4.0", "0.4.2", "0.5.0rc1"):
        got = for_recipe(SUPER, version)
        assert isinstance(got, tuple) and got[0]["fp4"] == "e2m1", version
        assert f"v{version[:3]}" in got[1]
    got = for_recipe(SUPER, "0.6.0")
    assert isinstance(got, tuple) and got[0]["fp4"] is None and got[0]["fp8"] is None


def test_a_recipe_that_differs_between_releases_needs_the_version() -> None:
    for version in (None, Unknown("no megatron-bridge installed")):
        why = for_recipe(SUPER, version)
        assert isinstance(why, str) and "v0.5.0" in why and "v0.6.0" in why
    # a release the table does not cover
    why = for_recipe(SUPER, "0.9.0")
    assert isinstance(why, str) and "0.9.0" in why
    # the same in every release: no version needed
    same = for_recipe("gpt_oss_20b_pretrain_mxfp8_config", None)
    assert isinstance(same, tuple) and same[0]["fp8_recipe"] == "mxfp8"


def test_a_recipe_the_installed_release_lacks_is_what_every_release_with_it_says() -> None:
    # DeepSeek V4 recipes came after v0.4.0: the job runs another copy (a container's)
    got = for_recipe("deepseek_v4_flash_pretrain_mxfp8_config", "0.4.0")
    assert isinstance(got, tuple) and got[0]["fp8_recipe"] == "mxfp8"
    assert "not in v0.4.0" in got[1]


def _job(tmp_path: Path, body: str, line: str = "") -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    recipes = tmp_path / "src" / "megatron" / "bridge" / "recipes" / "nemotronh"
    recipes.mkdir(parents=True)
    (recipes / "nemotron_3_super.py").write_text(
        "from megatron.bridge.recipes.common import _pretrain_common\n\n\n"
        f"def {SUPER}():\n    cfg = _pretrain_common()\n{body}    return cfg\n")
    run = tmp_path / "run.sh"
    run.write_text(f"uv run python scripts/training/run_recipe.py --recipe {SUPER} {line}\n")
    return run


def _intent(run: Path) -> dict[str, Any]:
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def test_the_jobs_own_recipe_source_decides_whatever_the_release(tmp_path: Path) -> None:
    run = _job(tmp_path, '    cfg.mixed_precision = "bf16_with_mxfp8_mixed"\n')
    intent = _intent(run)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert "nemotron_3_super.py:6" in intent["recipe"][1]


def test_the_launch_line_still_wins_over_the_recipe(tmp_path: Path) -> None:
    run = _job(tmp_path, '    cfg.mixed_precision = "bf16_with_mxfp8_mixed"\n',
               "mixed_precision=bf16_mixed")
    assert _intent(run)["fp8"][0] is False


def test_without_the_source_the_installed_release_decides(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(f"python scripts/training/run_recipe.py --recipe {SUPER}\n")
    for version, fp4 in (("0.5.0", True), ("0.6.0", False)):
        report = preflight.check(str(run), smoke=False, assume={"gpu": "H100",
                                                               "pkg.megatron-bridge": version})
        assert report.facts["intent.fp8"] is fp4, version
    report = preflight.check(str(run), smoke=False, assume={"gpu": "H100"})
    fp8 = report.facts["intent.fp8"]
    assert isinstance(fp8, Unknown) and "pkg.megatron-bridge" in fp8.reason


def test_holdout8_shape_fires_hw_0006_on_hopper(tmp_path: Path) -> None:
    run = _job(tmp_path, '    cfg.mixed_precision = "nemotron_3_super_bf16_with_nvfp4_mixed"\n')
    report = preflight.check(str(run), smoke=False, assume={
        "gpu": "H100", "pkg.megatron-bridge": "0.6.0", "pkg.transformer-engine": "2.14.0"})
    # the job's own recipe says NVFP4, whatever the v0.6.0 table says
    assert "FP8D-HW-0006" in {f.rule_id for f in report.findings}
