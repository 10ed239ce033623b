"""``gpu.*``: GPUs on the host and visible to the process (producer: probes/gpu.py)."""

from preflight.registry import FactSpec as F

SPECS = (
    F("gpu.source", "str", "Where the GPU facts came from: nvml | nvidia-smi | kfd (AMD GPUs, ROCm's KFD topology in sysfs) | assume | none (neither NVML, nvidia-smi nor KFD answered)"),
    F("gpu.count", "int", "GPUs visible to this process (after CUDA_VISIBLE_DEVICES)"),
    F("gpu.host_count", "int", "GPUs present on the host, whatever CUDA_VISIBLE_DEVICES says"),
    F("gpu.visible_indices", "list", "Host indices of the GPUs this process sees"),
    F("gpu.host_names", "list", "Product names of every GPU on the host (NVML order), visible or not"),
    F("gpu.host_ccs", "list", "Compute capability of every GPU on the host as 'major.minor'"),
    F("gpu.visible_devices_error", "str", "The CUDA_VISIBLE_DEVICES entry CUDA would stop at (it and later entries are ignored)"),
    F("gpu.names", "list", "Product names of the visible GPUs, e.g. ['NVIDIA H100 80GB HBM3']"),
    F("gpu.name", "str", "Product name of the first visible GPU"),
    F("gpu.ccs", "list", "Compute capability of each visible GPU as 'major.minor'"),
    F("gpu.min_cc", "cc", "Lowest compute capability among visible GPUs, 'major.minor'"),
    F("gpu.max_cc", "cc", "Highest compute capability among visible GPUs, 'major.minor'"),
    F("gpu.cc", "cc", "Compute capability of the first visible GPU (what accelerate checks)"),
    F("gpu.heterogeneous", "bool", "Visible GPUs differ in model or compute capability"),
    F("gpu.gfx", "str", "AMD ISA target (gfx) of the first visible GPU when it is an AMD GPU (probed from ROCm's KFD, or --assume gpu=MI300X), e.g. 'gfx942' (MI300X/MI325X), 'gfx950' (MI350X/MI355X); absent on NVIDIA GPUs"),
    F("gpu.arch", "str", "Architecture of the first visible GPU: volta | turing | ampere | ada | hopper | blackwell | pascal-or-older | unknown"),
    F("gpu.driver", "version", "NVIDIA driver version, e.g. '580.159.04'"),
    F("gpu.cuda_driver", "version", "Highest CUDA version the driver supports, e.g. '13.0'"),
    F("gpu.mem_total_mib", "list", "Total memory of each visible GPU in MiB"),
    F("gpu.min_mem_mib", "int", "Smallest total memory among visible GPUs, MiB"),
    F("gpu.mig", "bool", "MIG mode is enabled on any visible GPU, or a MIG slice is selected through CUDA_VISIBLE_DEVICES"),
    F("gpu.nvml_error", "str", "Why NVML could not be used, when it could not (facts then come from nvidia-smi, or are Unknown)"),
)
