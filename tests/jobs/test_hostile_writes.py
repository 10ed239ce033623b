"""Files a launch script writes before using them (reading/shellwrites.py) in the forms and at
the bounds redteam4 left (issue 21, redteam5). Each of these scripts rewrites ``acc.yaml`` before
``accelerate launch --config_file acc.yaml``, beside a stale ``acc.yaml`` saying ``bf16`` in the
job: ``dd of=``, ``yq -i``, ``perl -pi``, ``cp -t DIR``, ``sponge``, a write on a line past the
scan's line bound, and a write after 256 other files (past the names it remembers) were not seen,
so the stale file was read as the job: FP8 "no". A line or a file the scan cannot cover now
counts as a write of anything used after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellwrites import MAX_LINE, MAX_NAMES

STALE = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n"
LAUNCH = "accelerate launch --config_file acc.yaml train.py\n"


def _fp8(tmp_path: Path, script: str) -> Any:
    (tmp_path / "acc.yaml").write_text(STALE)
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + script + LAUNCH)
    read = read_paths([str(tmp_path / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("write", [
    "dd if=tmpl.yaml of=acc.yaml status=none\n",
    "yq -i '.mixed_precision = \"fp8\"' acc.yaml\n",
    "yq --inplace '.mixed_precision = \"fp8\"' acc.yaml\n",
    "perl -pi -e 's/bf16/fp8/' acc.yaml\n",
    "perl -i.bak -pe 's/bf16/fp8/' acc.yaml\n",
    "cp -t . gen/acc.yaml\n",
    "mv --target-directory=. gen/acc.yaml\n",
    "envsubst < tmpl.yaml | sponge acc.yaml\n",
    "echo " + "a" * (MAX_LINE + 10) + " > acc.yaml\n",
    "".join(f"echo x > f{i}.txt\n" for i in range(MAX_NAMES + 10)) + "cp gen.yaml acc.yaml\n",
])
def test_a_file_the_script_rewrites_is_never_the_stale_copy(tmp_path: Path, write: str) -> None:
    assert _fp8(tmp_path, write) is not False


@pytest.mark.parametrize("write", [
    "cp acc.yaml outputs/acc.yaml\n",
    "perl -ne 'print' acc.yaml\n",             # reads it, -n is no in-place edit
    "dd if=acc.yaml of=/dev/null\n",
    "echo short > log.txt\n",
])
def test_reads_and_copies_elsewhere_still_leave_it_the_jobs(tmp_path: Path, write: str) -> None:
    assert _fp8(tmp_path, write) is False


@pytest.mark.parametrize("code", [
    "open('acc.yaml', 'w').write('mixed_precision: fp8\\n')",
    "yaml.dump(cfg, open(\"acc.yaml\", mode=\"w\"))",
    "Path('acc.yaml').write_text(body)",
])
def test_python_in_a_here_document_writing_the_config(tmp_path: Path, code: str) -> None:
    """`python - <<'PY'` writing acc.yaml: the body is blanked before the scan (it is text, not
    commands), so the write was not seen and the stale file was read (redteam5)."""
    assert _fp8(tmp_path, f"python - <<'PY'\n{code}\nPY\n") is not False
