#!/bin/bash
# fp8-doctor holdout19 (eval20): launch line from fivezeroes/bdh @ 87eadd9dc7f7bedcbd67969821fd27e7ea5b0f01, README.md ("# Train").
python train.py
