"""AReaL read from its public experiment YAMLs (fixtures/configs/areal, README cites the
repository and commits) and from launch lines: the engine its backend string names, Megatron
(TE) or Archon (torchao blockwise) FP8, the SGLang rollout of an FP8 checkpoint, the decoupled
loss as IS correction, Megatron's own settings handed to the Megatron rules, and hostile input
bounded."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND, detect
from preflight.frameworks.areal_backend import parse_component, split_allocation
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "areal"
MATH = FIX
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.10.0",
        "pkg.megatron-core": "0.15.0", "pkg.torch": "2.9.1+cu129", "cuda.torch_build": "12.9"}


def _read(*paths: Path | str) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts


def _fired(paths: list[Path], assume: dict[str, str]) -> set[str]:
    report = preflight.check([str(p) for p in paths], smoke=False, assume=assume)
    return {f.rule_id for f in report.findings}


def _examples(tmp_path: Path) -> None:
    """The fixtures where AReaL's checkout holds them (examples/math/)."""
    (tmp_path / "examples" / "math").mkdir(parents=True)
    for name in ("gsm8k_grpo_megatron_fp8.yaml", "gsm8k_grpo.yaml", "gsm8k_sft_archon_fp8.yaml"):
        shutil.copy(FIX / name, tmp_path / "examples" / "math" / name)


def _job(tmp_path: Path, yaml_text: str | None = None, name: str = "exp.yaml") -> Path:
    out = tmp_path / name
    out.write_text(yaml_text if yaml_text is not None else
                   (MATH / "gsm8k_grpo_megatron_fp8.yaml").read_text())
    return out


def test_megatron_blockwise_fp8_with_fp8_checkpoint_rollout() -> None:
    got, facts = _read(MATH / "gsm8k_grpo_megatron_fp8.yaml")
    assert got["fp8"][0] is True and got["fp8"][1].endswith("gsm8k_grpo_megatron_fp8.yaml:80")
    assert (got["backend"][0], got["format"][0], got["recipe"][0]) == ("te", "hybrid",
                                                                        "blockwise")
    assert got["fp8_params"][0] is True and got["distributed"][0] == "megatron"
    assert got["stack"][0] == ["areal", "megatron"] and got["num_gpus"][0] == 8
    assert facts["config.kinds"] == ["areal"]     # Megatron's settings, not a Megatron job
    assert (got["tp"][0], got["cp"][0], got["sequence_parallel"][0]) == (1, 1, False)
    assert got["rollout.engine"][0] == "sglang" and got["rollout.fp8"][0] is True
    assert got["rollout.kv_cache_fp8"][0] is False
    assert got["rollout.is_correction"][0] is True      # decoupled loss + rejection_sampling
    assert got["packing"][0] is True and got["pad_multiple"][0] == 256
    # Megatron's own settings, under Megatron-LM's argument names, for the Megatron rules
    assert facts["config.megatron.fp8_param_gather"] is True
    assert facts["config.megatron.fp8_format"] == "hybrid"
    assert facts["config.megatron.fp8_recipe"] == "blockwise"
    assert facts["config.megatron.use_distributed_optimizer"] is True


def test_archon_blockwise_sft() -> None:
    got, facts = _read(MATH / "gsm8k_sft_archon_fp8.yaml")
    assert got["fp8"][0] is True and got["fp8"][1].endswith("gsm8k_sft_archon_fp8.yaml:41")
    assert (got["backend"][0], got["recipe"][0]) == ("torchao", "blockwise")
    assert got["distributed"][0] == "fsdp2" and got["activation_checkpointing"][0] is True
    assert got["stack"][0] == ["areal"]
    assert "rollout.engine" not in got or isinstance(got["rollout.engine"][0], Unknown)
    assert not any(n.startswith("config.megatron.") for n in facts)


def test_fsdp_bf16_grpo_is_not_fp8() -> None:
    got, facts = _read(MATH / "gsm8k_grpo.yaml")
    assert got["fp8"][0] is False and got["precision"][0] == "bf16"
    assert got["distributed"][0] == "fsdp2"
    # Qwen/Qwen2.5-1.5B-Instruct: a family published in BF16 under its plain name
    assert got["rollout.engine"][0] == "sglang" and got["rollout.fp8"][0] is False
    assert not any(n.startswith("config.megatron.") for n in facts)


def test_legacy_allocation_mode_of_v1_0_0() -> None:
    got, facts = _read(FIX / "gsm8k_grpo_megatron_fp8_v1_0_0.yaml")
    assert got["fp8"][0] is True and got["recipe"][0] == "blockwise"
    assert got["rollout.engine"][0] == "sglang" and got["rollout.fp8"][0] is True
    # behav_imp_weight_cap: the decoupled loss of v1.0.0 always weights by pi_prox/pi_behave
    assert got["rollout.is_correction"][0] is True
    assert facts["config.megatron.fp8_param_gather"] is True


