# RECONSTRUCTION of tutorials/llm/fp8/02_main.py from NVIDIA-NeMo/Speech PR 14552 (2025-09-07,
# 'fp8 NeMo2 tutorial'): the model, data module and the fp8 recipe's MegatronMixedPrecision
# arguments are the ones quoted in the PR's review threads; paths, batch sizes and the trainer
# settings are filled in.
import os

from nemo import lightning as nl
from nemo.collections import llm
from nemo.collections.llm.gpt.model.llama import Llama31Config8B, LlamaModel

recipe = os.environ.get("RECIPE", "fp8")
experiment_name = recipe
sequence_length = 4096
micro_batch_size = 1
global_batch_size = 64
hf_tokenizer_path = "meta-llama/Llama-3.1-8B-Instruct"
tokenizer = None

config = Llama31Config8B()
model = LlamaModel(config=config, tokenizer=tokenizer)

experiment_log_dir='/workspace/nemo/sft/nemo2/Llama-3.1-8B-Instruct-logs/results_llama_nemo2{}'.format(experiment_name)
resume_dir='/workspace/nemo/sft/nemo2/Llama-3.1-8B-Instruct-logs/results_llama_nemo2{}'.format(experiment_name)
resume_path='/workspace/nemo/models/Llama-3.1-8B-Instruct-Nemo/'

if __name__ == "__main__":

    train_dl = llm.SquadDataModule(seq_length=sequence_length, tokenizer=hf_tokenizer_path, micro_batch_size=micro_batch_size, global_batch_size=global_batch_size)

    if recipe == "bf16":
        plugins = nl.MegatronMixedPrecision(precision="bf16-mixed")
    else:
        plugins = nl.MegatronMixedPrecision(
            precision="bf16-mixed",
            fp8="hybrid",
            fp8_recipe="delayed",
            fp8_margin=0,
            fp8_amax_history_len=1024,
            fp8_amax_compute_algo="max",
        )

    strategy = nl.MegatronStrategy(tensor_model_parallel_size=1, pipeline_model_parallel_size=1)
    trainer = nl.Trainer(
        devices=8,
        num_nodes=1,
        accelerator="gpu",
        max_steps=1000,
        strategy=strategy,
        plugins=plugins,
    )
    llm.finetune(
        model=model,
        data=train_dl,
        trainer=trainer,
        log=nl.NeMoLogger(log_dir=experiment_log_dir),
        resume=nl.AutoResume(resume_if_exists=True, restore_config=nl.RestoreConfig(path=resume_path)),
    )
