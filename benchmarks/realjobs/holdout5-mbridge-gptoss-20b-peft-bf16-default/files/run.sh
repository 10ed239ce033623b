# RECONSTRUCTION: the launch line for NVIDIA-NeMo/Megatron-Bridge@067f987df03b (see job.yaml source.outcome).
sbatch examples/models/gpt_oss/slurm_peft.sh