def test_detection_needs_areal_keys() -> None:
    data = parse_yaml((MATH / "gsm8k_grpo_megatron_fp8.yaml").read_text()).data
    assert detect("yaml", data)[0] == "areal"
    # the generic keys alone are not AReaL's
    assert BY_KIND["areal"].score({"seed": 1, "experiment_name": "x", "trial_name": "t"}) == 0
    assert BY_KIND["areal"].score({"seed": 1, "actor": {"backend": "fsdp:d1"}}) == 0
    assert BY_KIND["areal"].score({"experiment_name": "x", "trial_name": "t",
                                   "actor": {"backend": "megatron:d8"}}) > 0


@pytest.mark.parametrize(("text", "backend", "sizes"), [
    ("megatron:d4p1t1", "megatron", {"d": 4, "p": 1, "t": 1}),
    ("megatron[actor]:d2t4c2", "megatron", {"d": 2, "t": 4, "c": 2}),
    ("sglang:d4", "sglang", {"d": 4}),
    ("d4p2t1", "megatron", {"d": 4, "p": 2, "t": 1}),    # v1.0.x auto-selects Megatron (p>1)
    ("d8", "fsdp", {"d": 8}),
    ("megatron:(attn:d1p12t4|ffn:d1p12e4)", "megatron", {}),
])
def test_engine_strings(text: str, backend: str, sizes: dict[str, int]) -> None:
    eng = parse_component(text, "x:1")
    assert eng.backend == backend and dict(eng.sizes) == sizes


def test_unknown_backend_and_split() -> None:
    assert isinstance(parse_component("deepspeed:d8", "x:1").backend, Unknown)
    train, infer = split_allocation("sglang:d4p1t1+megatron:d4p1t1", "x:1")
    assert train is not None and infer is not None
    assert (train.backend, infer.backend) == ("megatron", "sglang")
    train, infer = split_allocation("vllm.d2+d2", "x:1")    # the old dotted form
    assert train is not None and infer is not None
    assert (train.backend, infer.backend) == ("fsdp", "vllm")


def test_fp8_config_on_fsdp_is_not_fp8(tmp_path: Path) -> None:
    text = (MATH / "gsm8k_grpo_megatron_fp8.yaml").read_text().replace(
        'backend: "megatron:d4p1t1"', 'backend: "fsdp:d4p1t1"')
    got, facts = _read(_job(tmp_path, text))
    assert got["fp8"][0] is False and "read only by the megatron engine" in got["fp8"][1]
    assert "megatron" not in got["stack"][0]
    assert "config.megatron.fp8_param_gather" not in facts


def test_fp8_config_defaults_and_null(tmp_path: Path) -> None:
    base = (MATH / "gsm8k_grpo.yaml").read_text().replace('"fsdp:d4p1t1"', '"megatron:d4t2"')
    on = base.replace("  use_decoupled_loss: true", "  use_decoupled_loss: true\n"
                                                    "  megatron:\n    fp8_config: {mode: e4m3}")
    got, facts = _read(_job(tmp_path, on))
    assert got["fp8"][0] is True and got["recipe"][0] == "delayed"     # FP8EngineConfig default
    assert got["sequence_parallel"][0] is True and got["tp"][0] == 2
    assert facts["config.megatron.fp8_recipe"] == "delayed"
    assert facts["config.megatron.tensor_model_parallel_size"] == 2
    # a BF16 checkpoint (Qwen2.5-1.5B-Instruct): the rollout serves BF16 (and AREAL-0001 says
    # the engine refuses to start)
    assert got["rollout.fp8"][0] is False and facts["config.areal.checkpoint_fp8"] is False
    # a local checkpoint: Megatron FP8 training starts only from an FP8 one, which the rollout
    # serves
    got, facts = _read(_job(tmp_path, on.replace("path: Qwen/Qwen2.5-1.5B-Instruct",
                                                  "path: /ckpt/policy"), "local.yaml"))
    assert got["rollout.fp8"][0] is True
    assert isinstance(facts["config.areal.checkpoint_fp8"], Unknown)
    off = base.replace("  use_decoupled_loss: true", "  use_decoupled_loss: true\n"
                                                     "  megatron:\n    fp8_config: null")
    got, _ = _read(_job(tmp_path, off, "off.yaml"))
    assert got["fp8"][0] is False and got["rollout.fp8"][0] is False


