"""A script the launch script writes and then runs is read from what was written (shell16,
holdout23: gpu-recipes' A4 GKE launcher.sh l.88-141 @ 1f338bb4 builds ``worker_command=$(cat
<<- EOM ... EOM)``, writes it with ``echo "$worker_command" > worker_command.sh`` and runs
``torchrun --no-python bash worker_command.sh``: the training command was never read)."""

from __future__ import annotations

import re

import pytest

from preflight.reading.shellexpand import Launch, launch_args, launches
from preflight.reading.shellheredoc import kept_text
from preflight.reading.shellwords import split
from tests.cputime import cpu_seconds

ENTRY = re.compile(r"(?:^|/)train\.py$")


def _launch(text: str) -> Launch | None:
    return launch_args(split(text), lambda w: bool(ENTRY.search(w)))


def _args(text: str) -> list[str]:
    got = _launch(text)
    assert got is not None
    return [a.text for a in got.args]


GKE = ('worker_command=$(cat <<- EOM\n'
       '  if [ "\\$RANK" -eq "0" ]; then\n    echo "rank 0" ;\n  fi ;\n'
       '  cd /opt/x ;\n'
       '  numactl --cpunodebind=\\$((LOCAL_RANK/4)) nsys profile -o "/$LOGS/rank-\\$RANK" \\\n'
       '  python train.py \\\n    --compute_dtype fp8_mx \\\n    --max_steps 30\n\nEOM\n)\n\n'
       'echo "$worker_command" > worker_command.sh\nchmod 777 worker_command.sh\n\n'
       'torchrun \\\n--nproc-per-node="8" \\\n--no-python bash worker_command.sh\n')


def test_the_gke_worker_command_is_read_from_what_was_written() -> None:
    launch = _launch(GKE)
    assert launch is not None and launch.entry.text == "train.py"
    assert [a.text for a in launch.args] == ["--compute_dtype", "fp8_mx", "--max_steps", "30"]
    # each argument keeps the line it is written on (inside the here-document)
    assert GKE.count("\n", 0, launch.args[1].offset) + 1 == 8
    # `$LOGS` was expanded when the file was written: from the environment, not known
    assert any(a.opaque for a in launch.before)


@pytest.mark.parametrize("write, run", [
    ('echo "$V" > f.sh', "bash f.sh"),
    ("printf '%s' \"$V\" > f.sh", "srun bash f.sh"),
    ("printf '%s\\n' \"$V\" >f.sh", "sh -e f.sh"),
    ('echo "$V" > ./f.sh', "chmod +x f.sh; ./f.sh"),
    ('echo "$V" >| f.sh', "torchrun --nproc_per_node 8 --no-python bash ./f.sh"),
    ('echo -n "$V" &> f.sh', "nohup bash f.sh"),
])
def test_each_way_to_write_and_run_a_variable(write: str, run: str) -> None:
    for take in ("read -r -d '' V <<EOF\npython train.py --fp8 \"$A\"\nEOF\n",
                 "V=$(cat <<EOF\npython train.py --fp8 \"$A\"\nEOF\n)\n"):
        assert _args(f"A=e4m3\n{take}{write}\n{run}\n") == ["--fp8", "e4m3"]


def test_variables_expand_when_written_and_only_exported_ones_reach_the_run() -> None:
    # unquoted delimiter: $A is the value when the file is written
    assert _args('A=fp8\nV="python train.py --p $A"\necho "$V" > f\nA=bf16\nbash f\n') == \
        ["--p", "fp8"]
    # quoted delimiter: `$A` is written as is; the new shell sees only exported variables
    quoted = "V=$(cat <<'EOF'\npython train.py --p $A\nEOF\n)\necho \"$V\" > f\n"
    launch = _launch("A=fp8\n" + quoted + "bash f\n")
    assert launch is not None and launch.args[1].opaque is not None
    assert _args("export A=fp8\n" + quoted + "bash f\n") == ["--p", "fp8"]
    assert _args("A=fp8\nexport A\n" + quoted + "bash f\n") == ["--p", "fp8"]


@pytest.mark.parametrize("text", [
    # written only in a branch not decided here: what the file holds is not known
    'V="python train.py --fp8"\nif [ -n "$X" ]; then\n  echo "$V" > f\nfi\nbash f\n',
    # echo -e: escapes not followed
    'echo -e "python train.py\\t--fp8" > f\nbash f\n',
    # overwritten by another command afterwards
    'echo "python train.py --fp8" > f\ncp other.sh f\nbash f\n',
    'echo "python train.py --fp8" > f\npython gen.py > f\nbash f\n',
    # a file the script never wrote: not read from disk here
    "bash f\n",
    # another file than the one written
    'echo "python train.py --fp8" > f\nbash g\n',
    # stderr, not the file
    'echo "python train.py --fp8" 2> f\nbash f\n',
    # in a function (its calls are not followed here), or in the background (a race)
    'w() {\n  echo "python train.py --fp8" > f\n}\nbash f\n',
    'echo "python train.py --fp8" > f &\nbash f\n',
])
def test_what_is_not_known_is_not_followed(text: str) -> None:
    assert _launch(text) is None


