# fp8-doctor holdout17 (eval18): KellerJordan/modded-nanogpt @ cd42a6a0c73ab7bc4cfbedb005aa93c95137a28b, run.sh (verbatim below this header line)
torchrun --standalone --nproc_per_node=8 train_gpt.py