def test_launch_line_overrides_win(tmp_path: Path) -> None:
    _examples(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\npython3 -m areal.infra.launcher.local examples/math/gsm8k_rl.py \\\n"
        "  --config examples/math/gsm8k_grpo_megatron_fp8.yaml \\\n"
        "  actor.megatron.fp8_config.recipe=mxfp8 +sglang.kv_cache_dtype=fp8_e4m3\n")
    got, facts = _read(script)
    assert got["fp8"][0] is True and got["recipe"] == ("mxfp8", f"{script}:4")
    assert facts["config.megatron.fp8_recipe"] == "mxfp8"
    assert got["rollout.kv_cache_fp8"][0] is True


def test_script_launch_line_and_engine_override(tmp_path: Path) -> None:
    _examples(tmp_path)
    (tmp_path / "examples" / "math" / "gsm8k_rl.py").write_text(
        "from areal.api.cli_args import GRPOConfig, load_expr_config\n")
    script = tmp_path / "run.sh"
    script.write_text("python3 examples/math/gsm8k_rl.py --config "
                      "examples/math/gsm8k_grpo_megatron_fp8.yaml actor.backend=fsdp:d8 "
                      "scheduler.type=local\n")
    got, facts = _read(script)
    assert got["fp8"][0] is False and got["distributed"][0] == "fsdp2"
    assert facts.get("config.megatron.fp8_param_gather") is not True


