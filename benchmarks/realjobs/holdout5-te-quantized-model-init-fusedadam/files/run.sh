# RECONSTRUCTION: the launch line for NVIDIA/TransformerEngine@d0067d0da6cb (see job.yaml source.outcome).
python examples/pytorch/quantized_model_init/main.py
