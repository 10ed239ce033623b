#!/bin/bash
# RECONSTRUCTION: the command axolotl-ai-cloud/axolotl examples/gpt-oss/README.md gives for this config.
axolotl train gpt-oss-20b-fft-fsdp2.yaml
