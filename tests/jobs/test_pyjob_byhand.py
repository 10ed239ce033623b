"""A Python script the user names that no launch line read runs (preflight/jobs/pyjob.py,
``Module.by_hand``): read as ``python FILE.py`` runs it, each argparse option its default, with
an FP8D-CFG-RUNTIME-ARGS note naming the options so read (holdout20: yxanul/testing_dense
dcf75ff1 train_gated.py, ``--use_fp8`` default True, ``--no_fp8`` its off flag, l.351-354; the
model enters ``te.fp8_autocast(enabled=config.use_fp8)``). A launch line that runs it gives its
own arguments and no note; a script found in a folder, a module it imports, a required option
and an environment switch stay not known."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

TRAIN = """
import argparse
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_fp8", action="store_true", default={default},
                        help="Use FP8 (default: {default})")
    parser.add_argument("--no_fp8", dest="use_fp8", action="store_false")
    parser.add_argument("--batch_size", type=int, default=32)
    return parser.parse_args()


def main():
    args = parse_args()
    model = te.Linear(768, 768)
    opt = torch.optim.AdamW(model.parameters())
    recipe = DelayedScaling(fp8_format=Format.HYBRID)
    for step in range(10):
        with te.fp8_autocast(enabled=args.use_fp8, fp8_recipe=recipe):
            loss = model(torch.randn(args.batch_size, 768)).sum()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
"""


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def _read(*paths: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(p) for p in paths])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def _notes(read: Any) -> list[Any]:
    return [p for p in read.problems if p.code == "runtime_args"]


@pytest.mark.parametrize("default", [True, False])
def test_a_script_named_alone_takes_its_defaults_with_the_note(tmp_path: Path,
                                                               default: bool) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=default)})
    read, values = _read(root / "train.py")
    assert values["intent.fp8"] is default
    notes = _notes(read)
    assert len(notes) == 1 and notes[0].level == "info"
    assert notes[0].path.endswith("train.py")
    line = TRAIN.format(default=default).splitlines().index(
        '    parser.add_argument("--use_fp8", action="store_true", default='
        f'{default},') + 1
    assert notes[0].line == line and "--use_fp8" in notes[0].message


@pytest.mark.parametrize("launch, fp8", [
    ("torchrun --nproc_per_node 8 train.py --no_fp8\n", False),
    ("torchrun --nproc_per_node 8 train.py\n", True),
    ("torchrun --nproc_per_node 8 train.py --no_fp8 --use_fp8\n", True),
])
def test_a_launch_line_gives_its_own_arguments_and_no_note(tmp_path: Path, launch: str,
                                                            fp8: bool) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True), "run.sh": launch})
    read, values = _read(root / "run.sh")
    assert values["intent.fp8"] is fp8
    assert not _notes(read)


def test_a_value_only_the_run_knows_stays_unknown(tmp_path: Path) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True),
                           "run.sh": "torchrun train.py $FP8_FLAG\n"})
    _, values = _read(root / "run.sh")
    assert values["intent.fp8"] is True or isinstance(values["intent.fp8"], Unknown)
    root2 = _job(tmp_path / "b", {"train.py": TRAIN.format(default=True),
                                  "run.sh": "torchrun train.py ${FLAGS[@]}\n"})
    _, values2 = _read(root2 / "run.sh")
    assert isinstance(values2["intent.fp8"], Unknown)


def test_a_script_found_in_a_folder_is_not_read_as_run_by_hand(tmp_path: Path) -> None:
    # the folder's scripts are not the user's pick of an entry point: no default is assumed
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True)})
    read, values = _read(root)
    assert values["intent.fp8"] is not True
    assert not _notes(read)


def test_a_required_option_is_not_defaulted(tmp_path: Path) -> None:
    text = TRAIN.format(default=True).replace(
        'action="store_true", default=True,', 'type=int, required=True,').replace(
        '    parser.add_argument("--no_fp8", dest="use_fp8", action="store_false")\n', '')
    root = _job(tmp_path, {"train.py": text})
    _, values = _read(root / "train.py")
    assert isinstance(values["intent.fp8"], Unknown)
    assert "required" in values["intent.fp8"].reason


def test_an_imported_modules_own_options_are_not_defaulted(tmp_path: Path) -> None:
    # the module's parser is not the one the user's command line meets as written
    lib = TRAIN.format(default=True).replace('if __name__ == "__main__":\n    main()\n', "")
    root = _job(tmp_path, {"mylib/train_lib.py": lib,
                           "train.py": "from mylib.train_lib import main\nmain()\n"})
    read, values = _read(root / "train.py")
    assert values["intent.fp8"] is not True


def test_an_environment_switch_is_still_not_known_by_hand(tmp_path: Path) -> None:
    text = TRAIN.format(default=True).replace(
        "enabled=args.use_fp8", 'enabled=not os.environ.get("DISABLE_FP8", False)').replace(
        "import argparse\n", "import argparse\nimport os\n")
    root = _job(tmp_path, {"train.py": text})
    _, values = _read(root / "train.py")
    assert isinstance(values["intent.fp8"], Unknown)


def test_a_registry_entry_named_is_not_read_by_hand(tmp_path: Path) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True)})
    read, values = _read(Path(f"{root / 'train.py'}::main"))
    assert not _notes(read)


def test_a_launch_script_named_after_the_script_still_gives_its_arguments(
        tmp_path: Path) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True),
                           "run.sh": "torchrun train.py --no_fp8\n"})
    read, values = _read(root / "train.py", root / "run.sh")
    assert values["intent.fp8"] is False
    assert not _notes(read)


def test_the_launch_script_named_first_gives_its_arguments(tmp_path: Path) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True),
                           "run.sh": "torchrun train.py --no_fp8\n"})
    read, values = _read(root / "run.sh", root / "train.py")
    assert values["intent.fp8"] is False
    assert not _notes(read)
