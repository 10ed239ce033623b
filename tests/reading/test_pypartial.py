"""``functools.partial(f, a, k=v)`` as the call of ``f`` it binds (reading/pypartial.py): the
bound arguments are known, the others are given where the partial is called and stay
Unresolved (miles scripts/run_deepseek.py at radixark/miles 31f1ca96:
``before_ray_job_submit=partial(_prepare_ray_dependent, args)``, holdout17)."""

from __future__ import annotations

import textwrap

from preflight.reading.pysource import Module, Unresolved, parse


def _module(src: str) -> Module:
    text = textwrap.dedent(src)
    return Module("train.py", parse("train.py", text), None, None, None)


def _kwargs(module: Module, name: str) -> list[dict[str, object]]:
    return [c.kwargs for c, _ in module.calls() if c.name == name]


def test_bound_arguments_are_known_others_are_not() -> None:
    m = _module("""
        from functools import partial
        from transformers import TrainingArguments
        def make(out, lr):
            TrainingArguments(output_dir=out, learning_rate=lr)
        def run(hook):
            hook(lr=1e-4)
        run(partial(make, "/ckpt"))
    """)
    got = _kwargs(m, "TrainingArguments")
    assert got and all(k["output_dir"] == "/ckpt" for k in got)
    assert all(isinstance(k["learning_rate"], Unresolved) for k in got)


def test_functools_dotted_and_keywords() -> None:
    m = _module("""
        import functools
        from transformers import TrainingArguments
        def make(out, bf16=False):
            TrainingArguments(output_dir=out, bf16=bf16)
        cb = functools.partial(make, out="/x", bf16=True)
    """)
    got = _kwargs(m, "TrainingArguments")
    assert got and all(k == {"output_dir": "/x", "bf16": True} for k in got)


def test_an_unrelated_partial_name_is_a_value() -> None:
    m = _module("""
        from transformers import TrainingArguments
        def partial(f, x):
            return f
        def make(out):
            TrainingArguments(output_dir=out)
        partial(make, "/x")
    """)
    got = _kwargs(m, "TrainingArguments")
    assert got and all(isinstance(k["output_dir"], Unresolved) for k in got)


def test_a_partial_of_a_call_or_with_star_args_binds_nothing_known() -> None:
    m = _module("""
        from functools import partial
        from transformers import TrainingArguments
        def make(out):
            TrainingArguments(output_dir=out)
        ARGS = ["/x"]
        cb = partial(make, *ARGS)
        cb2 = partial(lambda o: make(o), "/y")
    """)
    got = _kwargs(m, "TrainingArguments")
    assert all(isinstance(k["output_dir"], Unresolved) for k in got)



