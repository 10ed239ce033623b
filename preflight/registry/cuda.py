"""``cuda.*``: CUDA user-space versions, read without importing torch (producer: probes/packages.py)."""

from preflight.registry import FactSpec as F

SPECS = (
    F("cuda.torch_build", "version", "CUDA version torch was built for (torch/version.py 'cuda'), e.g. '12.4'; absent for CPU builds"),
    F("cuda.torch_hip", "version", "ROCm/HIP version of a ROCm torch build"),
    F("cuda.torch_git", "str", "git_version recorded in torch/version.py"),
    F("cuda.torch_variant", "str", "torch build variant: cuda | cpu | rocm | xpu"),
    F("cuda.runtime", "version", "CUDA runtime version from the nvidia-cuda-runtime wheel, when installed"),
    F("cuda.cudnn", "version", "cuDNN version from the nvidia-cudnn wheel, when installed"),
    F("cuda.cublas", "version", "cuBLAS version from the nvidia-cublas wheel, when installed"),
    F("cuda.nvcc", "version", "CUDA toolkit version at CUDA_HOME / CUDA_PATH / /usr/local/cuda (its version.json), when present"),
)
