#!/bin/bash
# fp8-doctor holdout16 (eval17): allenai/OLMo-core @ 3502097000af5f7e5e2685f1ca679112021b9e0d.
# The script's docstring: "Run this script without any arguments to see usage info" (olmo_core.internal.experiment
# main: <subcommand> <run name> <cluster>); build_config gives num_nodes=8 and the tch271_cu126 Beaker image.
python src/scripts/train/OLMoE2-large.py launch olmoe2-large ai2/jupiter-cirrascale-2
