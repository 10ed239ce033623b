"""python-fire ``fire.Fire(...)`` (reading/pyfire.py): launch-line words bound to the
component's parameters as python-fire v0.7.1 (8ea2f631) binds them (fire/core.py:111-132
command and context, :446-452 the ``-`` separator, :503-555 dict keys and class members,
:757-813 _ParseArgs, :816-933 _ParseKeywordArgs; parser.py SeparateFlagArgs / DefaultParseValue;
decorators.py:94-95 positional words for routines only). The job is AMD's
pytorch-training-benchmark (AMD-AIG-AIMA/pytorch-training-benchmark 927d18fb, train_fsdp.py:55-65,
:163, :214; held-out set 18), reduced. Each failed before: ``enable_fp8`` was "a parameter of
train()", FP8 Unknown for the FP8 run and its BF16 control."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, Unresolved, parse

_TRAIN = '''
    import fire
    from contextlib import nullcontext
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import Format, DelayedScaling

    def train(config_file: str, model_name: str, batch_size: int = 1,
              enable_fp8: bool = False, enable_compile: bool = True, seed: int = 1024):
        if enable_fp8:
            enable_compile = False
        model = torch.nn.Linear(8, 8)
        if enable_compile:
            model = torch.compile(model)
        fp8_recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16,
                                    amax_compute_algo="max")
        for step in range(10):
            fp8_context = nullcontext() if not enable_fp8 else te.fp8_autocast(
                enabled=enable_fp8, fp8_recipe=fp8_recipe)
            with torch.amp.autocast('cuda', torch.bfloat16), fp8_context:
                model(torch.randn(8, 8)).sum().backward()

    if __name__ == '__main__':
        fire.Fire(train)
'''


def _intent(tmp_path: Path, flags: str, script: str = _TRAIN) -> dict[str, Any]:
    (tmp_path / "train_fsdp.py").write_text(textwrap.dedent(script))
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=8 ./train_fsdp.py "
                                     f"configs/mistral.json mistral {flags}\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}


@pytest.mark.parametrize("flags", [
    "--batch_size 4 --enable_fp8 True",      # the README's MI300 FP8 line
    "--enable_fp8", "--enable-fp8", "--enable_fp8=True",
    "--batch_size 4 --enable_fp8 False --enable_fp8 True",                   # the last wins
])
def test_the_launch_lines_flag_reaches_the_function(tmp_path: Path, flags: str) -> None:
    intent = _intent(tmp_path, flags)
    assert intent["fp8"] is True and intent["backend"] == "te"


@pytest.mark.parametrize("flags", ["", "--batch_size 4", "--enable_fp8 False", "--noenable_fp8",
                                   "--enable_fp8 True --noenable_fp8"])
def test_no_fp8_flag_is_no_fp8(tmp_path: Path, flags: str) -> None:
    assert _intent(tmp_path, flags)["fp8"] is False


def _record(script: str, *argv: str) -> tuple[Any, ...]:
    m = Module("x.py", parse("x.py", textwrap.dedent(script)), tuple(argv))
    return next(c for c, _ in m.calls() if c.name == "record").args


_TYPES = '''
    import fire

    def main(config, name, steps: int = 5, use_fp8: bool = False, lr=0.1):
        record(config, name, steps, use_fp8, lr)

    fire.Fire(main)
'''


@pytest.mark.parametrize("argv, values", [
    (("c.json", "m"), ("c.json", "m", 5, False, 0.1)),
    (("c.json", "m", "--steps", "7", "--use_fp8", "True"), ("c.json", "m", 7, True, 0.1)),
    (("--use-fp8", "--steps=3", "c.json", "m"), ("c.json", "m", 3, True, 0.1)),
    (("c.json", "m", "--use_fp8=true", "--lr", "1e-3"), ("c.json", "m", 5, "true", 0.001)),
    (("c.json", "m", "--nouse_fp8", "--steps", "x"), ("c.json", "m", "x", False, 0.1)),
    (("c.json", "m", "-u", "-l", "2"), ("c.json", "m", 5, True, 2)),        # shortcut flags
    (("--config", "3", "--name", "[1, a]"), (3, "m", 5, False, 0.1)[:1] + ([1, "a"], 5,
                                                                          False, 0.1)),
    (("c.json", "m", "--use_fp8", "True", "-", "--steps", "9"), ("c.json", "m", 5, True, 0.1)),
    (("c.json", "m", "7", "None"), ("c.json", "m", 7, None, 0.1)),
    (("c.json", "m", "--use_fp8", "True", "--", "--verbose"), ("c.json", "m", 5, True, 0.1)),
])
def test_values_as_python_fire_parses_them(argv: tuple[str, ...],
                                            values: tuple[Any, ...]) -> None:
    assert _record(_TYPES, *argv) == values


@pytest.mark.parametrize("argv, bad", [
    (("c.json",), 1),                           # no value for the required `name`
    (("c.json", "m", "--help"), 0),
    (("c.json", "m", "--", "--help"), 0),
    (("c.json", "m", "--use_fp8", "$(cat flag)"), 3),
])
def test_refused_or_unknown_words_leave_the_parameters_unknown(argv: tuple[str, ...],
                                                               bad: int) -> None:
    assert isinstance(_record(_TYPES, *argv)[bad], Unresolved)


def test_an_ambiguous_shortcut_is_refused() -> None:
    script = '''
        import fire
        def main(steps=1, seed=2):
            record(steps)
        fire.Fire(main)
    '''
    assert isinstance(_record(script, "-s", "3")[0], Unresolved)
    assert _record(script, "--seed", "3") == (1,)


_CLASS = '''
    import fire
    class Trainer:
        def __init__(self, fp8=False):
            record(fp8)
        def train(self, steps=1):
            record(steps)
        def evaluate(self, steps=2):
            pass
    fire.Fire(Trainer)
'''


def test_a_class_takes_flags_then_the_method_its_words() -> None:
    m = Module("x.py", parse("x.py", textwrap.dedent(_CLASS)),
               ("train", "--fp8", "--steps", "3"))
    got = [c.args[0] for c, _ in m.calls() if c.name == "record"]
    assert got == [True, 3]
    m = Module("x.py", parse("x.py", textwrap.dedent(_CLASS)), ("evaluate", "--steps", "3"))
    got = [c.args[0] for c, _ in m.calls() if c.name == "record"]
    assert got[0] is False and isinstance(got[1], Unresolved)       # train() is not run


@pytest.mark.parametrize("call", ['fire.Fire({"train": train, "eval": evaluate})', "fire.Fire()"])
def test_a_dict_or_the_module_takes_the_first_word_as_the_command(call: str) -> None:
    script = f'''
        import fire
        def train(fp8=False):
            record(fp8)
        def evaluate(fp8=True):
            pass
        {call}
    '''
    assert _record(script, "train", "--fp8") == (True,)
    assert isinstance(_record(script, "eval", "--fp8")[0], Unresolved)
    assert isinstance(_record(script)[0], Unresolved)


def test_no_launch_line_leaves_it_unknown() -> None:
    m = Module("x.py", parse("x.py", textwrap.dedent(_TYPES)), None)
    got = next(c for c, _ in m.calls() if c.name == "record").args
    assert all(isinstance(v, Unresolved) for v in got)


def test_a_command_argument_replaces_the_launch_line() -> None:
    script = _TYPES.replace("fire.Fire(main)", 'fire.Fire(main, "c m --use_fp8")')
    assert _record(script, "x", "y") == ("c", "m", 5, True, 0.1)


# hostile variants


@pytest.mark.parametrize("call", ["fire.Fire(lambda fp8=False: record(fp8))",
                                  "fire.Fire(main); fire.Fire(main)", "fire.Fire(**OPTS)",
                                  "fire.Fire(main, command=ARGV)", "fire.Fire(make())"])
def test_what_is_not_followed_stays_unknown(call: str) -> None:
    script = f'''
        import fire
        def main(fp8=False):
            record(fp8)
        {call}
    '''
    assert isinstance(_record(script, "--fp8", "True")[0], Unresolved)


def test_a_fire_of_a_name_from_outside_the_job_binds_nothing_here() -> None:
    script = '''
        import fire
        from somewhere_else import train
        def main(fp8=False):
            record(fp8)
        main(fp8=False)
        fire.Fire(train)
    '''
    assert _record(script, "--fp8", "True") == (False,)     # main's own call, not the line


def test_a_fire_that_never_runs_binds_nothing() -> None:
    script = '''
        import fire
        def main(fp8=False):
            record(fp8)
        main(fp8=False)
        if False:
            fire.Fire(main)
    '''
    assert _record(script, "--fp8", "True") == (False,)


def test_a_huge_dict_and_a_huge_line_are_bounded() -> None:
    entries = ", ".join(f'"c{i}": main' for i in range(5_000))
    script = f'''
        import fire
        def main(fp8=False):
            record(fp8)
        fire.Fire({{{entries}}})
    '''
    assert isinstance(_record(script, "c1", "--fp8")[0], Unresolved)
    got = _record(_TYPES, "c", "m", *[w for i in range(5000) for w in ("--steps", str(i))])
    assert isinstance(got[2], Unresolved)


def test_a_deep_value_and_recursion_are_bounded() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    got = _record(_TYPES, "c", "m", "--use_fp8", deep)
    assert isinstance(got[3], (Unresolved, str))
    script = '''
        import fire
        def main(fp8=False, n=3):
            record(fp8)
            if n:
                main(fp8, n - 1)
        fire.Fire(main)
    '''
    assert _record(script, "--fp8") in ((True,), ) or isinstance(
        _record(script, "--fp8")[0], Unresolved)
