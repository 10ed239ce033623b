#!/bin/bash
# RECONSTRUCTION of the launch pytorch/ao benchmarks/float8/training/llama3.sh documents in its usage text
# (TORCHTITAN_ROOT=<dir> ./llama3.sh, FLOAT8_RECIPE_WITH_BEST_SETTINGS picks the float8 recipe), run
# against a torchtitan v0.2.2 checkout (the release current when the script was last unchanged at HEAD).
TORCHTITAN_ROOT=./torchtitan FLOAT8_RECIPE_WITH_BEST_SETTINGS=tensorwise ./benchmarks/float8/training/llama3.sh