def test_an_appended_file_holds_both_writes() -> None:
    text = 'echo "cd /x" > f\necho "python train.py --fp8" >> f\nbash f\n'
    assert _args(text) == ["--fp8"]
    assert _launch('python gen.py > f\necho "python train.py --fp8" >> f\nbash f\n') is None


def test_a_script_that_runs_itself_is_bounded() -> None:
    text = "echo 'bash f' > f\nbash f\n" + "".join(
        f"echo 'bash f{n + 1}' > f{n}\n" for n in range(60)) + "bash f0\n"
    before = cpu_seconds()
    assert launches(split(text), lambda w: bool(ENTRY.search(w))) == []
    assert cpu_seconds() - before < 20      # ~0.05 s quiet


@pytest.mark.parametrize("text, want", [
    ('V="python train.py --fp8 e4m3"\ncat > f.sh <<EOF\n$V\nEOF\nbash f.sh\n', ["--fp8", "e4m3"]),
    ("cat <<EOF > run/f.sh\npython train.py --fp8 1\nEOF\nsrun bash run/f.sh\n", ["--fp8", "1"]),
    ("cat > job.sbatch <<EOF\n#SBATCH -N 2\npython train.py --fp8 1\nEOF\nsbatch job.sbatch\n",
     ["--fp8", "1"]),
    ("tee f.sh > /dev/null <<EOF\npython train.py --fp8 1\nEOF\nchmod +x f.sh\n./f.sh\n",
     ["--fp8", "1"]),
    # quoted delimiter: `$A` kept as written, and only an exported A reaches the new shell
    ("export A=x\ncat > f.sh <<'EOF'\npython train.py --fp8 $A\nEOF\nbash f.sh\n", ["--fp8", "x"]),
])
def test_a_here_document_written_to_a_file_that_runs(text: str, want: list[str]) -> None:
    assert _args(kept_text(text)) == want


@pytest.mark.parametrize("text", [
    "A=x\ncat > f.sh <<'EOF'\npython train.py --fp8 $A\nEOF\nbash f.sh\n",   # not exported
    "cat <<EOF > f.sh\npython train.py --fp8 $A\nEOF\nexport A=1\nbash f.sh\n",  # unset when written
    'echo "python train.py --fp8 $A" > f\nexport A=1\nbash f\n',
])
def test_what_was_unknown_when_written_stays_unknown(text: str) -> None:
    launch = _launch(kept_text(text))
    assert launch is not None and launch.args[1].opaque is not None


@pytest.mark.parametrize("text", [
    "cat > cfg.yaml <<EOF\npython train.py --fp8 1\nEOF\ncat cfg.yaml\n",     # never run
    "cat > f.sh <<EOF\npython train.py --fp8 1\nEOF\n",
    "cat > f.sh <<EOF\npython train.py --fp8 1\n",                            # never closed
    "cat > $(mktemp) <<EOF\npython train.py --fp8 1\nEOF\nbash f.sh\n",
])
def test_a_here_document_no_command_runs_stays_text(text: str) -> None:
    assert _launch(kept_text(text)) is None


def test_many_written_files_stay_bounded() -> None:
    text = "".join(f"cat > f{n}.sh <<EOF\nbash f{n + 1}.sh\nEOF\n" for n in range(300)) + \
        "bash f0.sh\n" + "".join(f"bash f{n}.sh\n" for n in range(300))
    before = cpu_seconds()
    assert launches(split(kept_text(text)), lambda w: bool(ENTRY.search(w))) == []
    assert cpu_seconds() - before < 40      # ~1 s quiet


def test_a_sourced_file_is_not_a_new_shell() -> None:
    # `source f` / `. ./f` runs in this shell: jobs/sourcing.py's, not followed here
    for run in ("source f.sh", ". ./f.sh", "source ./f.sh"):
        text = f"cat > f.sh <<EOF\npython train.py --fp8 1\nEOF\n{run}\n"
        assert _launch(kept_text(text)) is None, run
        assert _launch(f'echo "python train.py --fp8 1" > f.sh\n{run}\n') is None, run
