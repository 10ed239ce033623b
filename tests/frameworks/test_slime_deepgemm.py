"""slime's DeepGEMM forward on selected training linears (frameworks/slime_deepgemm.py, read at
THUDM/slime a74ae3a0): block-FP8 forward, BF16 backward, on the layers
``--megatron-deepgemm-forward-layers`` selects, installed only by a hook naming slime's
installer: FP8 training on part of the model (``intent.fp8_scope`` partial). And the trainer's
``DSA_KV_FP8_QAT`` (GLM-5 DSA attention): simulated FP8 KV, a config fact, never the rollout's
FP8 KV cache. Firing, quiet and hostile variants (a hook of the job's own, a value only the run
knows, flags in an echo or a comment)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

HOOK = ("--custom-megatron-before-train-step-hook-path slime.backends.megatron_utils.alignment."
        "deepgemm_forward.enable_deepgemm_all_forward_before_train_step")
LOGPROB = ("--custom-megatron-before-log-prob-hook-path slime.backends.megatron_utils.alignment."
           "deepgemm_moe_forward.enable_deepgemm_moe_forward")


def _job(tmp_path: Path, flags: str, before: str = "", env: str = '"NVTE_DEBUG": "0"',
         tp: int = 1) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    run = tmp_path / "run.sh"
    run.write_text(f"""#!/bin/bash
{before}
ray job submit --address="http://127.0.0.1:8265" \\
   --runtime-env-json='{{"env_vars": {{{env}}}}}' \\
   -- python3 train.py \\
   --actor-num-nodes 1 --actor-num-gpus-per-node 8 \\
   --hf-checkpoint /root/GLM-5-bf16 \\
   --tensor-model-parallel-size {tp} \\
   {flags} \\
   --rollout-num-gpus-per-engine 8
""")
    read = read_paths([str(run)])
    values, prov = derive(Facts(dict(read.facts), read.provenance))
    return dict(read.facts), values, prov


def test_hooked_layers_are_partial_blockwise_fp8(tmp_path: Path) -> None:
    facts, values, prov = _job(tmp_path, "--megatron-deepgemm-forward-layers 0 1 2 "
                               "--megatron-deepgemm-forward-modules self_attention.linear_proj "
                               f"mlp.linear_fc1 {HOOK}")
    assert facts["config.slime.megatron_deepgemm_forward_layers"] == [0, 1, 2]
    assert facts["config.slime.deepgemm_forward"] is True
    assert "config.megatron.megatron_deepgemm_forward_layers" not in facts   # slime's own flag
    assert values["intent.fp8"] is True
    assert values["intent.recipe"] == "blockwise"
    assert values["intent.format"] == "e4m3"
    assert isinstance(values["intent.backend"], Unknown)
    assert values["intent.fp8_scope"] == "partial"
    assert prov["intent.fp8_scope"].startswith(f"{tmp_path}/run.sh:9")
    assert "[0, 1, 2]" in prov["intent.fp8_scope"]


def test_moe_layers_through_the_log_prob_hook(tmp_path: Path) -> None:
    facts, values, _ = _job(tmp_path, f"--megatron-deepgemm-moe-forward-layers 3 {LOGPROB}")
    assert facts["config.slime.deepgemm_forward"] is True
    assert values["intent.fp8"] is True and values["intent.fp8_scope"] == "partial"


def test_flags_without_an_installer_do_nothing(tmp_path: Path) -> None:
    facts, values, _ = _job(tmp_path, "--megatron-deepgemm-forward-layers 0 1")
    assert facts["config.slime.deepgemm_forward"] is False
    assert values["intent.fp8"] is False
    assert "intent.fp8_scope" not in values


def test_another_slime_hook_is_no_installer(tmp_path: Path) -> None:
    facts, values, _ = _job(tmp_path, "--megatron-deepgemm-forward-layers 0 "
                            "--custom-megatron-before-train-step-hook-path slime.backends."
                            "megatron_utils.alignment.deepgemm_forward.enable_sglang_final_rmsnorm")
    assert facts["config.slime.deepgemm_forward"] is False
    assert values["intent.fp8"] is False


def test_no_flag_no_fact(tmp_path: Path) -> None:
    facts, values, _ = _job(tmp_path, HOOK)
    assert "config.slime.deepgemm_forward" not in facts
    assert values["intent.fp8"] is False


def test_megatron_fp8_keeps_its_own_facts(tmp_path: Path) -> None:
    _, values, _ = _job(tmp_path, "--fp8-format e4m3 --fp8-recipe blockwise "
                        f"--megatron-deepgemm-forward-layers 0 {HOOK}")
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert "intent.fp8_scope" not in values


@pytest.mark.parametrize("hook", [
    "--custom-megatron-before-train-step-hook-path my_hooks.install",      # the job's own
    "--custom-megatron-before-train-step-hook-path \"$HOOK_PATH\"",         # only the run knows
])
def test_a_hook_not_known_is_unknown(tmp_path: Path, hook: str) -> None:
    facts, values, _ = _job(tmp_path, f"--megatron-deepgemm-forward-layers 0 {hook}",
                            before='HOOK_PATH=$(cat hook.txt)')
    assert isinstance(facts["config.slime.deepgemm_forward"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_flags_in_an_echo_or_a_comment_are_not_read(tmp_path: Path) -> None:
    before = (f'echo "--megatron-deepgemm-forward-layers 0 {HOOK}"\n'
              f"# --megatron-deepgemm-forward-layers 0 {HOOK}")
    facts, values, _ = _job(tmp_path, "--num-layers 4", before=before)
    assert "config.slime.deepgemm_forward" not in facts
    assert values["intent.fp8"] is False


@pytest.mark.parametrize(("value", "expected"), [('"1"', "fp8"), ('"true"', "fp8"),
                                                 ('"0"', "none")])
def test_dsa_kv_fp8_qat_is_simulated_fp8_kv(tmp_path: Path, value: str, expected: str) -> None:
    facts, values, prov = _job(tmp_path, "--num-layers 4",
                               env=f'"DSA_KV_FP8_QAT": {value}, "NVTE_DEBUG": "0"')
    assert facts["config.slime.train_kv_fake_quant"] == expected
    # fake quantization in BF16 compute: the rollout's KV cache is SGLang's own (auto)
    assert values["intent.rollout.kv_cache_fp8"] is False
    assert values["intent.fp8"] is False


def test_dsa_kv_fp8_qat_only_in_an_echo(tmp_path: Path) -> None:
    facts, _, _ = _job(tmp_path, "--num-layers 4", before='echo "DSA_KV_FP8_QAT=1"')
    assert "config.slime.train_kv_fake_quant" not in facts


@pytest.mark.parametrize("layers", ["$LAYERS", '"$LAYERS"'])
def test_layers_only_the_run_knows(tmp_path: Path, layers: str) -> None:
    # an empty $LAYERS is refused by argparse (nargs='+'); any other selects layers: partial FP8
    facts, values, prov = _job(tmp_path, f"--megatron-deepgemm-forward-layers {layers} {HOOK}",
                               before="LAYERS=$(cat layers.txt)")
    assert facts["config.slime.deepgemm_forward"] is True
    assert values["intent.fp8"] is True and values["intent.fp8_scope"] == "partial"
    assert "run time" in prov["intent.fp8_scope"]
