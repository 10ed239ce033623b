#!/bin/bash
# torchtitan run_train.sh with the experiment module and config (graph_trainer README)
NGPU=8 MODULE=graph_trainer.deepseek_v3 CONFIG=graph_trainer_deepseek_v3_debugmodel_mxfp8 ./run_train.sh
