"""Cosmos-RL (nvidia-cosmos/cosmos-rl v0.3.0-v0.4.4): its TOML and ``cosmos-rl --config X.toml``
(fixtures/configs/cosmos_rl: four of its shipped configs, verbatim at 89f2e5b5 = v0.4.4).
``[train.fp8]`` is torchao float8 (rowwise / tensorwise), ``train.compile`` defaults on,
``[rollout] quantization = "fp8"`` is vLLM FP8 patched to rowwise, ``use_decoupled_loss`` the
importance-sampling correction. Hostile: duplicate keys, bad types, huge TOML, a config outside
the job, no ``--config``, values its asserts refuse, an SFT config (no rollout)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "cosmos_rl"
BOTH = "configs/qwen3/qwen3-8b-p-fsdp1-tp4-fp8-r-tp4-pp1-fp8-grpo.toml"
POLICY = "configs/qwen3/qwen3-8b-p-fsdp1-tp4-r-tp4-pp1-grpo-fp8.toml"
ROLLOUT = "configs/qwen2-5/qwen2-5-7b-p-fsdp2-tp2-r-tp2-pp1-fp8-grpo.toml"
SFT = "configs/gemma/gemma3-12b-vlm-fsdp4-sft.toml"


def _read(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, line: str | None = None) -> Path:
    job = tmp_path / "job"
    shutil.copytree(FIX, job, dirs_exist_ok=True)
    (job / ".git").mkdir(exist_ok=True)
    if line is not None:
        (job / "launch.sh").write_text("#!/bin/bash\n" + line + "\n")
    return job / "launch.sh"


def _toml(tmp_path: Path, edit: str, base: str = BOTH, old: str | None = None) -> Path:
    path = _job(tmp_path, f"cosmos-rl --config {base}")
    config = path.parent / base
    text = config.read_text()
    config.write_text(text.replace(old, edit) if old else text + "\n" + edit + "\n")
    return path


def test_shipped_fp8_grpo_launch(tmp_path: Path) -> None:
    intent, read = _read(_job(tmp_path))
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "torchao" and intent["recipe"][0] == "rowwise"
    assert intent["fp8"][1].endswith(BOTH + ":25")           # enable_fp8 = true
    assert intent["compile"][0] is False and intent["tp"][0] == 4
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.fp8"][0] is True and intent["rollout.recipe"][0] == "rowwise"
    assert intent["rollout.is_correction"][0] is False
    assert intent["rollout.kv_cache_fp8"][0] is False
    assert intent["stack"][0] == ["cosmos_rl"]
    assert [k for _, k in read.files] == ["cosmos_rl", "cosmos_rl"]


@pytest.mark.parametrize("config, fp8, rollout", [
    (BOTH, True, True), (POLICY, True, False), (ROLLOUT, False, True)])
def test_shipped_tomls_alone(config: str, fp8: bool, rollout: bool) -> None:
    intent, _ = _read(FIX / config)
    assert intent["fp8"][0] is fp8
    assert intent["rollout.fp8"][0] is rollout


def test_fsdp2_shards_and_default_compile() -> None:
    intent, _ = _read(FIX / ROLLOUT)
    assert intent["distributed"][0] == "fsdp2" and intent["tp"][0] == 2


def test_sft_has_no_rollout() -> None:
    intent, read = _read(FIX / SFT)
    assert read.files and read.files[0][1] == "cosmos_rl"
    assert intent["fp8"][0] is False
    assert "rollout.fp8" not in intent                        # not stated: no rollout
    assert intent["compile"][0] is False                     # compile = false (l.16)


def test_compile_defaults_on(tmp_path: Path) -> None:
    intent, _ = _read(_toml(tmp_path, "", old="compile = false"))
    assert intent["compile"][0] is True                      # TrainingConfig l.911


def test_launch_forms(tmp_path: Path) -> None:
    for line in (f"python -m cosmos_rl.launcher.launch_all --config {BOTH}",
                 f"python cosmos_rl/launcher/launch_all.py --config {BOTH} tools/reward.py",
                 f"cosmos-rl --policy 1 --rollout 2 --config {BOTH}"):
        intent, _ = _read(_job(tmp_path, line))
        assert intent["fp8"][0] is True, line


def test_custom_script_is_kept_not_read(tmp_path: Path) -> None:
    _, read = _read(_job(tmp_path, f"cosmos-rl --config {BOTH} tools/my_reward.py"))
    assert read.facts["config.cosmos_rl.script"] == "tools/my_reward.py"


@pytest.mark.parametrize("edit, old, key, want", [
    ('quant_recipe = "tensorwise"', 'quant_recipe = "rowwise"', "recipe", "tensorwise"),
    ('quant_recipe = "blockwise"', 'quant_recipe = "rowwise"', "recipe", None),
    ('fp8_recipe = "delayed_scaling"', 'fp8_recipe = "dynamic_scaling"', "recipe", None),
    ('enable_fp8 = "true"', "enable_fp8 = true", "fp8", True),     # pydantic takes it
    ('enable_fp8 = "off"', "enable_fp8 = true", "fp8", False),
    ("enable_fp8 = 3", "enable_fp8 = true", "fp8", None),          # pydantic refuses it
    ("compile = true", "compile = false", "compile", True),
    ("enable_fp8 = false\n[train.fp4]\nenable_fp4 = true", "enable_fp8 = true", "recipe",
     "nvfp4"),                                                     # its own NVFP4 without FP8
    ("enable_fp8 = true\n[train.fp4]\nenable_fp4 = true", "enable_fp8 = true", "recipe",
     "rowwise"),                                                   # FP8 first (llm_trainer)
    ('backend = "trtllm"\nquantization = "fp8"', 'quantization = "fp8"', "rollout.fp8", None),
    ('backend = "my_engine"\nquantization = "fp8"', 'quantization = "fp8"', "rollout.engine",
     None),
])
def test_values(tmp_path: Path, edit: str, old: str, key: str, want: Any) -> None:
    intent, _ = _read(_toml(tmp_path, edit, old=old))
    got = intent[key][0]
    if want is None:
        assert isinstance(got, Unknown), got
    else:
        assert got == want


def test_decoupled_loss_is_the_correction(tmp_path: Path) -> None:
    path = _toml(tmp_path, 'type = "grpo"\nuse_decoupled_loss = true\nbehav_imp_weight_cap = 3.0',
                 old='type = "grpo"')
    intent, _ = _read(path)
    assert intent["rollout.is_correction"][0] is True


def test_rollout_logprobs_for_loss_is_unknown(tmp_path: Path) -> None:
    path = _toml(tmp_path, 'type = "grpo"\nuse_rollout_logprobs_for_loss = true',
                 old='type = "grpo"')
    intent, _ = _read(path)
    assert isinstance(intent["rollout.is_correction"][0], Unknown)


def test_duplicate_key_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _toml(tmp_path, "enable_fp8 = true\nenable_fp8 = false", old="enable_fp8 = true")
    intent, read = _read(path)
    assert intent["fp8"][0] is not False
    assert any(p.path.endswith(".toml") and p.level == "error" for p in read.problems)


def test_huge_toml_is_refused(tmp_path: Path) -> None:
    path = _job(tmp_path, "cosmos-rl --config big.toml")
    (path.parent / "big.toml").write_text("[train.fp8]\nenable_fp8 = true\n" +
                                          "".join(f"k{i} = {i}\n" for i in range(600_000)))
    intent, read = _read(path)
    assert intent["fp8"][0] is not False                     # never "no" from a file not read
    assert read.problems


def test_config_outside_the_job_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text((FIX / BOTH).read_text())
    intent, read = _read(_job(tmp_path, f"cosmos-rl --config {outside}"))
    assert isinstance(intent["fp8"][0], Unknown)
    assert "outside" in intent["fp8"][0].reason


def test_no_config_flag_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, "cosmos-rl --policy 1"))
    assert isinstance(intent["fp8"][0], Unknown)


def test_generic_toml_is_not_claimed(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text("[train]\nepochs = 1\n[rollout]\nquantization = \"fp8\"\n[policy]\nx = 1\n")
    _, read = _read(path)
    assert not any(k == "cosmos_rl" for _, k in read.files)


@pytest.mark.parametrize("edit", ["enable_fp8 = {a = 1}", "enable_fp8 = [true]",
                                  "enable_fp8 = []", "enable_fp8 = {}",
                                  "[train.fp8.enable_fp8]\nx = 1"])
def test_a_table_or_list_where_the_bool_goes_is_unknown_at_its_line(tmp_path: Path,
                                                                   edit: str) -> None:
    # redteam10: `enable_fp8 = {a = 1}` was FP8 "no" (the table flattened, the key absent);
    # pydantic refuses the config (reading/boolflags.py tables / as_bool)
    intent, _ = _read(_toml(tmp_path, edit, old="enable_fp8 = true"))
    got, src = intent["fp8"]
    assert isinstance(got, Unknown) and str(src).endswith((".toml:25", ".toml:26")), (got, src)
