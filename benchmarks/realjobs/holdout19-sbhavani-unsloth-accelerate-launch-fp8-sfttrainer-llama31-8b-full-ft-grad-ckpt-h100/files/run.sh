#!/bin/bash
# fp8-doctor holdout19 (eval20): sbhavani/unsloth @ 8cb627e88c667da5625ef876784752d255bf3862. The launch line is the
# "Run with:" line of examples/test_fp8_accelerate_launch.py's docstring, verbatim.
accelerate launch --mixed_precision fp8 examples/test_fp8_accelerate_launch.py
