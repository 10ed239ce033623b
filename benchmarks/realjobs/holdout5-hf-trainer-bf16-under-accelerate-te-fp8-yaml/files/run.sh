# RECONSTRUCTION: the launch line for huggingface/accelerate@0413cf9f1551 (see job.yaml source.outcome).
accelerate launch --config_file fp8_te.yaml train.py
