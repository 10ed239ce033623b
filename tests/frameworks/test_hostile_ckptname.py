"""What a checkpoint's name says (frameworks/ckptname.py) against hostile names (issue 21,
redteam5). The readers of slime, AReaL and OpenRLHF judge a rollout's and AReaL's training
checkpoint by its name: a folder named for FP8 above a BF16 checkpoint made it FP8 (AReaL's
FP8D-AREAL-0001, which fires on a BF16 checkpoint under Megatron FP8 training, stayed quiet), and a
path longer than any the system opens was judged by its cut head (a false error)."""

from __future__ import annotations

import pytest

from preflight.facts import Unknown
from preflight.frameworks.areal import checkpoint_fp8
from preflight.frameworks.ckptname import NAME_MAX, says_fp8


@pytest.mark.parametrize("path, said", [
    ("/data/fp8-runs/Qwen3-8B-bf16", False),          # the checkpoint's own folder speaks first
    ("/data/bf16/Qwen3-8B-FP8", True),
    ("/ckpt/Qwen3-8B-FP8/global_step_100", True),     # then the folders above it
    ("/ckpt/run-bf16/global_step_100/", False),
    ("Qwen/Qwen3-30B-A3B", False), ("Qwen/Qwen3-30B-A3B-FP8", True),
    ("/models/my-model", None), ("", None), ("fp8", True), ("FP8/", True),
    ("/x/fp8x/model", None),
    # MXFP8 is an FP8 format (E4M3 elements, E8M0 block scales): miles PR 512 rolls out from
    # Qwen3-30B-A3B-MXFP8 (holdout11); a word that only contains it says nothing
    ("/x/mxfp8-model", True), ("/ckpt/Qwen3-30B-A3B-MXFP8/", True), ("/x/xmxfp8/m", None),
    ("/x/Qwen3-8B-NVFP4", False),   # NVFP4 is 4-bit: not an FP8 checkpoint
])
def test_names(path: str, said: bool | None) -> None:
    assert says_fp8(path) is said


@pytest.mark.parametrize("tail", ["/Qwen3-8B-FP8", "/Qwen3-8B", "/m-bf16"])
def test_a_path_past_the_limit_says_nothing(tail: str) -> None:
    path = "/" + "a" * (NAME_MAX - len(tail) + 5) + tail
    assert len(path) > NAME_MAX
    assert says_fp8(path) is None
    assert isinstance(checkpoint_fp8(path), Unknown)
