"""The families frameworks/ckptname.py reads as BF16 under their plain names (session 43:
holdout16's AReaL Moonlight-16B-A3B control read "FP8 rollout: Unknown" where Moonshot publishes
Moonlight only in BF16), and the makers that publish FP8 under the plain name, which stay
unknown: Xiaomi's MiMo-V2 line (MiMo-V2.5-DFlash carries F8_E4M3 weights), DeepSeek-V3 and
Kimi-K2 (Moonlight's own architecture is deepseek_v3: the architecture says nothing)."""

from __future__ import annotations

import pytest

from preflight.frameworks.ckptname import says_fp8


@pytest.mark.parametrize("path", [
    "moonshotai/Moonlight-16B-A3B", "moonshotai/Moonlight-16B-A3B-Instruct",
    "/workspace/models/Moonlight-16B-A3B-Istruct",      # holdout16's own spelling
])
def test_moonlight_is_bf16_by_name(path: str) -> None:
    assert says_fp8(path) is False


@pytest.mark.parametrize("path", [
    "/ckpt/Moonlight-16B-A3B-Instruct-FP8", "moonshotai/Moonlight-16B-A3B-fp8-block",
])
def test_a_moonlight_conversion_named_fp8_is_fp8(path: str) -> None:
    assert says_fp8(path) is True


@pytest.mark.parametrize("path", [
    "XiaomiMiMo/MiMo-V2-Flash", "/root/MiMo-7B-RL", "deepseek-ai/DeepSeek-V3",
    "moonshotai/Kimi-K2-Instruct", "/models/moonlighting-7b", "/models/Moonlight2-70B",
])
def test_families_published_fp8_or_unknown_stay_unknown(path: str) -> None:
    assert says_fp8(path) is None
