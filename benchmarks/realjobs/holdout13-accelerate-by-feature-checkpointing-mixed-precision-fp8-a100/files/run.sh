#!/bin/bash
# fp8-doctor holdout13 (eval14): huggingface/accelerate @ 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83. examples/by_feature/checkpointing.py (argparse --mixed_precision with
# choices no/fp16/bf16/fp8 -> Accelerator(mixed_precision=args.mixed_precision)) launched as examples/README.md's
# by_feature section describes, with fp8 chosen, on an A100 node.
accelerate launch --num_processes 1 examples/by_feature/checkpointing.py --mixed_precision fp8 --checkpointing_steps epoch
