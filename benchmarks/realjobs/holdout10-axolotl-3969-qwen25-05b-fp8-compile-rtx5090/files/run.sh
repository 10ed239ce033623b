#!/bin/bash
# RECONSTRUCTION: axolotl's launch for the config above (axolotl-ai-cloud/axolotl PR 3969).
axolotl train qwen25-0.5b-fp8.yaml
