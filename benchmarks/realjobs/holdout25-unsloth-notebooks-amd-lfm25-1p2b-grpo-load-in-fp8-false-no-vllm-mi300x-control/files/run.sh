#!/bin/bash
# fp8-doctor holdout25 (eval26): unslothai/notebooks @ bdda2efc7ad5ae129ea63cd2065d23c391406283, AMD Dev Cloud export
# of the LFM2.5 (1.2B) GRPO notebook, run as a script.
python "python_scripts/AMD-LFM2.5_(1.2B)-GRPO.py"
