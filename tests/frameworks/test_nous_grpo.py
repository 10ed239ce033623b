"""The Nous torchtitan GRPO fork's rollout (frameworks/nous_grpo.py; holdout23's Qwen3-30B-A3B
ScienceQA control): servers named by ``[grpo] sglang_urls`` / ``sglang_slurm_num_nodes`` and
launched apart are read at the engines' defaults over the trainer's weights; a TOML without
them states no rollout; an FP8-named checkpoint or one known only at run time stays Unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

BASE = ('[model]\nname = "qwen3"\nflavor = "30B-A3B"\nhf_assets_path = "{ckpt}"\n'
        '# converters = "float8"\n\n[training]\nlocal_batch_size = 1\nseq_len = 32768\n\n'
        '[parallelism]\ndata_parallel_shard_degree = -1\n{grpo}\n'
        '[quantize.linear.float8]\nenable_fsdp_float8_all_gather = false\n')
SERVERS = ('\n[grpo]\nsglang_tp = 1\nsglang_urls = ["localhost:9004", "localhost:9005"]\n'
           'sglang_slurm_num_nodes = 1\nkl_beta = 0.0\n')


def _intent(tmp_path: Path, grpo: str, ckpt: str = "/mnt/data/qwen3_30b_a3b_ckpt191") -> tuple[
        dict[str, Any], dict[str, str], Path]:
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    toml = job / "grpo.toml"
    toml.write_text(BASE.format(ckpt=ckpt, grpo=grpo))
    read = read_paths([str(toml)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return ({k[7:]: v for k, v in values.items()}, {k[7:]: str(v) for k, v in prov.items()},
            toml)


def test_servers_launched_apart_are_read_at_engine_defaults(tmp_path: Path) -> None:
    intent, prov, toml = _intent(tmp_path, SERVERS)
    assert intent["fp8"] is False
    # over BF16 weights the servers' own launch (not given) decides: nothing is stated of their
    # FP8 or KV cache (a confident "no" was wrong where that launch asks for FP8: fwrl10)
    assert "rollout.fp8" not in intent and "rollout.kv_cache_fp8" not in intent
    assert isinstance(intent["rollout.engine"], Unknown)      # SGLang or vLLM: not named
    assert prov["rollout.engine"].startswith(f"{toml}:")
    assert "launched apart" in prov["rollout.engine"]


@pytest.mark.parametrize("grpo", [
    "\n[grpo]\nsglang_slurm_num_nodes = 2\n",
    '\n[grpo]\nsglang_urls = ["node1:9000"]\n',
])
def test_either_server_setting_names_the_servers(tmp_path: Path, grpo: str) -> None:
    intent, _, _ = _intent(tmp_path, grpo)
    assert "rollout.engine" in intent and "rollout.fp8" not in intent


@pytest.mark.parametrize("grpo", ["", "\n[grpo]\nkl_beta = 0.0\n"])
def test_no_servers_no_rollout(tmp_path: Path, grpo: str) -> None:
    intent, _, _ = _intent(tmp_path, grpo)
    assert intent["fp8"] is False
    assert "rollout.fp8" not in intent and "rollout.engine" not in intent


def test_an_fp8_named_checkpoint_leaves_the_rollout_unknown(tmp_path: Path) -> None:
    # hostile: the updater casts BF16 weights to each parameter's dtype with no FP8 scales
    intent, prov, toml = _intent(tmp_path, SERVERS, ckpt="/mnt/Qwen3-30B-A3B-FP8")
    assert isinstance(intent["rollout.fp8"], Unknown)
    assert prov["rollout.fp8"] == f"{toml}:4"
