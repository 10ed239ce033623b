"""GPU: the trial of the 1B TE eager cell while N busy loops load the host's CPUs (does the trial
see the host-bound FP8 step and say so? issue 26, speedup/gpubusy.py).

    python3 benchmarks/hog_trial.py OUT.json N        (real TE on the GPU; N=32 on 16 cores)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trial_validate import shape_of  # noqa: E402

from preflight.speedup.gpubusy import median_busy  # noqa: E402
from preflight.speedup.trial import trial  # noqa: E402

hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(int(sys.argv[2]))]
try:
    rep = trial(shape_of("llama3.2-1b"), backend="te", recipe="delayed", compiled=False,
                device="cuda")
finally:
    for h in hogs:
        h.kill()
d = rep.to_dict()
print("hogs", sys.argv[2], "speedup", rep.speedup, "busy fp8", median_busy(d["runs"], "fp8"),
      "bf16", median_busy(d["runs"], "bf16"), rep.notes, flush=True)
json.dump(d, open(sys.argv[1], "w"), default=str)
