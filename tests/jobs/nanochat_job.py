"""A faithful reduction of karpathy/nanochat @ 92d63d4e8bb4df75c3b71618f31ddde2378b2bcd (the
newest commit; nanochat's own FP8 since e569b59 "delete torchao dependency"), for the module-launch
and own-FP8 tests: runs/speedrun.sh l.68 (``torchrun --standalone --nproc_per_node=8 -m
scripts.base_train -- ... --fp8``), runs/miniseries.sh l.70 (the same without ``--fp8``),
scripts/base_train.py l.42-48, 86, 166-192, 247 (argparse ``--fp8`` / ``--fp8-recipe``, the device
check, the conversion imported from the job's own ``nanochat/fp8.py``, ``torch.compile``),
nanochat/fp8.py (``_to_fp8``, ``_Float8Matmul`` on ``torch._scaled_mm``, ``Float8Linear``,
``Float8LinearConfig``, ``convert_to_float8_training``) and nanochat/common.py
(``autodetect_device_type``). Bodies cut to what decides the reading; names, call shapes and
control flow as upstream."""

from __future__ import annotations

from pathlib import Path

SPEEDRUN = """#!/bin/bash
export OMP_NUM_THREADS=1
python -m nanochat.dataset -n 8
python -m scripts.tok_train
torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --target-param-data-ratio=8 --device-batch-size=16 --fp8 --run=$WANDB_RUN
torchrun --standalone --nproc_per_node=8 -m scripts.base_eval -- --device-batch-size=16
"""

MINISERIES = """#!/bin/bash
NPROC_PER_NODE="${NPROC_PER_NODE:-8}"
DEPTHS=(12 14 16)
for d in "${DEPTHS[@]}"; do
    torchrun --standalone --nproc_per_node=$NPROC_PER_NODE -m scripts.base_train -- \\
        --depth=$d \\
        --run="dummy_d${d}" \\
        --sample-every=-1 \\
        2>&1 | tee "d${d}_train.log"
done
"""

BASE_TRAIN = '''
import argparse
import torch
from nanochat.common import autodetect_device_type, print0

parser = argparse.ArgumentParser(description="Pretrain base model")
parser.add_argument("--run", type=str, default="dummy")
parser.add_argument("--device-type", type=str, default="", help="cuda|cpu|mps (empty = autodetect)")
parser.add_argument("--fp8", action="store_true", help="enable FP8 training (requires H100+ GPU)")
parser.add_argument("--fp8-recipe", type=str, default="tensorwise", choices=["rowwise", "tensorwise"])
parser.add_argument("--depth", type=int, default=20)
parser.add_argument("--device-batch-size", type=int, default=32)
parser.add_argument("--target-param-data-ratio", type=float, default=12)
parser.add_argument("--sample-every", type=int, default=2000)
args = parser.parse_args()
device_type = autodetect_device_type() if args.device_type == "" else args.device_type

model = build_model_meta(args.depth)

# Convert Linear layers to Float8Linear if --fp8 is set
if args.fp8:
    if device_type != "cuda":
        print0("Warning: FP8 training requires CUDA, ignoring --fp8 flag")
    else:
        from nanochat.fp8 import Float8LinearConfig, convert_to_float8_training
        import torch.nn as nn

        def fp8_module_filter(mod: nn.Module, fqn: str) -> bool:
            if not isinstance(mod, nn.Linear):
                return False
            return True

        fp8_config = Float8LinearConfig.from_recipe_name(args.fp8_recipe)
        convert_to_float8_training(model, config=fp8_config, module_filter_fn=fp8_module_filter)

orig_model = model
model = torch.compile(model, dynamic=False)
'''

FP8 = '''
"""Minimal FP8 training for nanochat -- tensorwise dynamic scaling only."""
import torch
import torch.nn as nn

from nanochat.common import COMPUTE_DTYPE

EPS = 1e-12


@torch.no_grad()
def _to_fp8(x, fp8_dtype):
    fp8_max = torch.finfo(fp8_dtype).max
    amax = x.float().abs().max()
    scale = fp8_max / amax.double().clamp(min=EPS)
    return x.float().mul(scale).to(fp8_dtype), scale.reciprocal()


@torch._dynamo.allow_in_graph
class _Float8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_2d, weight):
        input_fp8, input_inv = _to_fp8(input_2d, torch.float8_e4m3fn)
        weight_fp8, weight_inv = _to_fp8(weight, torch.float8_e4m3fn)
        return torch._scaled_mm(input_fp8, weight_fp8.t(), scale_a=input_inv,
                                scale_b=weight_inv, out_dtype=input_2d.dtype, use_fast_accum=True)


class Float8Linear(nn.Linear):
    def forward(self, input):
        input = input.to(COMPUTE_DTYPE)
        return _Float8Matmul.apply(input.reshape(-1, input.shape[-1]), self.weight)

    @classmethod
    def from_float(cls, mod):
        with torch.device("meta"):
            new_mod = cls(mod.in_features, mod.out_features, bias=False)
        new_mod.weight = mod.weight
        return new_mod


class Float8LinearConfig:
    @staticmethod
    def from_recipe_name(recipe_name):
        if recipe_name != "tensorwise":
            raise ValueError(f"Only 'tensorwise' recipe is supported, got '{recipe_name}'.")
        return Float8LinearConfig()


def convert_to_float8_training(module, *, config=None, module_filter_fn=None):
    def _convert(mod, prefix=""):
        for name, child in mod.named_children():
            fqn = f"{prefix}.{name}" if prefix else name
            _convert(child, fqn)
            if isinstance(child, nn.Linear) and not isinstance(child, Float8Linear):
                if module_filter_fn is None or module_filter_fn(child, fqn):
                    setattr(mod, name, Float8Linear.from_float(child))

    _convert(module)
    return module
'''

COMMON = '''
import torch

COMPUTE_DTYPE = torch.bfloat16


def autodetect_device_type():
    if torch.cuda.is_available():
        device_type = "cuda"
    elif torch.backends.mps.is_available():
        device_type = "mps"
    else:
        device_type = "cpu"
    return device_type


def print0(s="", **kwargs):
    print(s, **kwargs)
'''


def write(root: Path, files: dict[str, str] | None = None, *, git: bool = True,
          ) -> Path:
    """The job (a checkout: an empty ``.git``) under ``root``; ``files`` replace or add
    (``None`` as a value leaves a file out)."""
    tree: dict[str, str | None] = {
        "runs/speedrun.sh": SPEEDRUN, "runs/miniseries.sh": MINISERIES,
        "scripts/base_train.py": BASE_TRAIN, "nanochat/__init__.py": "",
        "nanochat/fp8.py": FP8, "nanochat/common.py": COMMON, **(files or {})}
    for rel, text in tree.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if git:
        (root / ".git").mkdir(exist_ok=True)
    return root
