# RECONSTRUCTION: the launch line for pytorch/ao@b795037725b0 (see job.yaml source.outcome).
python docs/source/examples/float8_training_example.py
