"""``cluster.*``: the multi-rank view merged on rank 0 (producer: preflight/cluster/merge.py).

A difference is ``{"name": ..., "values": {value: [ranks]}}``; ``<absent>`` means not installed /
not reported on those ranks, ``<unset>`` an environment variable not set there. ``cluster.summary.*``
are the same differences as one line of text, for rule messages.
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("cluster.world_size", "int", "WORLD_SIZE of the job (ranks expected)"),
    F("cluster.ranks_answered", "int", "Ranks whose facts reached rank 0"),
    F("cluster.nodes", "int", "Distinct hosts among the ranks that answered"),
    F("cluster.node_ranks", "dict", "Ranks per node: {'node0': [0, 1], ...} (node0 holds rank 0)"),
    F("cluster.missing_ranks", "list", "Ranks that did not answer before --timeout"),
    F("cluster.missing", "list", "[{rank, reason}] for each rank that did not answer"),
    F("cluster.error_ranks", "list", "Ranks where fp8-doctor could not collect facts"),
    F("cluster.rank_errors", "list", "[{rank, error}] for each rank where collection failed"),
    F("cluster.differing", "list", "Kinds that differ between ranks: packages | gpu | driver | cuda | env"),
    F("cluster.diff.packages", "list", "Package (and Python) versions that differ: [{name, values: {version: [ranks]}}]"),
    F("cluster.diff.gpu", "list", "GPU model / compute capability of each rank's own GPU that differ"),
    F("cluster.diff.driver", "list", "NVIDIA driver / driver CUDA version that differ (gpu.driver, gpu.cuda_driver)"),
    F("cluster.diff.cuda", "list", "CUDA user-space versions that differ (cuda.torch_build, cuda.runtime, ...)"),
    F("cluster.diff.env", "list", "NVTE_* / NCCL_* / TORCH_NCCL_* / ACCELERATE_* variables that differ"),
    F("cluster.summary.<kind>", "str", "One-line text of a difference kind (packages, gpu, driver, cuda, env, shared_gpu, missing, errors, device_problems)"),
    F("cluster.shared_gpu", "list", "[{node, device, ranks}] for GPUs that more than one rank would use"),
    F("cluster.device_problems", "list", "[{rank, node, problem}] ranks whose LOCAL_RANK names no visible GPU"),
    F("cluster.min_cc", "cc", "Lowest compute capability among the ranks' own GPUs"),
    F("cluster.max_cc", "cc", "Highest compute capability among the ranks' own GPUs"),
    F("cluster.smoke.failed_ranks", "list", "Ranks whose smoke step did not end 'ok' (only with --smoke)"),
    F("cluster.collectives.status", "str", "ok | failed | timeout | skipped (only with --collectives)"),
    F("cluster.collectives.backend", "str", "nccl | gloo"),
    F("cluster.collectives.failed_ranks", "list", "Ranks whose collectives failed or timed out"),
    F("cluster.collectives.error", "str", "Why the collectives failed, per rank"),
    F("cluster.collectives.bytes", "int", "Bytes per rank moved by each collective"),
    F("cluster.collectives.<op>.ok", "bool", "The collective (all_reduce | all_gather_uint8) gave exact results on every rank"),
    F("cluster.collectives.<op>.busbw_gbps", "float", "Bus bandwidth of the collective on rank 0, GB/s (nccl-tests convention)"),
    F("cluster.timing", "dict", "Seconds rank 0 spent: wait_s (for the others), gather_s (gloo), merge_s"),
)
