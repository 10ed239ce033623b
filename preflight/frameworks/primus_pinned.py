"""Primus's TorchTitan and Megatron-Bridge presets at AMD-AGI/Primus v26.5.1 (commit 9a86ba8c):
only the settings this tool reads, each with its line in the file, for presets a job names but
does not hold (:mod:`.primus_presets` reads a preset the job holds instead).

TorchTitan presets nest their settings by section; each is keyed here by its dotted path
(``quantize.linear.float8.recipe_name``), as Primus deep-merges them
(primus/core/config/merge_utils.py ``deep_merge``). Read from
``primus/configs/{modules,models}/{torchtitan,megatron_bridge}/*.yaml`` at the commit: the module
presets' precision, parallel, compile, checkpointing, ``quantize.*`` and ``primus_turbo.*``
settings; each TorchTitan model preset's ``model.name`` / ``flavor`` / ``converters`` (the
``-fp8`` presets add ``quantize.linear.float8``); each Megatron-Bridge model preset's ``recipe``
and ``flavor`` (the recipe function Primus calls, backends/megatron_bridge/config_utils.py
``load_recipe_config``).
"""

from __future__ import annotations

from typing import Any

Table = dict[str, tuple[tuple[str, ...], dict[str, tuple[Any, int]]]]

PINNED: Table = {
    "modules/torchtitan/pre_trainer.yaml": (('../module_base.yaml', 'quantize.yaml'), {
        "training.local_batch_size": (8, 46), "training.mixed_precision_param": ('bfloat16', 48),
        "training.seq_len": (2048, 51), "parallelism.context_parallel_degree": (1, 56),
        "parallelism.data_parallel_replicate_degree": (1, 58),
        "parallelism.data_parallel_shard_degree": (-1, 59),
        "parallelism.expert_parallel_degree": (1, 63),
        "parallelism.pipeline_parallel_degree": (1, 67),
        "parallelism.tensor_parallel_degree": (1, 75), "activation_checkpoint.mode": ('none', 95),
        "compile.enable": (True, 102), "compile.components": (['model', 'loss'], 103),
        "primus_turbo.enable_primus_turbo": (True, 155),
        "primus_turbo.enable_attention_float8": (False, 156),
        "primus_turbo.use_turbo_attention": (True, 157),
        "primus_turbo.use_classic_attention": (False, 158),
        "primus_turbo.use_turbo_async_tp": (True, 159),
        "primus_turbo.use_turbo_mx_linear": (True, 160),
        "primus_turbo.use_turbo_float8_linear": (True, 161),
        "primus_turbo.use_turbo_grouped_mm": (False, 162),
        "primus_turbo.use_moe_fp8": (True, 163),
        "primus_turbo.enable_embedding_autocast": (True, 164)}),
    "modules/torchtitan/quantize.yaml": ((), {
        "quantize.linear.float8.enable_fsdp_float8_all_gather": (False, 11),
        "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp": (False, 15),
        "quantize.linear.float8.recipe_name": (None, 19),
        "quantize.linear.float8.filter_fqns": ([], 24),
        "quantize.linear.float8.emulate": (False, 29),
        "quantize.linear.mx.mxfp8_dim1_cast_kernel_choice": ('triton', 35),
        "quantize.linear.mx.recipe_name": ('mxfp8_cublas', 39),
        "quantize.linear.mx.filter_fqns": (['output'], 45),
        "quantize.grouped_mm.float8.fqns": ([], 55),
        "quantize.grouped_mm.mx.recipe_name": ('mxfp8', 60),
        "quantize.grouped_mm.mx.fqns": ([], 66)}),
    "models/torchtitan/deepseek_v3_16b-fp8.yaml": ((), {
        "model.name": ('deepseek_v3', 8), "model.flavor": ('16B', 9),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 11)}),
    "models/torchtitan/deepseek_v3_16b.yaml": ((), {
        "model.name": ('deepseek_v3', 8), "model.flavor": ('16B', 9),
        "model.converters": (['primus_turbo'], 11)}),
    "models/torchtitan/deepseek_v3_236b-fp8.yaml": ((), {
        "model.name": ('deepseek_v3', 8), "model.flavor": ('236B', 9),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 11)}),
    "models/torchtitan/deepseek_v3_236b.yaml": ((), {
        "model.name": ('deepseek_v3', 8), "model.flavor": ('236B', 9),
        "model.converters": (['primus_turbo'], 11)}),
    "models/torchtitan/deepseek_v3_671b-fp8.yaml": ((), {
        "model.name": ('deepseek_v3', 7), "model.flavor": ('671B', 8),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 10)}),
    "models/torchtitan/deepseek_v3_671b.yaml": ((), {
        "model.name": ('deepseek_v3', 7), "model.flavor": ('671B', 8),
        "model.converters": (['primus_turbo'], 10)}),
    "models/torchtitan/gpt_oss_120b-fp8.yaml": ((), {
        "model.name": ('gpt_oss', 6), "model.flavor": ('120b', 7),
        "model.converters": (['quantize.linear.float8'], 13)}),
    "models/torchtitan/gpt_oss_120b.yaml": ((), {
        "model.name": ('gpt_oss', 6), "model.flavor": ('120b', 7), "model.converters": ([], 12)}),
    "models/torchtitan/gpt_oss_20b-fp8.yaml": ((), {
        "model.name": ('gpt_oss', 6), "model.flavor": ('20b', 7),
        "model.converters": (['quantize.linear.float8'], 13)}),
    "models/torchtitan/gpt_oss_20b.yaml": ((), {
        "model.name": ('gpt_oss', 6), "model.flavor": ('20b', 7), "model.converters": ([], 12)}),
    "models/torchtitan/llama3.1_405B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('405B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 10)}),
    "models/torchtitan/llama3.1_405B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('405B', 7),
        "model.converters": (['primus_turbo'], 10)}),
    "models/torchtitan/llama3.1_70B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama3.1_70B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama3.1_8B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('8B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama3.1_8B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('8B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama3.2_1B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('1B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama3.3_70B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama3.3_70B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama3_70B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama3_70B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('70B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama3_8B-fp8.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('8B', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama3_8B.yaml": ((), {
        "model.name": ('llama3', 6), "model.flavor": ('8B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama4_17Bx128E-fp8.yaml": ((), {
        "model.name": ('llama4', 6), "model.flavor": ('17bx128e', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama4_17Bx128E.yaml": ((), {
        "model.name": ('llama4', 6), "model.flavor": ('17bx128e', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/llama4_17Bx16E-fp8.yaml": ((), {
        "model.name": ('llama4', 6), "model.flavor": ('17bx16e', 7),
        "model.converters": (['primus_turbo', 'quantize.linear.float8'], 9)}),
    "models/torchtitan/llama4_17Bx16E.yaml": ((), {
        "model.name": ('llama4', 6), "model.flavor": ('17bx16e', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_0.6b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('0.6B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_1.7b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('1.7B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_14b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('14B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_32b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('32B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_4b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('4B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "models/torchtitan/qwen3_8b.yaml": ((), {
        "model.name": ('qwen3', 6), "model.flavor": ('8B', 7),
        "model.converters": (['primus_turbo'], 9)}),
    "modules/megatron_bridge/pretrain_trainer.yaml": (('../module_base.yaml',), {
        "enable_primus_turbo": (True, 15), "use_turbo_attention": (False, 18),
        "use_turbo_gemm": (False, 19), "use_turbo_grouped_gemm": (False, 20),
        "moe_use_fused_router_with_aux_score": (False, 21),
        "enable_turbo_attention_float8": (False, 24), "use_turbo_deepep": (False, 28),
        "turbo_deepep_use_comm_stream": (False, 30), "turbo_sync_free_moe_stage": (0, 33),
        "use_turbo_fused_act_with_probs": (False, 36), "use_turbo_rms_norm": (False, 39)}),
    "modules/megatron_bridge/sft_trainer.yaml": (('../module_base.yaml',), {
        "enable_primus_turbo": (True, 15), "use_turbo_attention": (False, 18),
        "use_turbo_gemm": (False, 19), "use_turbo_grouped_gemm": (False, 20),
        "moe_use_fused_router_with_aux_score": (False, 21),
        "enable_turbo_attention_float8": (False, 24), "use_turbo_deepep": (False, 28),
        "turbo_deepep_use_comm_stream": (False, 30), "turbo_sync_free_moe_stage": (0, 33),
        "use_turbo_fused_act_with_probs": (False, 36), "use_turbo_rms_norm": (False, 39)}),
    "models/megatron_bridge/llama2_70b_lora_mxfp4.yaml": ((), {
        "recipe": ('primus.backends.megatron_bridge.recipes.mlperf_llama2_70b.llama2_custom', 2),
        "flavor": ('llama2_70b_lora_mxfp4_config', 3)}),
    "models/megatron_bridge/llama31_70b.yaml": ((), {
        "recipe": ('llama.llama3', 1), "flavor": ('llama31_70b_finetune_config', 2)}),
    "models/megatron_bridge/llama3_8b.yaml": ((), {
        "recipe": ('llama.llama3', 1), "flavor": ('llama3_8b_finetune_config', 2)}),
    "models/megatron_bridge/mamba_130M.yaml": ((), {
        "recipe": ('mamba.mamba2', 1), "flavor": ('mamba2_130m_pretrain_config', 2)}),
    "models/megatron_bridge/mamba_370M.yaml": ((), {
        "recipe": ('mamba.mamba2', 1), "flavor": ('mamba2_370m_finetune_config', 2)}),
    "models/megatron_bridge/qwen3_30b_a3b.yaml": ((), {
        "recipe": ('qwen.qwen3_moe', 1), "flavor": ('qwen3_30b_a3b_finetune_config', 2)}),
    "models/megatron_bridge/qwen3_32b.yaml": ((), {
        "recipe": ('qwen.qwen3', 1), "flavor": ('qwen3_32b_finetune_config', 2)}),
    "models/megatron_bridge/qwen3_8b.yaml": ((), {
        "recipe": ('qwen.qwen3', 1), "flavor": ('qwen3_8b_finetune_config', 2)}),
    "models/megatron_bridge/zebra_llama_1B.yaml": ((), {
        "recipe": ('zebra_llama.zebra_llama', 1), "flavor": ('zebra_llama_1b_finetune_config', 2)}),
    "models/megatron_bridge/zebra_llama_3B.yaml": ((), {
        "recipe": ('zebra_llama.zebra_llama', 1), "flavor": ('zebra_llama_3b_finetune_config', 2)}),
    "models/megatron_bridge/zebra_llama_8B.yaml": ((), {
        "recipe": ('zebra_llama.zebra_llama', 1), "flavor": ('zebra_llama_8b_finetune_config', 2)}),
}
