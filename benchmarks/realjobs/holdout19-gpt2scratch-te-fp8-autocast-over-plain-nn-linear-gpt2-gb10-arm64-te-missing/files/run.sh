#!/bin/bash
# fp8-doctor holdout19 (eval20): launch line from csabakecskemeti/gpt2-from-scratch @ c392292c42cbda5beef8969555f4890ee329faf2,
# backup_fp8_future_work/FP8_TRAINING_GUIDE.md ("Basic FP8 Training", single GPU).
python src/train_fp8.py --use_fp8 --use_tensorboard
