#!/bin/bash
# fp8-doctor holdout15 (eval16): RECONSTRUCTION. axolotl-ai-cloud/axolotl @ 067b021c8b87a9e5e380b9173c704cf7340e30f5: the
# README's launch form (`axolotl train <config>`) on one GPU for the config built in lora-1b-fp8.yml.
axolotl train lora-1b-fp8.yml
