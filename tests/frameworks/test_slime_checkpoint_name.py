"""slime's rollout precision from the ``--hf-checkpoint`` SGLang serves when its folder lies
outside the job (its config.json is not read): holdout14's MiMo-7B-RL eagle script, whose
checkpoint is a BF16 generation of a maker with FP8 lines and whose FP8 checkpoint line is a
comment, read "Unknown" (frameworks/ckptname.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

SCRIPT = """\
#!/bin/bash
set -ex
 CKPT_ARGS=(
   {first}
   {second}
   --ref-load /root/MiMo-7B-RL_torch_dist
)
ray job submit --address="http://127.0.0.1:8265" -- python3 train.py \\
   --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate \\
   ${{CKPT_ARGS[@]}} --rollout-num-gpus-per-engine 1
"""


def _rollout(tmp_path: Path, first: str, second: str = "") -> Any:
    run = tmp_path / "run.sh"
    run.write_text(SCRIPT.format(first=first, second=second))
    read = read_paths([str(run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values.get("intent.rollout.fp8")


def test_a_bf16_generation_with_the_fp8_line_commented_is_bf16(tmp_path: Path) -> None:
    got = _rollout(tmp_path, "--hf-checkpoint /root/MiMo-7B-RL",
                   "#--hf-checkpoint /root/Qwen3-4B-FP8")
    assert got is False


def test_the_fp8_line_uncommented_is_fp8(tmp_path: Path) -> None:
    got = _rollout(tmp_path, "#--hf-checkpoint /root/MiMo-7B-RL",
                   "--hf-checkpoint /root/Qwen3-4B-FP8")
    assert got is True


@pytest.mark.parametrize("ckpt", ["/root/MiMo-V2-Flash", "/root/MiMo", "/root/mymodel"])
def test_a_name_that_says_nothing_stays_unknown(tmp_path: Path, ckpt: str) -> None:
    assert isinstance(_rollout(tmp_path, f"--hf-checkpoint {ckpt}"), Unknown)


def _sglang(tmp_path: Path, *flags: str) -> dict[str, Any]:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\npython3 train.py --actor-num-nodes 1 --actor-num-gpus-per-node 8"
                   " --hf-checkpoint /root/Qwen3-8B --rollout-num-gpus-per-engine 1 "
                   + " ".join(flags) + "\n")
    read = read_paths([str(run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return {k.removeprefix("intent."): v for k, v in values.items()}


def test_sglang_flags_given_at_run_time_stay_unknown(tmp_path: Path) -> None:
    """Hostile: ``$VAR`` on the SGLang flags read as "not given" (the checkpoint's BF16, the
    engine's auto KV cache): a confident "no" for what the run time decides."""
    got = _sglang(tmp_path, "--sglang-quantization $Q", "--sglang-kv-cache-dtype $KV")
    assert isinstance(got["rollout.fp8"], Unknown)
    assert isinstance(got["rollout.kv_cache_fp8"], Unknown)


@pytest.mark.parametrize("flags, fp8, kv", [
    ((), False, False),
    (("--sglang-quantization fp8", "--sglang-kv-cache-dtype fp8_e4m3"), True, True),
    (("--sglang-kv-cache-dtype auto",), False, False),
])
def test_sglang_flags_given(tmp_path: Path, flags: tuple[str, ...], fp8: bool, kv: bool) -> None:
    got = _sglang(tmp_path, *flags)
    assert got["rollout.fp8"] is fp8 and got["rollout.kv_cache_fp8"] is kv
