# Source: mlcommons/training_results_v5.1 @ 441d65f4445cd59687466533fd9f55399136e7a4 src/train.py
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import os

# set this to WARNING or DEBUG to see debug info or warnings
TRAIN_LOG_LEVEL = str(os.getenv("TRAIN_LOG_LEVEL", "ERROR"))

# suppress messages during nemo/megatron make
os.environ["MAKEFLAGS"] = "--no-print-directory -s"

import logging as py_logging
LOG_LEVEL=py_logging._nameToLevel[TRAIN_LOG_LEVEL]

if LOG_LEVEL > py_logging.WARNING:
    import warnings
    warnings.filterwarnings('ignore')

# disable warning and info messages from dependency modules
py_logging.getLogger('megatron.core.dist_checkpointing.strategies.zarr').setLevel(LOG_LEVEL)
py_logging.getLogger('megatron.core.distributed.param_and_grad_buffer').setLevel(LOG_LEVEL)
py_logging.getLogger('megatron.core.num_microbatches_calculator').setLevel(LOG_LEVEL)
py_logging.getLogger('lightning.fabric.utilities.distributed').setLevel(LOG_LEVEL)
py_logging.getLogger('lightning.pytorch.utilities.rank_zero').setLevel(LOG_LEVEL)
py_logging.getLogger('lightning.pytorch.accelerators.cuda').setLevel(LOG_LEVEL)
py_logging.getLogger('lightning.pytorch.callbacks.model_summary').setLevel(LOG_LEVEL)
import torch
torch._logging.set_logs(all=LOG_LEVEL)
from nemo.utils import logging
logging.set_verbosity(verbosity_level=LOG_LEVEL)

import torch.multiprocessing as mp
from callbacks.custom_callbacks import CustomCallback, CustomMegatronGPTSFTModel, MetricsLogger
from mlperf_common.frameworks.pyt import PyTCommunicationHandler
from mlperf_common.logging import MLLoggerWrapper
from nemo.collections.nlp.parts.megatron_trainer_builder import MegatronLMPPTrainerBuilder
from nemo.collections.nlp.parts.peft_config import PEFT_CONFIG_MAP
from nemo.core.config import hydra_runner
from omegaconf.omegaconf import OmegaConf
from lightning.pytorch.utilities import rank_zero_only
import gc


def string_to_bool(text):
    if text is None or text.lower() == "false":
        return False
    elif text.lower() == "true":
        return True
    raise ValueError("The string must be 'true' or 'false', case insensitive.")


mp.set_start_method("spawn", force=True)

OmegaConf.register_new_resolver("add", lambda x, y: x + y)
OmegaConf.register_new_resolver("floor_div", lambda x, y: x // y)

load_llama_ckpt = string_to_bool(os.getenv("LOAD_CKPT", "True"))


def create_model(cfg, trainer):
    peft_cfg_cls = PEFT_CONFIG_MAP[cfg.model.peft.peft_scheme]
    path = cfg.model.restore_from_path if load_llama_ckpt else "/workspace/code/conf/base"
    model_cfg = CustomMegatronGPTSFTModel.merge_cfg_with(path, cfg)
    if load_llama_ckpt:
        model = CustomMegatronGPTSFTModel.restore_from(cfg.model.restore_from_path, model_cfg, trainer=trainer)
    else:
        model = CustomMegatronGPTSFTModel(model_cfg, trainer)
    model.add_adapter(peft_cfg_cls(model_cfg))
    return model


@rank_zero_only
def print_model_data_types(model):
    """
    Traverse through all components of a PyTorch model and print their data types.
    
    Args:
        model (nn.Module): The PyTorch model to traverse.
    """
    print("Model Data Types:")
    print("-" * 30)
    for name, param in model.named_parameters():
        print(f"Parameter: {name} - Data type: {param.dtype}")
    print("-" * 30)
    for name, buffer in model.named_buffers():
        print(f"Buffer: {name} - Data type: {buffer.dtype}")
    print("-" * 30)
    print(f"DEBUG train.py model created \n ********** {model} \n ********")

OmegaConf.register_new_resolver("gt", lambda a, b: float(a) > float(b))
OmegaConf.register_new_resolver("if", lambda cond, a, b:  a if bool(cond) else b)

@hydra_runner(config_path="conf", config_name="megatron_gpt_peft_tuning_config")
def main(cfg) -> None:
    OmegaConf.resolve(cfg)
    logging.debug("\n\n************** Experiment configuration ***********")
    logging.debug(f"\n{OmegaConf.to_yaml(cfg)}")
    mllogger = MLLoggerWrapper(PyTCommunicationHandler())

    callbacks_list = []
    enable_memory_profiling = int(os.environ.get("ENABLE_MEMORY_PROFILING", 0))
    if int(os.environ.get("ENABLE_MEMORY_PROFILING", 0)) == 1:
        if os.getenv("PROFILER") == 'rpd':
            raise ValueError("Memory profiling can't be used with RPD Profiling")
        from callbacks.memory_callbacks import MemoryProfilerCallback, MAX_NUM_OF_MEM_EVENTS_PER_SNAPSHOT
        mem_prof_callbacks = MemoryProfilerCallback()
        callbacks_list.append(mem_prof_callbacks)
        torch.cuda.memory._record_memory_history(
            max_entries=MAX_NUM_OF_MEM_EVENTS_PER_SNAPSHOT
        )

    custom_callback = CustomCallback(cfg, mllogger)
    callbacks_list.append(custom_callback)

    precision = cfg.trainer.precision
    trainer = MegatronLMPPTrainerBuilder(cfg).create_trainer(callbacks=callbacks_list)
    cfg.trainer.precision = precision
    
    if cfg['exp_manager']['create_wandb_logger']:
        from nemo.utils.exp_manager import exp_manager
        exp_manager(trainer, cfg.get("exp_manager", None))
        model = create_model(cfg, trainer)
        trainer.loggers[0].watch(model, log_graph=False)
    else:
        trainer.loggers.append(MetricsLogger(cfg, mllogger, trainer))
        model = create_model(cfg, trainer)
    
    gc.disable()

    if os.getenv("PROFILER") == 'torchprof':
        TORCHPROF_OUTPUT_DIR = os.getenv("TORCHPROF_OUTPUT_DIR", "/results/artifacts/")
        with torch.profiler.profile(
            activities=[
                torch.profiler.ProfilerActivity.CUDA,
            ],
            on_trace_ready=torch.profiler.tensorboard_trace_handler(TORCHPROF_OUTPUT_DIR),
            with_stack=True,
            record_shapes=True,
            profile_memory=False,
        ) as profiler:
            trainer.fit(model)
        profiler_output_path = os.path.join(
            TORCHPROF_OUTPUT_DIR, f"pytorch_profiler_rank_{trainer.global_rank}.txt"
        )
        with open(profiler_output_path, "w") as f:
            f.write(profiler.key_averages().table(sort_by="cuda_time_total"))
    else:
        trainer.fit(model)



if __name__ == "__main__":
    main()
