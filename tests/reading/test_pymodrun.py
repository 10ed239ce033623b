"""Module launches (issue 22): which ``-m pkg.mod`` a launch line runs, with what argv, and the
file ``python -m`` runs from a folder, inside the job only. The nanochat line is
karpathy/nanochat runs/speedrun.sh:68 @ 92d63d4e; the launchers' own parsing as torch v2.10.0
torch/distributed/run.py (``-m/--module`` store_true, ``training_script`` then
``training_script_args`` nargs=REMAINDER: argparse strips the ``--`` after the script),
accelerate v1.6.0 commands/launch.py and deepspeed v0.16 launcher/runner.py (same shape)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight.reading.boundary import enforced
from preflight.reading.pymodrun import ModuleRun, in_job, locate_module, module_runs


def _runs(text: str, variables: dict[str, str] | None = None) -> list[tuple[str, tuple[str, ...]]]:
    return [(r.module, r.argv) for r in module_runs(text, variables or {})]


@pytest.mark.parametrize("line, module, argv", [
    # nanochat: torchrun's argparse takes the `--` after the module
    ("torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --fp8",
     "scripts.base_train", ("--depth=24", "--fp8")),
    ("python -m scripts.base_train --fp8", "scripts.base_train", ("--fp8",)),
    ("python3 -u -m pkg.train --lr 1", "pkg.train", ("--lr", "1")),
    ("python -mpkg.train --fp8", "pkg.train", ("--fp8",)),
    # python passes `--` on to the module (its own argparse then takes nothing after it)
    ("python -m pkg.train -- --fp8", "pkg.train", ("--", "--fp8")),
    ("python -m torch.distributed.run --nproc_per_node 8 -m pkg.train -- --fp8",
     "pkg.train", ("--fp8",)),
    ("accelerate launch --num_processes 8 -m pkg.train --fp8", "pkg.train", ("--fp8",)),
    ("deepspeed --num_gpus 8 --module pkg.train --fp8", "pkg.train", ("--fp8",)),
    ("uv run -m pkg.train --fp8", "pkg.train", ("--fp8",)),
    ("uv run python -m pkg.train --fp8", "pkg.train", ("--fp8",)),
    ("srun -N 2 torchrun -m pkg.train --fp8", "pkg.train", ("--fp8",)),
    # colossalai run (click, v0.5.0 cli/launcher/__init__.py L67): -m takes a value; the
    # launcher's options are its own wherever they stand; `--` ends them and is dropped
    ("colossalai run --nproc_per_node 8 -m pkg.train --fp8", "pkg.train", ("--fp8",)),
    ("colossalai run -mpkg.train --fp8", "pkg.train", ("--fp8",)),
    ("colossalai run -m pkg.train --nproc_per_node 4 --master_port=29501 --fp8", "pkg.train",
     ("--fp8",)),
    ("colossalai run --hostfile h -Hhost1 --include host1 -m pkg.train --lr 1", "pkg.train",
     ("--lr", "1")),
    ("colossalai run -m pkg.train -- --fp8 --nproc_per_node 2", "pkg.train",
     ("--fp8", "--nproc_per_node", "2")),
    # the last -m wins; a positional before it is the module's first argument
    ("colossalai run -m pkg.a x --fp8 -m pkg.b", "pkg.b", ("x", "--fp8")),
    ("srun -N 2 colossalai run --nproc_per_node 8 -m pkg.train --fp8", "pkg.train", ("--fp8",)),
])
def test_module_of_each_launcher(line: str, module: str, argv: tuple[str, ...]) -> None:
    assert _runs(line + "\n") == [(module, argv)]


@pytest.mark.parametrize("line", [
    "torchrun --nproc_per_node=8 train.py -m not.a.module",   # a script: python_scripts'
    "python -m ../../etc/passwd",
    "python -m /abs/path",
    "python -m pkg..mod",
    "python -m $UNSET_MODULE --fp8",
    "srun -m block:cyclic bash run.sh",                        # srun's --distribution
    "srun -m plane bash run.sh",
    "echo python -m pkg.train --fp8",                         # prints, runs nothing
    "torchrun -m --nproc_per_node 8 pkg.train",               # not decided: nothing guessed
    "colossalai run --nproc_per_node 8 train.py --fp8",       # a script: python_scripts'
    "colossalai run -m=pkg.train --fp8",                      # click's value is "=pkg.train"
    "colossalai run --nproc_per_node 8 -m",                   # click refuses it
    "colossalai run -m $UNSET_MODULE --fp8",
])
def test_not_a_module_run(line: str) -> None:
    assert _runs(line + "\n") == []


def test_variables_expand_the_module_and_its_arguments() -> None:
    got = module_runs('torchrun -m $MOD -- --run $RUN\n', {"MOD": "scripts.base_train",
                                                          "RUN": "d24"})
    assert got == [ModuleRun("scripts.base_train", ("--run", "d24"), got[0].pos)]


def test_continued_lines_and_several_launches() -> None:
    text = ("python -m nanochat.dataset -n 8\n"
            "torchrun --standalone -m scripts.base_train -- \\\n    --depth=$d \\\n    --fp8\n")
    assert _runs(text) == [("nanochat.dataset", ("-n", "8")),
                           ("scripts.base_train", ("--depth=$d", "--fp8"))]


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_found_as_python_finds_it(tmp_path: Path) -> None:
    _tree(tmp_path, {"scripts/base_train.py": "x = 1\n", "pkg/train/__init__.py": "",
                     "pkg/train/__main__.py": "y = 1\n", "ns/run/__main__.py": "z = 1\n",
                     "both/mod.py": "", "both/mod/__init__.py": "",
                     "both/mod/__main__.py": ""})
    root = str(tmp_path)
    with enforced([root]):
        assert locate_module("scripts.base_train", [root]).path == \
            os.path.join(root, "scripts", "base_train.py")
        assert locate_module("pkg.train", [root]).path == \
            os.path.join(root, "pkg", "train", "__main__.py")
        assert locate_module("ns.run", [root]).path == \
            os.path.join(root, "ns", "run", "__main__.py")       # a namespace package
        # a regular package wins over a module file of the same name (importlib's FileFinder)
        assert locate_module("both.mod", [root]).path == \
            os.path.join(root, "both", "mod", "__main__.py")
        assert locate_module("scripts.base_train", [root]).root == root


def test_a_package_without_main_is_not_run(tmp_path: Path) -> None:
    _tree(tmp_path, {"pkg/train/__init__.py": ""})
    with enforced([str(tmp_path)]):
        got = locate_module("pkg.train", [str(tmp_path)])
    assert got.path is None and got.why is not None and "pkg/train/__main__.py" in got.why


def test_first_folder_that_holds_it_wins(tmp_path: Path) -> None:
    _tree(tmp_path, {"runs/scripts/train.py": "a = 1\n", "scripts/train.py": "b = 1\n"})
    with enforced([str(tmp_path)]):
        got = locate_module("scripts.train", [str(tmp_path / "runs"), str(tmp_path)])
    assert got.path == str(tmp_path / "runs" / "scripts" / "train.py")


def test_a_link_out_of_the_job_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _tree(outside, {"secret.py": "fp8 = True\n"})
    job = tmp_path / "job"
    (job / "scripts").mkdir(parents=True)
    (job / "scripts" / "train.py").symlink_to(outside / "secret.py")
    with enforced([str(job)]):
        got = locate_module("scripts.train", [str(job)])
    assert got.path is None and got.outside == str(job / "scripts" / "train.py")


@pytest.mark.parametrize("name", ["..scripts.train", "scripts/train", "/etc/passwd", "a..b",
                                  "1pkg.train", "pkg.train.", ""])
def test_names_that_are_no_module(tmp_path: Path, name: str) -> None:
    with enforced([str(tmp_path)]):
        got = locate_module(name, [str(tmp_path)])
    assert got.path is None and got.why is not None


def test_in_job_tells_a_job_package_from_an_installed_one(tmp_path: Path) -> None:
    _tree(tmp_path, {"scripts/other.py": ""})
    with enforced([str(tmp_path)]):
        assert in_job("scripts.missing", [str(tmp_path)])
        assert not in_job("pip", [str(tmp_path)])
