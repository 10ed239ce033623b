# fp8-doctor holdout8 job file: NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py (verbatim below this line)
# Copyright (c) 2026, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ruff: noqa: F401
"""Compatibility aliases for legacy recipe names."""

from __future__ import annotations

from megatron.bridge.recipes.nemotronh.h100.nemotron_3_super import (
    NEMOTRON_3_SUPER_HF_MODEL_ID,
    _nemotron_3_super_pretrain_64gpu_h100_bf16_config,
)
from megatron.bridge.recipes.nemotronh.h100.nemotron_3_super import (
    nemotron_3_super_peft_1gpu_h100_bf16_config as nemotron_3_super_peft_config,
)
from megatron.bridge.recipes.nemotronh.h100.nemotron_3_super import (
    nemotron_3_super_sft_16gpu_h100_bf16_config as nemotron_3_super_sft_config,
)
from megatron.bridge.training.config import ConfigContainer


def nemotron_3_super_pretrain_config() -> ConfigContainer:
    """Return the convergence-oriented 64-H100 Nemotron 3 Super pretraining config."""
    return _nemotron_3_super_pretrain_64gpu_h100_bf16_config()


__all__ = [
    "nemotron_3_super_pretrain_config",
    "nemotron_3_super_sft_config",
    "nemotron_3_super_peft_config",
    "NEMOTRON_3_SUPER_HF_MODEL_ID",
]
