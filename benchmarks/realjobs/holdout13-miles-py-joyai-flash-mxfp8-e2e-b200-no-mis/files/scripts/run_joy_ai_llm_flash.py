# fp8-doctor holdout13 (eval14): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, scripts/run_joy_ai_llm_flash.py verbatim below this header line
from dataclasses import dataclass
from typing import Literal

import typer

import miles.utils.external_utils.command_utils as U


MXFP8_HIGH_PRECISION_LAYERS_HF = ".kv_b_proj. .shared_experts."
MXFP8_HIGH_PRECISION_LAYERS_MEGATRON = (
    ".linear_kv_up_proj .linear_k_up_proj .linear_v_up_proj " ".shared_experts.linear_fc1 .shared_experts.linear_fc2"
)
MXFP8_TE_PRECISION_CONFIG = """
configs:
  bf16:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe: {}
matchers:
  mla_kv_up_proj_bf16:
    type: "glob"
    enabled: true
    pattern: "*.self_attention.linear_kv_up_proj"
    config: "bf16"
  absorbed_k_up_proj_bf16:
    type: "glob"
    enabled: true
    pattern: "*.self_attention.linear_k_up_proj"
    config: "bf16"
  absorbed_v_up_proj_bf16:
    type: "glob"
    enabled: true
    pattern: "*.self_attention.linear_v_up_proj"
    config: "bf16"
  shared_fc1:
    type: "glob"
    enabled: true
    pattern: "*.mlp.shared_experts.linear_fc1"
    config: "bf16"
  shared_fc2:
    type: "glob"
    enabled: true
    pattern: "*.mlp.shared_experts.linear_fc2"
    config: "bf16"
""".strip()


@dataclass
class ScriptArgs(U.ExecuteTrainConfig):
    mode: Literal["normal", "debug_minimal"] = "normal"
    run_id: str = U.create_run_id()
    model_org: str = "jdopensource"
    model_name: str = "JoyAI-LLM-Flash"
    megatron_model_type: str = "joyai-llm-flash"
    num_gpus_per_node: int | None = 8
    actor_num_gpus_per_node: int | None = 4
    rollout_num_gpus: int | None = 4
    hardware: Literal["B200", "B300", "GB200", "GB300"] = "B200"
    enable_eval: bool = False
    extra_args: str = ""
    data_dir: str = "/root/datasets"
    model_dir: str = "/root/models"
    megatron_path: str = "/root/Megatron-LM"
    rollout_mxfp8: bool = False
    train_mxfp8: bool = False
    enable_mis: bool = False
    tis_use_rs: bool = True
    ci_test: bool = False
    save_checkpoints: bool = True
    num_rollout: int = 3000
    global_batch_size: int = 256
    data_pad_size_multiplier: int | None = None
    log_probs_chunk_size: int | None = None
    mxfp8_num_layers_at_start_in_bf16: int = 1
    mxfp8_num_layers_at_end_in_bf16: int = 6

    def __post_init__(self):
        if self.train_mxfp8:
            assert self.rollout_mxfp8, "train_mxfp8 requires rollout_mxfp8"


def prepare(args: ScriptArgs):
    U.exec_command_cpu(f"mkdir -p {args.model_dir} {args.data_dir}")
    U.exec_command_cpu(
        f"hf download {args.model_org}/{args.model_name} --local-dir {args.model_dir}/{args.model_name}"
    )
    U.hf_download_dataset("zhuzilin/dapo-math-17k", data_dir=args.data_dir)
    U.hf_download_dataset("zhuzilin/aime-2024", data_dir=args.data_dir)

    if args.rollout_mxfp8:
        U.exec_command_gpu(
            f"python tools/convert_hf_to_mxfp8.py --model-dir {args.model_dir}/{args.model_name} "
            f"--save-dir {args.model_dir}/{args.model_name}-MXFP8 "
            f"--num-layers-at-start-in-bf16 {args.mxfp8_num_layers_at_start_in_bf16} "
            f"--num-layers-at-end-in-bf16 {args.mxfp8_num_layers_at_end_in_bf16} "
            f"--extra-high-precision-layers-hf {MXFP8_HIGH_PRECISION_LAYERS_HF} "
            f"{args.extra_args} "
        )

    U.convert_checkpoint(
        model_name=args.model_name,
        megatron_model_type=args.megatron_model_type,
        num_gpus_per_node=args.actor_num_gpus_per_node,
        # To support multi-node training, for simplicity, we put model into shared folder
        dir_dst=args.model_dir,
        hf_checkpoint=f"{args.model_dir}/{args.model_name}",
        megatron_path=args.megatron_path,
    )


