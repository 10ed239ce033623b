@REM RECONSTRUCTION (eval23): kohya-ss/musubi-tuner issue 484 (Windows, RTX 5090D): "launching via accelerate with
@REM --mixed_precision bf16, --sdpa, FP8 flags enabled (--fp8_base --fp8_scaled), and LoRA on the Qwen-Image transformer",
@REM written as docs/qwen_image.md's training command @ e96be1caae55ca6dc95aefcc1018d10b9090dd9f plus the two FP8 flags.
accelerate launch --num_cpu_threads_per_process 1 --mixed_precision bf16 src/musubi_tuner/qwen_image_train_network.py ^
    --dit models/qwen_image_bf16.safetensors ^
    --vae models/vae/diffusion_pytorch_model.safetensors ^
    --text_encoder models/qwen_2.5_vl_7b.safetensors ^
    --dataset_config dataset.toml ^
    --sdpa --mixed_precision bf16 ^
    --fp8_base --fp8_scaled ^
    --timestep_sampling shift ^
    --weighting_scheme none --discrete_flow_shift 2.2 ^
    --optimizer_type adamw8bit --learning_rate 5e-5 --gradient_checkpointing ^
    --max_data_loader_n_workers 2 --persistent_data_loader_workers ^
    --network_module networks.lora_qwen_image ^
    --network_dim 16 ^
    --max_train_epochs 16 --save_every_n_epochs 1 --seed 42 ^
    --output_dir output --output_name qwen-image-lora
