# fp8-doctor holdout15 (eval16): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, scripts/training/train.sh (verbatim below this header line)
#!/usr/bin/env bash
# Copyright (c) 2026, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"
cd "${REPO_ROOT}"

UV_ARGS=(--no-project --with nemo-run==0.10.0)
if [[ -n "${VIRTUAL_ENV:-}" ]]; then
    UV_ARGS=(--active --no-sync)
fi
exec uv run "${UV_ARGS[@]}" python "${SCRIPT_DIR}/setup_experiment.py" "$@"