def execute(args: ScriptArgs, *, wandb_file: str = __file__):
    ref_load_path = f"{args.model_dir}/{args.model_name}_torch_dist"
    load_save_path = f"{args.output_dir}/{args.run_id}/checkpoints"

    if args.train_mxfp8:
        hf_checkpoint = f"{args.model_dir}/{args.model_name}-MXFP8"
    else:
        hf_checkpoint = f"{args.model_dir}/{args.model_name}"
    ckpt_args = f"--hf-checkpoint {hf_checkpoint}/ " f"--ref-load {ref_load_path} "
    if args.save_checkpoints:
        ckpt_args += (
            f"--load {load_save_path} "
            f"--save {load_save_path} "
            f"--save-interval {2 if args.mode == 'debug_minimal' else 20} "
            f"--save-retain-interval {2 if args.mode == 'debug_minimal' else 20} "
        )

    rollout_args = (
        f"--prompt-data {args.data_dir}/dapo-math-17k/dapo-math-17k.jsonl "
        "--input-key prompt "
        "--label-key label "
        "--apply-chat-template "
        "--rollout-shuffle "
        "--rm-type math "
        f"--num-rollout {args.num_rollout} "
        "--rollout-batch-size 32 "
        "--n-samples-per-prompt 8 "
        f"--rollout-max-response-len {100 if args.mode == 'debug_minimal' else 8192} "
        "--rollout-temperature 1 "
        f"--global-batch-size {args.global_batch_size} "
        "--balance-data "
    )

    eval_args = ""
    if (args.mode != "debug_minimal") and args.enable_eval:
        eval_args += (
            "--eval-interval 20 "
            f"--eval-prompt-data aime {args.data_dir}/aime-2024/aime-2024.jsonl "
            "--n-samples-per-eval-prompt 16 "
            "--eval-max-response-len 16384 "
            "--eval-top-p 1 "
        )

    perf_args = (
        "--recompute-granularity full "
        "--recompute-method uniform "
        "--recompute-num-layers 1 "
        # "--micro-batch-size 1 "
        "--use-dynamic-batch-size "
        "--max-tokens-per-gpu 32768 "
    )
    if args.data_pad_size_multiplier is not None:
        perf_args += f"--data-pad-size-multiplier {args.data_pad_size_multiplier} "
    if args.log_probs_chunk_size is not None:
        perf_args += f"--log-probs-chunk-size {args.log_probs_chunk_size} "

    grpo_args = (
        "--advantage-estimator grpo "
        "--use-kl-loss "
        "--kl-loss-coef 0.00 "
        "--kl-loss-type low_var_kl "
        "--entropy-coef 0.00 "
        "--eps-clip 0.2 "
        "--eps-clip-high 0.28 "
    )

    optimizer_args = (
        "--optimizer adam "
        "--lr 1e-6 "
        "--lr-decay-style constant "
        "--weight-decay 0.1 "
        "--adam-beta1 0.9 "
        "--adam-beta2 0.98 "
    )

    misc_args = (
        # default dropout in megatron is 0.1
        "--attention-dropout 0.0 "
        "--hidden-dropout 0.0 "
        # should be good for model performance
        "--accumulate-allreduce-grads-in-fp32 "
        "--attention-softmax-in-fp32 "
        "--attention-backend auto "
        "--actor-num-nodes 1 "
        f"--actor-num-gpus-per-node {args.actor_num_gpus_per_node} "
        f"--num-gpus-per-node {args.num_gpus_per_node} "
        f"--rollout-num-gpus {args.rollout_num_gpus} "
        "--use-fault-tolerance "
        # f"--dump-details {args.output_dir}/{args.run_id}/dump_details "
    )
    misc_env_vars = {}

    if args.train_mxfp8:
        match args.hardware:
            case "B200" | "B300" | "GB200" | "GB300":
                misc_args += (
                    "--transformer-impl transformer_engine "
                    "--bf16 "
                    "--fp8-format e4m3 "
                    "--fp8-recipe mxfp8 "
                    "--first-last-layers-bf16 "
                    f"--num-layers-at-start-in-bf16 {args.mxfp8_num_layers_at_start_in_bf16} "
                    f"--num-layers-at-end-in-bf16 {args.mxfp8_num_layers_at_end_in_bf16} "
                    # "--fp8-param-gather "
                    # "--reuse-grad-buf-for-mxfp8-param-ag "
                    # --moe-router-padding-for-quantization
                )

    match args.hardware:
        case "B200" | "B300" | "GB200" | "GB300":
            perf_args += (
                f"--tensor-model-parallel-size {args.actor_num_gpus_per_node} "
                "--sequence-parallel "
                "--pipeline-model-parallel-size 1 "
                "--context-parallel-size 1 "
                f"--expert-model-parallel-size {args.actor_num_gpus_per_node} "
                "--expert-tensor-parallel-size 1 "
            )
            sglang_args = "--sglang-mem-fraction-static 0.7 " "--sglang-attention-backend trtllm_mla "
            if args.rollout_mxfp8:
                sglang_world_size = 2
                sglang_decode_max_bs = 256
                sglang_args += (
                    "--sglang-enable-dp-attention "
                    f"--rollout-num-gpus-per-engine {sglang_world_size} "
                    "--sglang-fp8-gemm-backend flashinfer_trtllm "
                    "--sglang-moe-runner-backend flashinfer_trtllm_routed "
                    f"--sglang-tp-size {sglang_world_size} "
                    f"--sglang-dp-size {sglang_world_size} "
                    "--sglang-enable-dp-attention "
                    f"--sglang-cuda-graph-max-bs {sglang_decode_max_bs} "
                    # f"--sglang-max-running-requests {sglang_world_size * sglang_decode_max_bs // sglang_attn_tp_size} "
                    # f"--sglang-chunked-prefill-size {sglang_world_size * sglang_decode_max_bs} "
                )
                misc_args += (
                    "--use-rollout-routing-replay "
                    "--sglang-disable-shared-experts-fusion "
                    f"--extra-high-precision-layers-hf {MXFP8_HIGH_PRECISION_LAYERS_HF} "
                    f"--extra-high-precision-layers-megatron {MXFP8_HIGH_PRECISION_LAYERS_MEGATRON} "
                )
                optimizer_args += (
                    "--optimizer-cpu-offload " "--overlap-cpu-optimizer-d2h-h2d " "--use-precision-aware-optimizer "
                )
                misc_args += f"--te-precision-config-file {U.encode_pseudo_file(MXFP8_TE_PRECISION_CONFIG)} "
            else:
                sglang_args += "--rollout-num-gpus-per-engine 1 " "--sglang-cuda-graph-max-bs 256 "
        case _:
            raise NotImplementedError

    if args.enable_mis:
        config_text = f"""
use_tis: true
use_rs: {"true" if args.tis_use_rs else "false"}
tis_level: "token"
rs_level: "token"
tis_mode: "truncate"
tis_lower_bound: 0.5
tis_upper_bound: 2.0
rs_lower_bound: null
rs_upper_bound: null
rs_veto_threshold: 1.0e-4
tis_batch_normalize: true
""".strip()
        misc_args += (
            f"--custom-config-path {U.encode_pseudo_file(config_text)} "
            "--custom-tis-function-path examples.infra_features.train_infer_mismatch_helper.mis.compute_mis_weights_with_cp "
        )

    train_args = (
        f"{ckpt_args} "
        f"{rollout_args} "
        f"{optimizer_args} "
        f"{grpo_args} "
        f"{U.get_default_wandb_args(wandb_file, run_id=args.run_id)} "
        f"{perf_args} "
        f"{sglang_args} "
        f"{'--ci-test ' if args.ci_test else ''}"
        f"{eval_args} "
        f"{misc_args} "
        f"{args.extra_args} "
    )

    U.execute_train(
        train_args=train_args,
        config=args,
        num_gpus_per_node=args.num_gpus_per_node,
        megatron_model_type=args.megatron_model_type,
        extra_env_vars={**misc_env_vars},
        megatron_path=args.megatron_path,
    )


@U.dataclass_cli
def main(args: ScriptArgs):
    prepare(args)
    execute(args)


if __name__ == "__main__":
    typer.run(main)
