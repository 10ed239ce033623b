#!/bin/bash
# fp8-doctor holdout16 (eval17): allenai/OLMo-core @ b9202e9629b8a373cedf74175caa54def991cf0b.
# Same launch form as the other OLMo-core training scripts (<subcommand> <run name> <cluster>); build_config gives
# num_nodes=4 and the tch271_cu126 Beaker image.
python src/scripts/train/OLMoE2-medium.py launch olmoe2-medium ai2/jupiter-cirrascale-2
