#!/bin/bash
# RECONSTRUCTION: axolotl-ai-cloud/axolotl issue 3323 trains on one H100 with the config above.
axolotl train config.yml
