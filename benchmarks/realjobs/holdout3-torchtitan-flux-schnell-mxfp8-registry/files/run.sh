#!/bin/bash
# RECONSTRUCTION: the launch pytorch/torchtitan torchtitan/models/flux/README.md gives for the MXFP8 preset
# ("MODULE=flux CONFIG=flux_schnell_mxfp8 ./run_train.sh"), run from the torchtitan checkout root.
MODULE=flux CONFIG=flux_schnell_mxfp8 ./run_train.sh
