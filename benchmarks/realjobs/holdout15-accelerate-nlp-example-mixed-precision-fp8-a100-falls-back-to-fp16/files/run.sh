#!/bin/bash
# fp8-doctor holdout15 (eval16): huggingface/accelerate @ 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83. examples/README.md:57's
# single-GPU mixed-precision form (`python ./nlp_example.py --mixed_precision fp16`) with fp8, one of the script's
# own --mixed_precision choices (nlp_example.py:198 upstream).
python ./nlp_example.py --mixed_precision fp8
