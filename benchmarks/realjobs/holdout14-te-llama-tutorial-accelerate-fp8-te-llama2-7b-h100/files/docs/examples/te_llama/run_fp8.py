# fp8-doctor holdout14 (eval15): NVIDIA/TransformerEngine @ d0067d0da6cb01811b8072a7d304f0e00344ce2b, docs/examples/te_llama/tutorial_accelerate_hf_llama_with_te.ipynb code cell 15 (verbatim below; the notebook-only restart lines are commented out and the empty HF token is filled with a placeholder, nothing else changed)
# Restart the notebook (to flush the GPU memory)
# from utils import restart_jupyter_notebook    # (notebook-only: restarts the kernel; commented out in this script)
# restart_jupyter_notebook()    # (notebook-only: restarts the kernel; commented out in this script)


# Import necessary packages, methods and variables
from utils import *


# Provide Huggingface Access Token
hyperparams.hf_access_token = "hf_xxx"    # (the user fills in a token; the notebook has "")
assert hyperparams.hf_access_token, "Provide a HF API Access Token!"

# Provide a directory to cache weights in to avoid downloading them every time.
# (By default, weights are cached in `~/.cache/huggingface/hub/models`)
hyperparams.weights_cache_dir = ""

# For Llama 2, uncomment this line (also set by default)
hyperparams.model_name = "meta-llama/Llama-2-7b-hf"

# For Llama 3, uncomment this line
# hyperparams.model_name = "meta-llama/Meta-Llama-3-8B"

hyperparams.mixed_precision = "fp8"


# Init the model and accelerator wrapper
model = init_te_llama_model(hyperparams)
accelerator, model, optimizer, train_dataloader, lr_scheduler = wrap_with_accelerator(model, hyperparams)


# Finetune the model
finetune_model(model, hyperparams, accelerator, train_dataloader, optimizer, lr_scheduler)
