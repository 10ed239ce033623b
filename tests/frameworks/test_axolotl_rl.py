"""axolotl's RL rollout intent (issue 22, holdout11): ``rl: grpo`` with ``trl.use_vllm`` and the
``axolotl vllm-serve`` server, from axolotl's own docs (fixtures/configs/axolotl/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

GRPO = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "axolotl" / "grpo"
CONFIG = (GRPO / "grpo_config.yaml").read_text()
SCRIPT = (GRPO / "serve_and_train.sh").read_text()


def _job(tmp_path: Path, config: str = CONFIG, script: str | None = SCRIPT) -> list[Path]:
    (tmp_path / "grpo_config.yaml").write_text(config)
    paths = [tmp_path / "grpo_config.yaml"]
    if script is not None:
        (tmp_path / "run.sh").write_text(script)
        paths.insert(0, tmp_path / "run.sh")
    return paths


def _rollout(paths: list[Path]) -> dict:
    read = read_paths([str(p) for p in paths])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[len("intent.rollout."):]: (v, prov.get(k)) for k, v in values.items()
            if k.startswith("intent.rollout.")}


def test_docs_server_config_served_by_axolotl_vllm_serve_is_a_bf16_vllm_rollout(
        tmp_path: Path) -> None:
    got = _rollout(_job(tmp_path))
    assert got["engine"][0] == "vllm" and got["engine"][1].endswith("grpo_config.yaml:12")
    # Qwen/Qwen2.5-1.5B-Instruct: published in BF16 under its plain name; no quantization flag
    assert got["fp8"][0] is False and got["fp8"][1].endswith("grpo_config.yaml:1")
    assert got["kv_cache_fp8"][0] is False
    assert got["is_correction"][0] is True and "trl" in got["is_correction"][1]


def test_fp8_checkpoint_served_is_an_fp8_rollout_and_its_correction_decides_rl_0001(
        tmp_path: Path) -> None:
    fp8 = CONFIG.replace("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen3-8B-FP8")
    got = _rollout(_job(tmp_path, fp8))
    assert got["fp8"][0] is True
    assert "FP8D-RL-0001" not in _ids(_job(tmp_path, fp8))      # TRL's default IS correction
    off = fp8.replace("  vllm_server_timeout: 300",
                      "  vllm_server_timeout: 300\n  vllm_importance_sampling_correction: false")
    assert _rollout(_job(tmp_path, off))["is_correction"][0] is False
    assert "FP8D-RL-0001" in _ids(_job(tmp_path, off))


def _ids(paths: list[Path]) -> set[str]:
    return {f.rule_id for f in preflight.check([str(p) for p in paths]).findings}


def test_colocate_generates_from_base_model_without_a_server(tmp_path: Path) -> None:
    # docs/vllm_serving.qmd l.103-107: vllm_mode colocate, no server command
    colocate = CONFIG.replace("  use_vllm: true\n", "  use_vllm: true\n  vllm_mode: colocate\n"
                              "  vllm_enable_sleep_mode: true\n")
    got = _rollout(_job(tmp_path, colocate, script=None))
    assert got["engine"][0] == "vllm" and got["fp8"][0] is False
    assert got["kv_cache_fp8"][0] is False


def test_server_started_outside_the_job_is_unknown_with_the_reason(tmp_path: Path) -> None:
    only_train = "axolotl train grpo_config.yaml\n"
    got = _rollout(_job(tmp_path, script=only_train))
    assert got["engine"][0] == "vllm"
    assert isinstance(got["fp8"][0], Unknown) and "outside the job" in got["fp8"][0].reason
    assert "vllm_mode is not set" in got["fp8"][0].reason
    assert isinstance(got["kv_cache_fp8"][0], Unknown)
    server = CONFIG.replace("  use_vllm: true\n", "  use_vllm: true\n  vllm_mode: server\n")
    got = _rollout(_job(tmp_path, server, script=None))
    assert isinstance(got["fp8"][0], Unknown) and "vllm_mode: server" in got["fp8"][0].reason


def test_decoy_server_commands_start_no_server(tmp_path: Path) -> None:
    for decoy in ("# axolotl vllm-serve grpo_config.yaml\n",
                  'echo "run: axolotl vllm-serve grpo_config.yaml first"\n',
                  'MODE=local\nif [ "$MODE" = "two_gpus" ]; then\n'
                  "  axolotl vllm-serve grpo_config.yaml &\nfi\n",
                  'MODE=local\ncase "$MODE" in\n  two_gpus) axolotl vllm-serve grpo_config.yaml &'
                  "\n  ;;\nesac\n"):
        got = _rollout(_job(tmp_path, script=decoy + "axolotl train grpo_config.yaml\n"))
        assert isinstance(got["fp8"][0], Unknown), decoy


def test_a_server_in_a_branch_that_runs_counts(tmp_path: Path) -> None:
    script = 'MODE=two_gpus\nif [ "$MODE" = "two_gpus" ]; then\n' + \
        "  axolotl vllm-serve grpo_config.yaml &\nfi\naxolotl train grpo_config.yaml\n"
    assert _rollout(_job(tmp_path, script=script))["fp8"][0] is False
    (tmp_path / "serve.yaml").write_text(CONFIG)
    either = ('if [ "$X" = 1 ]; then\n  axolotl vllm-serve grpo_config.yaml &\nelse\n'
              "  axolotl vllm-serve serve.yaml &\nfi\naxolotl train grpo_config.yaml\n")
    assert isinstance(_rollout(_job(tmp_path, script=either))["fp8"][0], Unknown)


def test_server_of_another_or_unknown_config_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(CONFIG.replace("Qwen2.5-1.5B-Instruct",
                                                        "Qwen3-8B-FP8"))
    other = SCRIPT.replace("vllm-serve grpo_config.yaml", "vllm-serve serve.yaml")
    got = _rollout(_job(tmp_path, script=other))
    assert isinstance(got["fp8"][0], Unknown) and "another config" in got["fp8"][0].reason
    unknown = SCRIPT.replace("vllm-serve grpo_config.yaml", "vllm-serve $SERVE_CFG")
    got = _rollout(_job(tmp_path, script=unknown))
    assert isinstance(got["fp8"][0], Unknown) and "not known" in got["fp8"][0].reason


def test_offline_preference_training_and_hf_generation(tmp_path: Path) -> None:
    dpo = CONFIG.replace("rl: grpo", "rl: dpo")
    assert _rollout(_job(tmp_path, dpo, script=None)) == {}
    no_rl = CONFIG.replace("rl: grpo\n", "datasets: []\n")
    assert _rollout(_job(tmp_path, no_rl, script=None)) == {}
    hf = CONFIG.replace("use_vllm: true", "use_vllm: false")
    got = _rollout(_job(tmp_path, hf, script=None))
    assert got["engine"][0] == "hf" and got["fp8"][0] is False
    assert got["is_correction"][0] is False


def test_base_model_folder_in_the_job_is_judged_by_its_config_json(tmp_path: Path) -> None:
    model = tmp_path / "ckpt" / "policy"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"model_type": "qwen2", "quantization_config": '
                                       '{"quant_method": "fp8", "weight_block_size": [128, 128]}}')
    local = CONFIG.replace("Qwen/Qwen2.5-1.5B-Instruct", "./ckpt/policy")
    got = _rollout(_job(tmp_path, local))
    assert got["fp8"][0] is True and got["fp8"][1].endswith("config.json:1")
    shutil.rmtree(model)
    got = _rollout(_job(tmp_path, local))
    assert isinstance(got["fp8"][0], Unknown)


def test_vllm_fp8_keys_axolotl_drops_do_not_make_an_fp8_rollout(tmp_path: Path) -> None:
    # VllmConfig / TRLConfig have no quantization or kv_cache_dtype field at v0.18.0: pydantic
    # ignores them and validate_config keeps model_dump(): vLLM serves base_model as it is
    asked = CONFIG.replace("  dtype: auto\n", "  dtype: auto\n  quantization: fp8\n"
                                              "  kv_cache_dtype: fp8_e4m3\n")
    got = _rollout(_job(tmp_path, asked))
    assert got["fp8"][0] is False and got["kv_cache_fp8"][0] is False
    assert "vllm.quantization: fp8" in got["fp8"][1] and "is dropped" in got["fp8"][1]
    assert "grpo_config.yaml:8" in got["fp8"][1]
    assert "vllm.kv_cache_dtype: fp8_e4m3" in got["kv_cache_fp8"][1]
    trl = CONFIG.replace("  vllm_server_timeout: 300",
                         "  vllm_server_timeout: 300\n  vllm_kv_cache_dtype: fp8")
    assert "trl.vllm_kv_cache_dtype" in _rollout(_job(tmp_path, trl))["kv_cache_fp8"][1]


def test_dropped_keys_do_not_hide_what_reaches_vllm(tmp_path: Path) -> None:
    # an FP8 checkpoint still serves FP8; a non-FP8 value of the key says nothing; no vLLM: none
    fp8 = CONFIG.replace("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen3-8B-FP8").replace(
        "  dtype: auto\n", "  dtype: auto\n  quantization: fp8\n")
    got = _rollout(_job(tmp_path, fp8))
    assert got["fp8"][0] is True and got["fp8"][1].endswith("grpo_config.yaml:1")
    off = CONFIG.replace("  dtype: auto\n", "  dtype: auto\n  kv_cache_dtype: auto\n")
    assert "is dropped" not in _rollout(_job(tmp_path, off))["kv_cache_fp8"][1]
    hf = CONFIG.replace("  use_vllm: true", "  use_vllm: false").replace(
        "  dtype: auto\n", "  dtype: auto\n  quantization: fp8\n")
    got = _rollout(_job(tmp_path, hf))
    assert got["engine"][0] == "hf" and got["fp8"][0] is False
