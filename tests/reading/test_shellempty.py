"""A launch word that is only a variable the script never sets (reading/shellempty.py): read
as empty, as bash expands it when the caller sets nothing, and said: an FP8D-CFG-EMPTY-ASSUMED
info note naming the variable at its file:line, the launch's flags' provenance saying "assumes
$X is empty" (redteam18: `torchrun pretrain_gpt.py --bf16 $EXTRA_ARGS` dropped the word
silently, a confident "no" from what the tool did not see). Every path that reads launch words:
Megatron-family walks (megatron_walk: Megatron, finetrainers), the command-line readers
(launchpick: accelerate / HF flags), the override readers (overridelaunch: verl) and a Python
script's argv (jobs/scripts.py). Outcomes do not change: only the note is added."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.api import check
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from preflight.reading import shellempty

_MEG = "import megatron\n"
_HF = "from transformers import HfArgumentParser, TrainingArguments\n" \
      "p = HfArgumentParser(TrainingArguments)\n"
_PY = """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--use_fp8", action="store_true", default=True)
p.add_argument("--no_fp8", dest="use_fp8", action="store_false")
args = p.parse_args()
import transformer_engine.pytorch as te
with te.fp8_autocast(enabled=args.use_fp8):
    pass
"""
JOBS = {     # name -> (files, the launch line's number)
    "megatron": ({"pretrain_gpt.py": _MEG, "run.sh": (
        "#!/bin/bash\nGPUS=8\n"
        "torchrun --nproc_per_node $GPUS pretrain_gpt.py --bf16 --num-layers 2 $EXTRA_ARGS\n")},
        3),
    "accelerate": ({"train.py": _HF, "run.sh": (
        "#!/bin/bash\naccelerate launch train.py --bf16 True --output_dir x $EXTRA_ARGS\n")}, 2),
    "verl": ({"run.sh": ("#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n"
                         "  actor_rollout_ref.rollout.name=vllm ${EXTRA_ARGS}\n")}, 3),
    "python": ({"train.py": _PY, "run.sh": "#!/bin/bash\ntorchrun train.py $EXTRA_ARGS\n"}, 2),
}


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    return root / "run.sh"


def _notes(read: Any) -> list[Any]:
    return [p for p in read.problems if p.code == shellempty.CODE]


@pytest.mark.parametrize("name", sorted(JOBS))
def test_an_unset_launch_word_is_read_as_empty_and_said(tmp_path: Path, name: str) -> None:
    files, line = JOBS[name]
    run = _job(tmp_path, files)
    read = read_paths([str(run)])
    notes = _notes(read)
    assert [(n.path, n.line, n.level) for n in notes] == [(str(run), line, "info")]
    assert "$EXTRA_ARGS" in notes[0].message
    fired = {f.rule_id for f in check([str(run)], assume={"gpu": "H100"}).findings}
    assert "FP8D-CFG-EMPTY-ASSUMED" in fired


@pytest.mark.parametrize("name", sorted(JOBS))
def test_the_answer_is_what_it_was_only_the_note_is_added(tmp_path: Path, name: str) -> None:
    files, _ = JOBS[name]
    quiet = {k: v.replace("$EXTRA_ARGS", "").replace("${EXTRA_ARGS}", "")
             for k, v in files.items()}
    got = read_paths([str(_job(tmp_path / "a", files))])
    want = read_paths([str(_job(tmp_path / "b", quiet))])
    assert {k: repr(v).replace("/a/", "/") for k, v in got.facts.items()} == \
        {k: repr(v).replace("/b/", "/") for k, v in want.facts.items()}


def test_the_launchs_flags_say_the_assumption(tmp_path: Path) -> None:
    read = read_paths([str(_job(tmp_path, JOBS["megatron"][0]))])
    assert read.facts["config.megatron.bf16"] is True
    assert read.provenance["config.megatron.bf16"].endswith(
        "run.sh:3 (" + shellempty.assumption("EXTRA_ARGS") + ")")


def test_finetrainers_upcasting_from_an_unset_variable_says_so(tmp_path: Path) -> None:
    from tests.frameworks.test_finetrainers import _intent
    from tests.frameworks.test_finetrainers import _job as _ft_job
    values, read = _intent(_ft_job(tmp_path, upcast="$UPCAST_FLAGS"))
    assert values["fp8_weight_storage"][0] is False          # bash's reading, stated
    assert [(n.line, "$UPCAST_FLAGS" in n.message) for n in _notes(read)] == [(14, True)]


@pytest.mark.parametrize("setting", [
    'EXTRA_ARGS="--fp16"\n',              # the script sets it
    'EXTRA_ARGS=""\n',                    # to nothing, on purpose
    'EXTRA_ARGS=${EXTRA_ARGS:-}\n',        # a default the script gives
])
def test_a_variable_the_script_sets_is_no_assumption(tmp_path: Path, setting: str) -> None:
    files = dict(JOBS["megatron"][0])
    files["run.sh"] = files["run.sh"].replace("GPUS=8\n", "GPUS=8\n" + setting)
    assert not _notes(read_paths([str(_job(tmp_path, files))]))


def test_a_caller_that_sets_it_gives_its_value(tmp_path: Path) -> None:
    files = dict(JOBS["megatron"][0])
    files["outer.sh"] = "#!/bin/bash\nEXTRA_ARGS='--fp8-format hybrid' bash run.sh\n"
    run = _job(tmp_path, files)
    read = read_paths([str(run.parent / "outer.sh")])
    assert not _notes(read)
    assert read.facts.get("config.megatron.fp8_format") == "hybrid"


def test_a_word_from_an_undecided_branch_stays_unknown_without_an_assumption(
        tmp_path: Path) -> None:
    files = dict(JOBS["python"][0])
    files["run.sh"] = ('#!/bin/bash\nif [ -n "$X" ]; then E=--no_fp8; fi\n'
                       "torchrun train.py $E\n")
    read = read_paths([str(_job(tmp_path, files))])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert not _notes(read)


def test_many_unset_words_are_bounded_and_said_once_each(tmp_path: Path) -> None:
    words = " ".join(f"$V{n} $V{n}" for n in range(500))
    files = {"pretrain_gpt.py": _MEG,
             "run.sh": f"#!/bin/bash\ntorchrun pretrain_gpt.py --bf16 --num-layers 2 {words}\n"}
    read = read_paths([str(_job(tmp_path, files))])
    notes = _notes(read)
    assert 1 <= len(notes) <= shellempty.MAX_NOTES * 2
    assert len({n.message for n in notes}) == len(notes)
    assert read.facts["config.megatron.bf16"] is True


def test_an_unset_value_of_an_option_is_no_word_read_as_empty(tmp_path: Path) -> None:
    files = {"train.py": _HF, "run.sh": (
        "#!/bin/bash\naccelerate launch --num_machines $NUM_NODES --machine_rank $RANK "
        "train.py --bf16 True --output_dir $OUT\n")}
    assert not _notes(read_paths([str(_job(tmp_path, files))]))


def test_a_script_that_sources_a_file_does_not_say_never_set(tmp_path: Path) -> None:
    files = dict(JOBS["megatron"][0])
    files["run.sh"] = files["run.sh"].replace("GPUS=8\n", "GPUS=8\nsource ./model.sh\n")
    notes = _notes(read_paths([str(_job(tmp_path, files))]))
    assert len(notes) == 1 and "never sets" not in notes[0].message
