# RECONSTRUCTION of huggingface/trl issue 3860: the launch the issue describes
# (fp8 asked through ACCELERATE_MIXED_PRECISION, 8 x H100).
ACCELERATE_MIXED_PRECISION=fp8 accelerate launch --num_processes 8 train.py
