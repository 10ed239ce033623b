# RECONSTRUCTION: the launch line for NVIDIA-NeMo/Megatron-Bridge@067f987df03b (see job.yaml source.outcome).
RECIPE_NAME=gpt_oss_20b_peft_fp8_current_scaling_config sbatch examples/models/gpt_oss/slurm_peft.sh
