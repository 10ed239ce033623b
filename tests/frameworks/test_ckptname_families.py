"""The families frameworks/ckptname.py reads as BF16 under their plain names (session 43:
holdout16's AReaL Moonlight-16B-A3B control read "FP8 rollout: Unknown" where Moonshot publishes
Moonlight only in BF16), and the makers that publish FP8 under the plain name, which stay
unknown: Xiaomi's MiMo-V2 line (MiMo-V2.5-DFlash carries F8_E4M3 weights), DeepSeek-V3 and
Kimi-K2 (Moonlight's own architecture is deepseek_v3: the architecture says nothing). Session 44:
such a maker's generations published in BF16 are BF16 by name (holdout14's slime MiMo-7B-RL
control read "FP8 rollout: Unknown"): MiMo-7B / MiMo-VL-7B, DeepSeek's R1 distills."""

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
    "XiaomiMiMo/MiMo-V2-Flash", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1",
    "/m/MiMo-7B-RL/../MiMo-V2-Flash", "/m/MiMo-70B", "/m/MiMo-7Bx", "/m/MiMo",
    "moonshotai/Kimi-K2-Instruct", "/models/moonlighting-7b", "/models/Moonlight2-70B",
])
def test_families_published_fp8_or_unknown_stay_unknown(path: str) -> None:
    assert says_fp8(path) is None


@pytest.mark.parametrize("path", [
    "/root/MiMo-7B-RL", "/root/MiMo-7B-RL-mtp_slime/", "XiaomiMiMo/MiMo-7B-Base",
    "XiaomiMiMo/MiMo-VL-7B-RL", "/m/mimo-7b-rl-0530", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "/ckpt/DeepSeek-R1-Distill-Llama-8B/",
])
def test_a_bf16_generation_of_an_fp8_maker_is_bf16(path: str) -> None:
    assert says_fp8(path) is False


@pytest.mark.parametrize("path", [
    "/root/MiMo-7B-RL-FP8", "/q/fp8/MiMo-7B-RL", "RedHatAI/DeepSeek-R1-Distill-Qwen-7B-FP8-dynamic",
])
def test_its_conversions_named_fp8_are_fp8(path: str) -> None:
    assert says_fp8(path) is True
