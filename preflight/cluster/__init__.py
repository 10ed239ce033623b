"""Multi-rank fp8-doctor over torch.distributed: run it under torchrun / srun / accelerate launch.

``python -m preflight.cluster`` (``__main__``, then ``cli``) collects facts on every rank,
gathers them to rank 0 over gloo and reports what differs between ranks. Modules:

- ``launch``: rank / world / local rank and the GPU slot from the launcher's environment;
- ``collect``: one rank's payload (the normal fact pipeline, plus rank identity and env);
- ``gather``: roll call on the c10d store (names ranks that never answer) + gloo exchange;
- ``payload``: what one rank sends, bounded by the sender and checked by rank 0;
- ``merge``: payloads -> ``cluster.*`` facts (pure);
- ``collectives``: NCCL all-reduce and uint8 all-gather in a child process with a timeout;
- ``view``: the cluster section (differences first, one table per node).

Importing this package does not import torch; only the entry point and the gather do.
"""
