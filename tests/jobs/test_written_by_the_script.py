"""A file the launch script writes itself before using it (redteam4, issue 21;
reading/shellwrites.py). Slurm and launch scripts generate their configs and inner scripts
(``cat > acc.yaml <<EOF``, ``tee``, ``echo ... >``); what runs is what they write. A stale
copy of that name in the job folder (here BF16, the written one FP8) was read as the job's:
FP8 "no", exit 0. Now that copy is not read, the using line gets a warning, and the settings are
Unknown, also when the folder is scanned."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellwrites import UNSEEN, writes

TRAIN = "import torch\n"
CASES = {
    "yaml": ("cat > acc.yaml <<EOF\nmixed_precision: fp8\ndistributed_type: MULTI_GPU\nEOF\n"
             "accelerate launch --config_file acc.yaml train.py\n",
             {"acc.yaml": "mixed_precision: bf16\ndistributed_type: MULTI_GPU\n"}, 6),
    "variable": ('CFG=acc.yaml\ncat > "${CFG}" <<EOF\nmixed_precision: fp8\nEOF\n'
                 "accelerate launch --config_file $CFG train.py\n",
                 {"acc.yaml": "mixed_precision: bf16\ndistributed_type: MULTI_GPU\n"}, 6),
    "called": ("cat > inner.sh <<EOF\naccelerate launch --mixed_precision fp8 train.py\nEOF\n"
               "bash inner.sh\n",
               {"inner.sh": "accelerate launch --mixed_precision bf16 train.py\n"}, 5),
    "tee": ("tee inner.sh > /dev/null <<'EOF'\naccelerate launch --mixed_precision fp8 train.py\n"
            "EOF\nbash inner.sh\n",
            {"inner.sh": "accelerate launch --mixed_precision bf16 train.py\n"}, 5),
    "echo": ('echo "accelerate launch --mixed_precision fp8 train.py" > inner.sh\n'
             "bash inner.sh\n",
             {"inner.sh": "accelerate launch --mixed_precision bf16 train.py\n"}, 3),
    "sourced": ("cat > env.sh <<EOF\nPREC=fp8\nEOF\nsource env.sh\n"
                "accelerate launch --mixed_precision $PREC train.py\n",
                {"env.sh": "PREC=bf16\n"}, 5),
    "python": ('cat > train.py <<EOF\nfrom accelerate import Accelerator\n'
               'accelerator = Accelerator(mixed_precision="fp8")\nEOF\n'
               "accelerate launch train.py\n",
               {"train.py": 'from accelerate import Accelerator\n'
                            'accelerator = Accelerator(mixed_precision="bf16")\n'}, 6),
}


def _job(folder: Path, name: str) -> Path:
    script, files, _ = CASES[name]
    (folder / "run.sh").write_text("#!/bin/bash\n" + script)
    (folder / "train.py").write_text(TRAIN)
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder / "run.sh"


def _fp8(paths: list[str]) -> object:
    read = read_paths(paths)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"], read


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_stale_copy_of_what_the_script_writes_is_never_the_job(tmp_path: Path,
                                                                 name: str) -> None:
    script = _job(tmp_path, name)
    fp8, read = _fp8([str(script)])
    assert fp8 is not False
    assert isinstance(fp8, Unknown)
    assert any(p.path == str(script) and p.line == CASES[name][2] and "writes itself" in
               p.message for p in read.problems), read.problems
    folder_fp8, _ = _fp8([str(tmp_path)])      # the folder scanned: the copy is left out too
    assert folder_fp8 is not False


def test_a_copy_kept_elsewhere_is_another_file(tmp_path: Path) -> None:
    # `cp acc.yaml outputs/acc.yaml` keeps a copy with the outputs: acc.yaml is still the job's
    (tmp_path / "acc.yaml").write_text("mixed_precision: bf16\ndistributed_type: MULTI_GPU\n")
    (tmp_path / "train.py").write_text(TRAIN)
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nmkdir -p outputs\ncp acc.yaml outputs/acc.yaml\n"
                      "python train.py > outputs/log.txt 2>&1 || true\n"
                      "accelerate launch --config_file acc.yaml train.py\n")
    fp8, read = _fp8([str(script)])
    assert fp8 is False
    assert not any("writes itself" in p.message for p in read.problems)


def test_the_writes_a_script_makes() -> None:
    got = writes("cat > a.sh <<EOF\ntee -a t.yaml >/dev/null <<'EOF'\necho x>y.sh; cp a c/b.yaml "
                 "&& mv q ./r.py\nsed -i s/a/b/ c.toml\ncmd >& z.txt\nls 2>&1 >&2\n"
                 "curl -sSL -o d.json http://x\n# cat > no.sh\n" + "x" * 5000 + " > long.sh\n"
                 'echo "Usage: ROOT=<dir> ./quoted.sh" \'> q.sh\'\nO=out; cmd 2> "$O/e.log"\n',
                 {"O": "out"})
    assert got == {"a.sh": 1, "/dev/null": 2, "t.yaml": 2, "y.sh": 3, "c/b.yaml": 3,
                   "r.py": 3, "c.toml": 4, "z.txt": 5, "d.json": 7, "out/e.log": 11,
                   UNSEEN: 9}   # the 5,000-character line: not scanned, so it may write (redteam5)