def test_config_not_in_job_is_unknown(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("python3 -m areal.infra.launcher.ray examples/math/gsm8k_rl.py "
                      "--config examples/math/missing.yaml actor.backend=megatron:d8\n")
    got, _ = _read(script)
    assert isinstance(got["fp8"][0], Unknown)


def test_hostile_values_are_bounded(tmp_path: Path) -> None:
    text = ("experiment_name: x\ntrial_name: t\ncluster: {fileroot: /tmp}\n"
            f"allocation_mode: \"{'sglang:d1+' * 20000}megatron:d1\"\n"
            f"actor: {{backend: \"megatron:d8\", path: \"{'A' * 100000}\", "
            "megatron: {fp8_config: {mode: [1, 2], recipe: {a: b}}}}\n"
            f"rollout: {{backend: \"{'(' * 5000}\"}}\n")
    got, _ = _read(_job(tmp_path, text))
    assert got["fp8"][0] is True and isinstance(got["format"][0], Unknown)
    assert isinstance(got["recipe"][0], Unknown)
    assert isinstance(got["rollout.engine"][0], Unknown)
    assert isinstance(got["rollout.fp8"][0], Unknown)


def test_runtime_value_on_the_launch_line_is_unknown(tmp_path: Path) -> None:
    _examples(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text("python3 -m areal.launcher.local x.py --config "
                      "examples/math/gsm8k_grpo.yaml actor.backend=$BACKEND\n")
    got, _ = _read(script)
    assert isinstance(got["distributed"][0], Unknown)
    assert "$BACKEND" in got["distributed"][0].reason and got["distributed"][1] == f"{script}:1"
    assert got["fp8"][0] is False          # no engine of AReaL's has FP8 on by default


def test_rules_judge_the_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    meg = tmp_path / "examples" / "math" / "gsm8k_grpo_megatron_fp8.yaml"
    fired = _fired([meg], H100)
    assert not fired & {"FP8D-HW-0001", "FP8D-HW-0007", "FP8D-MEG-0001", "FP8D-MEG-0014",
                        "FP8D-RL-0001", "FP8D-TE-0051"}
    # the same job on an A100: blockwise FP8 needs Hopper
    assert {"FP8D-HW-0001", "FP8D-HW-0007"} <= _fired([meg], {**H100, "gpu": "A100"})
    # fp8_param_gather without the distributed optimizer: Megatron-LM's validate_args refuses
    # it, which AReaL's Megatron engine never runs (config.megatron.validated_args: false)
    off = tmp_path / "examples" / "math" / "no_distopt.yaml"
    off.write_text(meg.read_text().replace(
        "      fp8_param_gather: true", "      fp8_param_gather: true\n"
                                        "      use_distributed_optimizer: false"))
    assert "FP8D-MEG-0001" not in _fired([off], H100)
    # FP8 rollout with the decoupled loss off: no IS correction
    plain = tmp_path / "examples" / "math" / "coupled.yaml"
    plain.write_text(meg.read_text().replace("use_decoupled_loss: true",
                                             "use_decoupled_loss: false"))
    assert "FP8D-RL-0001" in _fired([plain], H100)


def test_record() -> None:
    rec = BY_KIND["areal"]
    assert rec.distributions == ("areal",) and rec.launch is not None
    assert rec.launch.command is not None and rec.launch.command.search(
        "python3 -m areal.infra.launcher.slurm x.py --config c.yaml")


# readfix9's cases (df52016), kept: the BF16 examples, OmegaConf's 'true', an unknown engine

@pytest.mark.parametrize("name", ["gsm8k_grpo_megatron.yaml", "gsm8k_grpo.yaml"])
def test_the_bf16_examples_ask_for_no_fp8(name: str) -> None:
    got, _ = _read(FIX / name)
    assert got["fp8"][0] is False


def test_fp8_config_defaults_quoted_true_and_an_unknown_engine(tmp_path: Path) -> None:
    text = (FIX / "gsm8k_grpo_megatron_fp8.yaml").read_text()
    got, facts = _read(_job(tmp_path, text.replace(
        "      mode: hybrid\n      recipe: blockwise\n      param: true\n", "      param: 'true'\n"
    ).replace("      fp8_param_gather: true", "      fp8_param_gather: 'off'")))
    # FP8EngineConfig defaults (areal/api/cli_args.py l.738-754); OmegaConf converts the strings
    assert (got["format"][0], got["recipe"][0], got["fp8_params"][0]) == ("e4m3", "delayed", True)
    assert facts["config.megatron.fp8_param_gather"] is False
    got, _ = _read(_job(tmp_path, text.replace('backend: "megatron:d4p1t1"',
                                               'backend: "newengine:d4"'), "new.yaml"))
    assert isinstance(got["fp8"][0], Unknown)


def test_fp8_training_from_a_bf16_checkpoint_is_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """FP8D-AREAL-0001 (megatron_engine.py:1188-1208 @ 4aef98d8) on the FP8 example itself."""
    _examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    meg = tmp_path / "examples" / "math" / "gsm8k_grpo_megatron_fp8.yaml"
    assert "FP8D-AREAL-0001" not in _fired([meg], H100)            # Qwen/Qwen3-1.7B-FP8
    bf16 = tmp_path / "examples" / "math" / "bf16_ckpt.yaml"
    bf16.write_text(meg.read_text().replace("path: Qwen/Qwen3-1.7B-FP8", "path: Qwen/Qwen3-1.7B"))
    report = preflight.check([str(bf16)], smoke=False, assume=H100)
    hit = [f for f in report.findings if f.rule_id == "FP8D-AREAL-0001"]
    assert hit and hit[0].severity == "error"
    # a local checkpoint: its config.json is not read, so the rule cannot tell
    local = tmp_path / "examples" / "math" / "local_ckpt.yaml"
    local.write_text(meg.read_text().replace("path: Qwen/Qwen3-1.7B-FP8", "path: /models/ckpt"))
    report = preflight.check([str(local)], smoke=False, assume=H100)
    assert "FP8D-AREAL-0001" not in {f.rule_id for f in report.findings}
    assert "FP8D-AREAL-0001" in {u.rule_id for u in report.undetermined}
    # Archon converts BF16 master weights itself: quiet
    assert "FP8D-AREAL-0001" not in _fired([tmp_path / "examples" / "math" /
                                            "gsm8k_sft_archon_fp8.yaml"], H100)


def test_areal_own_launch_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/vlm_npu/qwen3_vl_2b_geometry3k_grpo.sh @ 4aef98d8, run from the checkout's top:
    `python examples/vlm_npu/geometry3k_grpo.py --config <yaml> scheduler.type=local`."""
    top = FIX / "vlm_npu"
    monkeypatch.chdir(top)
    got, facts = _read(top / "examples" / "vlm_npu" / "qwen3_vl_2b_geometry3k_grpo.sh")
    assert facts["config.areal.scheduler.type"] == "local"
    assert facts["config.areal.entry"] == "examples/vlm_npu/geometry3k_grpo.py"
    assert got["fp8"][0] is False and got["distributed"][0] == "fsdp2"
    assert got["rollout.engine"][0] == "vllm" and got["rollout.is_correction"][0] is True
    # Qwen/Qwen3-VL-2B-Instruct: published in BF16 under its plain name
    assert got["rollout.fp8"][0] is False


def test_a_script_of_the_job_without_areal_keeps_its_options(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import argparse\n")
    (tmp_path / "cfg.yaml").write_text("seed: 1\n")
    script = tmp_path / "run.sh"
    script.write_text("python train.py --config cfg.yaml scheduler.type=local\n")
    read = read_paths([str(script)], None)
    assert not any(n.startswith("config.areal.") for n in read.facts)


def test_a_kv_cache_dtype_given_at_run_time_stays_unknown(tmp_path: Path) -> None:
    """Hostile: ``+sglang.kv_cache_dtype=$KV`` read as SGLang's auto, a confident "no"."""
    _examples(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\npython3 -m areal.infra.launcher.local examples/math/gsm8k_rl.py \\\n"
        "  --config examples/math/gsm8k_grpo_megatron_fp8.yaml +sglang.kv_cache_dtype=$KV\n")
    got, _ = _read(script)
    assert isinstance(got["rollout.kv_cache_fp8"][0], Unknown)
