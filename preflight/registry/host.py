"""``host.*``: the machine and process the job would run in (producer: probes/runtime.py;
``host.place``: environment.py, from the facts judged)."""

from preflight.registry import FactSpec as F

SPECS = (
    F("host.python", "version", "Python version running fp8-doctor, e.g. '3.11.7'"),
    F("host.python_impl", "str", "Python implementation, e.g. 'CPython'"),
    F("host.os", "str", "Operating system name, e.g. 'Linux'"),
    F("host.os_release", "str", "Kernel / OS release string"),
    F("host.arch", "str", "Machine architecture, e.g. 'x86_64' or 'aarch64'"),
    F("host.libc", "str", "C library and version, e.g. 'glibc 2.36'"),
    F("host.cpu_count", "int", "Logical CPUs visible to this process"),
    F("host.mem_total_bytes", "int", "Physical memory in bytes"),
    F("host.shm_bytes", "int", "Size of /dev/shm in bytes (NCCL and dataloaders need space here)"),
    F("host.container", "str", "Container runtime hint (marker files, cgroup): docker | podman | kubernetes | enroot | none"),
    F("host.launcher", "str", "How this process was launched: accelerate | torchrun | slurm | mpi | none"),
    F("host.world_size", "int", "WORLD_SIZE (or SLURM_NTASKS) when launched under a launcher"),
    F("host.rank", "int", "RANK of this process when launched under a launcher"),
    F("host.local_rank", "int", "LOCAL_RANK of this process when launched under a launcher"),
    F("host.place", "str", "Where the check judged the job: training-node (a GPU probed on the "
      "machine judged) | planning (no GPU probed; assumed or none) | ci-runner (the same, on CI)",
      choices=("training-node", "planning", "ci-runner")),
)
