# Launch line per pytorch/torchtitan torchtitan/experiments/graph_trainer/README.md @ 73aed7f6c09c04041dae2d2c185bb4c6384ebb3f
# (MODULE=graph_trainer.llama3 CONFIG=... ./run_train.sh), naming the MXFP8 entry of the registry.
NGPU=8 MODULE=graph_trainer.llama3 CONFIG=graph_trainer_llama3_8b_mxfp8 ./run_train.sh
