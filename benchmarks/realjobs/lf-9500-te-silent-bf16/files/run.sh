#!/bin/bash
# The command of hiyouga/LlamaFactory issue 9500 ("Command"), verbatim.
llamafactory-cli train configs/test_fp8.yaml
