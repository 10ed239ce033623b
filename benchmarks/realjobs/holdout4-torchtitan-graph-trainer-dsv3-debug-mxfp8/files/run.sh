#!/bin/bash
# RECONSTRUCTION: the launch line for pytorch/torchtitan@b5bcd76c66d0 as its docs give it (see job.yaml source.outcome).
# torchtitan run_train.sh with the experiment module and config (graph_trainer README)
NGPU=8 MODULE=graph_trainer.deepseek_v3 CONFIG=graph_trainer_deepseek_v3_debugmodel_mxfp8 ./run_train.sh
