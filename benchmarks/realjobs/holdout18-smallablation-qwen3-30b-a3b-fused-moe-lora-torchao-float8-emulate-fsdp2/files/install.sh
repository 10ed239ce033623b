# fp8-doctor holdout18 (eval19): copied verbatim from Scicom-AI-Enterprise-Organization/small-ablation @ a664148fbdaab5b6d4fa3e91bc8deb1f17fec9e0, fsdp2-fused-moe-lora-bf16-vs-fp8/install.sh.
pip3 install torch==2.9.0 torchvision==0.24.0 torchaudio==2.9.0 --index-url https://download.pytorch.org/whl/cu128
pip3 install transformers==4.57.3 datasets accelerate kernels==0.11.3 peft
pip3 install mosaicml-streaming
pip3 install wandb
pip3 install liger-kernel