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
    ("x = 1\nfor i in range(3):\n    x = 2\nf(a=x)\n", "inside a loop"),
    ("import os\nif os.environ.get('B'):\n    x = True\nf(a=x)\n", "does not decide"),
    ("x = 1\ntry:\n    pass\nexcept OSError:\n    x = 2\nf(a=x)\n", "except"),
    ("a, x = g()\nf(a=x)\n", "unpacked"),
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
    result = m.result(m.functions["fast"][1])
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


# -- conditions (issue 22 item 5): a value set under a condition is that branch's only where
# the text decides the condition; otherwise Unresolved with the condition, never "not set".

_BRANCH = """
    import argparse
    from accelerate.utils import AORecipeKwargs
    p = argparse.ArgumentParser()
    p.add_argument("--precision", type=str, default="fp8", choices=["fp8", "bf16"])
    args = p.parse_args()
    kwargs = []
    if args.precision == "fp8":
        kwargs = [AORecipeKwargs()]
    f(handlers=kwargs)
"""


@pytest.mark.parametrize("argv, handlers", [
    (("--precision", "fp8"), ["AORecipeKwargs"]),
    (("--precision=bf16",), []),
    ((), ["AORecipeKwargs"]),                  # a launch line without it: argparse's default
])
def test_a_branch_the_launch_line_decides_gives_its_value(argv: tuple[str, ...],
                                                          handlers: list[str]) -> None:
    # huggingface/accelerate 638759bb examples/torch_native_parallelism/fsdp2_fp8.py
    value = _call(_module(_BRANCH, argv), "f").kwargs["handlers"]
    assert [h.name for h in value] == handlers


def test_a_branch_nothing_decides_is_unresolved_with_the_condition() -> None:
    value = _call(_module(_BRANCH, None), "f").kwargs["handlers"]
    assert isinstance(value, Unresolved)
    assert "args.precision == 'fp8'" in value.reason and "--precision" in value.reason
    assert "line 7" in value.reason              # the value it keeps otherwise


def test_if_elif_else_and_boolean_tests_are_decided_in_order() -> None:
    src = """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--mode", default="a")
        p.add_argument("--fp8", action="store_true")
        args = p.parse_args()
        if args.mode == "a" and not args.fp8:
            x = 1
        elif args.mode in ("b", "c") or args.fp8:
            x = 2
        else:
            x = 3
        f(a=x, b=args.mode != "a", c=None if args.fp8 else "off")
    """
    assert _call(_module(src, ()), "f").kwargs == {"a": 1, "b": False, "c": "off"}
    assert _call(_module(src, ("--fp8",)), "f").kwargs == {"a": 2, "b": False, "c": None}
    assert _call(_module(src, ("--mode", "z")), "f").kwargs["a"] == 3


def test_calls_in_a_branch_that_does_not_run_are_not_made() -> None:
    src = """
        import argparse
        from accelerate import Accelerator
        p = argparse.ArgumentParser()
        p.add_argument("--precision", default="bf16")
        args = p.parse_args()
        if args.precision == "fp8":
            Accelerator(mixed_precision="fp8")
        else:
            Accelerator(mixed_precision="bf16")
    """
    made = [c for c, _ in _module(src, ()).calls() if c.name == "Accelerator"]
    assert [(c.kwargs["mixed_precision"], c.when) for c in made] == [("bf16", None)]
    both = [c for c, _ in _module(src, None).calls() if c.name == "Accelerator"]
    assert len(both) == 2 and all(isinstance(c.when, Unresolved) for c in both)
    assert "--precision" in both[0].when.reason


def test_early_returns_loops_and_handlers() -> None:
    src = """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--fp8", action="store_true")
        args = p.parse_args()
        def setup(model):
            if not args.fp8:
                return model
            convert(model)
            return model
        def hook(self):
            if self.model is not None:
                return
            prepare(self)
        for step in range(10):
            train_step()
        try:
            import transformer_engine
        except ImportError:
            fallback()
    """
    def made(m: Module) -> dict[str, Unresolved | None]:
        return {c.name: c.when for c, _ in m.calls()}
    assert "convert" not in made(_module(src, ()))          # --fp8 not given: it returns
    assert made(_module(src, ("--fp8",)))["convert"] is None
    alone = made(_module(src, None))
    # undecided early exits and loop bodies count as running; an except handler does not
    assert alone["convert"] is None and alone["prepare"] is None
    assert alone["train_step"] is None
    assert isinstance(alone["fallback"], Unresolved) and "except" in alone["fallback"].reason


