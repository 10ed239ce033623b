# RECONSTRUCTION: the launch line for hiyouga/LlamaFactory@ff6d4d12eeb0 (see job.yaml source.outcome).
llamafactory-cli sft examples/v1/train_full/train_full_fsdp2.yaml
