#!/bin/bash
# fp8-doctor holdout18 (eval19): EleutherAI/gpt-neox @ 286e84e9b06ddccde13d2a65c3644cde4732d362 (branch filtering_training, 2025-03-14).
# Launch form of the README ('python ./deepy.py train.py -d configs 125M.yml local_setup.yml') with the AISI configs of that commit.
python ./deepy.py train.py -d configs aisi/6-9B-transformer-engine-aisi.yml aisi/local_setup-aisi.yml