def test_a_function_returns_the_branch_its_arguments_decide() -> None:
    # the shape of huggingface/trl v1.9.0 trl/scripts/sft.py make_parser()
    m = _module("""
        from trl import SFTConfig, TrlParser
        def make_parser(subparsers=None):
            if subparsers is not None:
                parser = subparsers.add_parser("sft", dataclass_types=(SFTConfig,))
            else:
                parser = TrlParser((SFTConfig,))
            return parser
        def pick(fast):
            if fast:
                return 1
            return 2
        parser = make_parser()
        f(a=pick(True), b=pick(False), c=pick(unknown))
    """)
    parsers = [c for c, _ in m.calls() if c.name == "TrlParser"]
    # decided through the call: make_parser() passes no subparsers, so the default None (in its
    # body and in its inlined result alike); the add_parser branch does not run
    assert parsers and all(p.when is None for p in parsers)
    assert not [c for c, _ in m.calls() if c.name == "add_parser"]
    call = _call(m, "f")
    assert call.kwargs["a"] == 1 and call.kwargs["b"] == 2
    assert isinstance(call.kwargs["c"], Unresolved)


def test_names_in_order_and_conditions_that_refer_to_themselves() -> None:
    m = _module("""
        x = 1
        f(a=x)
        x = 2
        f2(a=x)
        if y:
            y = 1
        g(a=y)
    """)
    assert _call(m, "f").kwargs["a"] == 1 and _call(m, "f2").kwargs["a"] == 2
    assert isinstance(_call(m, "g").kwargs["a"], Unresolved)


def test_a_chain_of_names_used_twice_is_worked_out_once() -> None:
    # without memoising, a60 would take 2**48 evaluations (MAX_DEPTH) to refuse
    lines = ["a0 = 1"] + [f"a{i} = a{i - 1} + a{i - 1}" for i in range(1, 61)]
    m = _module("\n".join(lines) + "\nf(y=a60, x=a20)\n")
    call = _call(m, "f")
    assert call.kwargs["x"] == 2 ** 20
    assert isinstance(call.kwargs["y"], Unresolved)        # past MAX_DEPTH or 2**63


def test_a_long_test_over_many_calls_is_evaluated_and_quoted_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # hostile input: 5,000 calls under one 2,000-term test took 17 s when each call's guard
    # was evaluated and quoted again (counted here, not timed)
    from preflight.reading import pyguards

    quoted: list[object] = []
    real = pyguards.text
    monkeypatch.setattr(pyguards, "text", lambda test: quoted.append(test) or real(test))
    test = " + ".join(f"x{i}" for i in range(50))
    body = "\n".join(f"    f(a={i})" for i in range(300))
    m = _module(f"if {test}:\n{body}\n")
    made = [c for c, _ in m.calls() if c.name == "f"]
    assert len(made) == 300 and all(isinstance(c.when, Unresolved) for c in made)
    assert len(quoted) <= 2


# lightning-thunder thunder/benchmarks/benchmark_litgpt.py:88-96 @ 1e22aacb (reduced):
# LowPrecisionHandler.check_and_add_compile_options appends "_transformerengine" in place.
_THUNDER = '''
def add(compile_options, enabled):
    use_thunder_te = "thunder" in compile_options
    if enabled and use_thunder_te:
        compile_options += "_transformerengine"
    return compile_options
compile = add({arg}, {enabled})
run(compile)
'''


@pytest.mark.parametrize(("arg", "enabled", "want"), [
    ('"thunder"', "True", "thunder_transformerengine"),
    ('"thunder"', "False", "thunder"),
    ('"eager"', "True", "eager"),
])
def test_a_string_grown_in_place_is_the_joined_string(arg: str, enabled: str, want: str) -> None:
    got = _call(_module(_THUNDER.format(arg=arg, enabled=enabled)), "run").args[0]
    assert got == want


@pytest.mark.parametrize("src", [
    "x = 'a'\nx += y_unknown\nrun(x)\n",               # what is added is not known
    "x = 1\nx += 'a'\nrun(x)\n",                      # not two strings: unknown, no guess
    "x = 'a' * 40000\nx += x\nx += x\nrun(x)\n",       # past MAX_TEXT
    "x = 'a'\nfor i in range(3):\n    x += 'b'\nrun(x)\n",  # in a loop
    # eval16 (holdout15, unsloth's GRPO notebook): a module counter a function grows through
    # `global` recursed without end and the valid file was reported unreadable
    "N = 0\ndef f():\n    global N\n    N += 1\n    run(N)\n",
    "S = 'a'\ndef f():\n    global S\n    S += 'b'\n    run(S)\nf()\nf()\n",
    "def f():\n    while True:\n        x += 'b'\n        run(x)\n",
    "class C:\n    def f(self):\n        global T\n        T += 'x'\n        run(T)\nT = 'a'\n",
])
def test_a_string_grown_in_place_stays_unknown_when_the_text_does_not_say(src: str) -> None:
    got = _call(_module(src), "run").args[0]
    assert isinstance(got, Unresolved)
