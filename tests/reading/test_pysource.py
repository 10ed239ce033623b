"""Python job files by their syntax tree (issue 22 item 1): what a call's arguments resolve to,
what stays Unresolved and why, and hostile files that must be refused, never run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from preflight.reading.parse import ParseError
from preflight.reading.pysource import MAX_BYTES, Call, Module, Ref, Unresolved, parse


def _module(src: str, argv: tuple[str, ...] | None = None) -> Module:
    text = textwrap.dedent(src)
    return Module("train.py", parse("train.py", text), argv)


def _call(module: Module, name: str) -> Call:
    found = [c for c, _ in module.calls() if c.name == name]
    assert len(found) == 1, [c.func for c, _ in module.calls()]
    return found[0]


def test_literals_names_and_kwargs_dicts_resolve_with_their_lines() -> None:
    m = _module("""
        from transformers import TrainingArguments as TA
        BF16 = True
        COMMON = {"output_dir": "out", "gradient_checkpointing": True}
        def main():
            steps = 8 * 2048
            args = TA(bf16=BF16, max_steps=steps,
                      **COMMON)
            args.torch_compile = True
        main()
    """)
    call = _call(m, "TrainingArguments")
    assert call.func == "transformers.TrainingArguments"
    assert call.kwargs == {"bf16": True, "max_steps": 16384, "output_dir": "out",
                           "gradient_checkpointing": True, "torch_compile": True}
    assert call.lines["bf16"] == 7 and call.lines["output_dir"] == 8
    assert call.lines["torch_compile"] == 9


@pytest.mark.parametrize("src, why", [
    ("x = 1\nx = 2\nf(a=x)\n", "set more than once"),
    ("import os\nif os.environ.get('B'):\n    x = True\nf(a=x)\n", "set conditionally"),
    ("def g(p):\n    f(a=p)\n", "parameter of g()"),
    ("f(a=undefined_name)\n", "not defined in this file"),
    ("f(a=1 if c else 2)\n", "condition"),
    ("f(a=g())\n", "g()"),
])
def test_what_the_text_does_not_give_is_unresolved_with_the_reason(src: str, why: str) -> None:
    call = _call(_module(src), "f")
    value = call.kwargs["a"]
    assert isinstance(value, Unresolved) or (isinstance(value, Call) and why == "g()")
    if isinstance(value, Unresolved):
        assert why in value.reason


def test_an_unresolved_double_star_marks_every_keyword_as_maybe_set() -> None:
    call = _call(_module("def h(cfg):\n    f(a=1, **cfg)\n"), "f")
    assert call.value("a") == 1
    assert isinstance(call.value("b"), Unresolved) and "**" in call.value("b").reason


def test_argparse_options_take_the_launch_line_or_their_default() -> None:
    src = """
        import argparse
        from transformers import TrainingArguments
        def cli():
            p = argparse.ArgumentParser()
            p.add_argument("--bf16", action="store_true")
            p.add_argument("--seq-len", type=int, default=2048)
            return p.parse_args()
        args = cli()
        TrainingArguments(bf16=args.bf16, max_seq_length=args.seq_len)
    """
    launched = _call(_module(src, ("--bf16", "--seq-len", "4096")), "TrainingArguments")
    assert launched.kwargs["bf16"] is True and launched.kwargs["max_seq_length"] == 4096
    default = _call(_module(src, ()), "TrainingArguments")
    assert default.kwargs["bf16"] is False and default.kwargs["max_seq_length"] == 2048
    alone = _call(_module(src, None), "TrainingArguments")
    assert isinstance(alone.kwargs["bf16"], Unresolved)
    assert "--bf16" in alone.kwargs["bf16"].reason and "launch line" in alone.kwargs["bf16"].reason


def test_own_functions_are_inlined_and_later_attribute_sets_apply() -> None:
    # the torchtitan config_registry.py shape (pytorch/torchtitan b5bcd76, models/llama3)
    m = _module("""
        from torchtitan.trainer import Trainer
        from torchtitan.config import CompileConfig, ParallelismConfig
        def base() -> Trainer.Config:
            return Trainer.Config(parallelism=ParallelismConfig(tensor_parallel_degree=8))
        def fast() -> Trainer.Config:
            config = base()
            config.compile = CompileConfig(enable=True, components=["model"])
            config.parallelism.context_parallel_degree = 2
            return config
    """)
    result = m.evaluate(m.functions["fast"][1].returns[0], m.functions["fast"][1])
    assert isinstance(result, Call) and result.func == "torchtitan.trainer.Trainer.Config"
    compile_ = result.kwargs["compile"]
    assert isinstance(compile_, Call) and compile_.kwargs == {"enable": True,
                                                              "components": ["model"]}
    parallel = result.kwargs["parallelism"]
    assert isinstance(parallel, Call)
    assert parallel.kwargs == {"tensor_parallel_degree": 8, "context_parallel_degree": 2}


def test_imported_names_are_refs_and_own_subclasses_have_a_lineage() -> None:
    m = _module("""
        from transformer_engine.common.recipe import DelayedScaling, Format
        from trl import SFTConfig
        class MyArgs(SFTConfig):
            pass
        DelayedScaling(fp8_format=Format.HYBRID)
        MyArgs(bf16=True)
    """)
    assert _call(m, "DelayedScaling").kwargs["fp8_format"] == \
        Ref("transformer_engine.common.recipe.Format.HYBRID")
    mine = _call(m, "MyArgs")
    assert m.lineage(mine.func) == ("__main__.MyArgs", "trl.SFTConfig")


@pytest.mark.parametrize("src", [
    "x = " + "(" * 300 + "1" + ")" * 300,
    "x = " + "-" * 200_000 + "1",
    "x = " + "1+" * 150_000 + "1",
    "x = a" + ".b" * 120_000,
    "def f(:\n",
])
def test_hostile_nesting_and_broken_syntax_are_a_problem_with_no_crash(src: str) -> None:
    with pytest.raises(ParseError) as err:
        parse("train.py", src)
    assert err.value.code == "unreadable"


def test_a_deep_tree_python_accepts_is_walked_within_bounds() -> None:
    m = _module("f(a=" + "[" * 90 + "1" + "]" * 90 + ", b=" + "1 + " * 900 + "1)\n")
    call = _call(m, "f")
    assert isinstance(call.kwargs["a"], (list, Unresolved))
    assert call.kwargs["b"] == 901 or isinstance(call.kwargs["b"], Unresolved)


def test_a_file_over_the_size_cap_is_not_parsed() -> None:
    with pytest.raises(ParseError, match="not parsed"):
        parse("train.py", "x = 1\n" * (MAX_BYTES // 6 + 10))


def test_a_hostile_script_is_data_nothing_in_it_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(f"""
        import os
        exec("open({str(marker)!r}, 'w').write('x')")
        __import__("os").system("touch {marker}")
        from transformers import TrainingArguments
        TrainingArguments(bf16=True, output_dir=exec("1"))
    """))
    code = ("import sys; from preflight.jobs.read import read_paths; "
            f"r = read_paths([{str(script)!r}]); print(r.facts.get('config.hf_trainer.bf16'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "True"
    assert not marker.exists()
