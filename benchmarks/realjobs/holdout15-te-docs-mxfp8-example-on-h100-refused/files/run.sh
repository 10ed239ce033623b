#!/bin/bash
# fp8-doctor holdout15 (eval16): NVIDIA/TransformerEngine @ d0067d0da6cb01811b8072a7d304f0e00344ce2b: the documentation example run as a script on one GPU
# (the docs page includes the lines between its START/END markers; run whole, as here, the file is a complete program).
python pytorch_mxfp8_example.py
