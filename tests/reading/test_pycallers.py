"""Values carried between the functions of one Python file (issue 22): a parameter is what every
call of its function passes, ``self.x`` is what ``__init__`` sets, and an import inside a function
binds only in the branch that makes it; anything the text does not decide stays Unresolved."""

from __future__ import annotations

import textwrap

from preflight.reading.pysource import Call, Module, Unresolved, parse


def _module(src: str, argv: tuple[str, ...] | None = None,
            bindings: dict[str, list[Call]] | None = None) -> Module:
    text = textwrap.dedent(src)
    return Module("train.py", parse("train.py", text), argv, None, bindings)


def _calls(module: Module, name: str, scope: str | None = None) -> list[Call]:
    """The calls of ``name`` (in the function ``scope``: a call of a function that inlines it
    lists it once more, in the caller)."""
    return [c for c, s in module.calls() if c.name == name and scope in (None, s.name)]


def test_a_parameter_is_what_every_call_passes() -> None:
    m = _module("""
        from transformers import TrainingArguments
        def make(lr, bf16=True):
            return TrainingArguments(learning_rate=lr, bf16=bf16)
        def main():
            make(1e-4)
            make(1e-4, bf16=True)
    """)
    # the call in make()'s body (the two calls of make() inline it as well)
    calls = _calls(m, "TrainingArguments")
    assert len(calls) == 3
    assert all(c.kwargs == {"learning_rate": 1e-4, "bf16": True} for c in calls)


def test_different_values_or_a_function_used_as_a_value_stay_unknown() -> None:
    m = _module("""
        from transformers import TrainingArguments
        def make(bf16):
            return TrainingArguments(bf16=bf16)
        make(True)
        make(False)
    """)
    body = [c for c, scope in m.calls() if c.name == "TrainingArguments" and
            scope.name == "make"]
    bf16 = body[0].kwargs["bf16"]
    assert isinstance(bf16, Unresolved) and "different values" in bf16.reason
    m = _module("""
        from transformers import TrainingArguments
        def make(bf16):
            return TrainingArguments(bf16=bf16)
        make(True)
        register(make)          # called from elsewhere too, with anything
    """)
    body = [c for c, scope in m.calls() if c.name == "TrainingArguments" and
            scope.name == "make"]
    bf16 = body[0].kwargs["bf16"]
    assert isinstance(bf16, Unresolved) and "parameter" in bf16.reason


def test_a_parameter_a_launch_line_decides_through_an_object() -> None:
    # the TE Mixtral tutorial's shape (TransformerEngine docs/examples/te_mixtral @ 937c4de0):
    # an object's attributes set under `if args.x == ...`, handed to a helper
    src = """
        import argparse
        import transformer_engine.common.recipe as te_recipe
        class HP:
            def __init__(self):
                self.mixed_precision = "bf16"
        def build(hp):
            recipe = None
            if hp.mixed_precision == "mxfp8":
                recipe = te_recipe.MXFP8BlockScaling()
            return Model(recipe=recipe)
        def main():
            p = argparse.ArgumentParser()
            p.add_argument("--improvement", type=int, choices=(1, 3), default=1)
            args = p.parse_args()
            hp = HP()
            if args.improvement == 3:
                hp.mixed_precision = "mxfp8"
            build(hp)
    """
    (model,) = _calls(_module(src, ("--improvement", "3")), "Model", "build")
    assert isinstance(model.kwargs["recipe"], Call)
    assert model.kwargs["recipe"].name == "MXFP8BlockScaling"
    (model,) = _calls(_module(src, ("--improvement", "1")), "Model", "build")
    # the set under the test the launch line decides false is applied as not made (pyfix2:
    # pyshared._applied_sets), so HP's own "bf16" holds: no MXFP8 recipe
    assert model.kwargs["recipe"] is None


def test_self_attributes_from_init_and_the_calls_of_the_class() -> None:
    m = _module("""
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        class Model:
            def __init__(self, recipe=None):
                self._recipe = recipe
            def forward(self):
                return te.autocast(enabled=True, recipe=self._recipe)
        Model(recipe=DelayedScaling())
    """)
    (autocast,) = _calls(m, "autocast", "forward")
    assert isinstance(autocast.kwargs["recipe"], Call)
    m = _module("""
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        class Model:
            def __init__(self, recipe=None):
                self._recipe = recipe
            def reset(self):
                self._recipe = None
            def forward(self):
                return te.autocast(enabled=True, recipe=self._recipe)
        Model(recipe=DelayedScaling())
    """)
    (autocast,) = _calls(m, "autocast", "forward")
    recipe = autocast.kwargs["recipe"]
    assert isinstance(recipe, Unresolved) and "reset" in recipe.reason


def test_calls_from_another_file_bind_the_parameters() -> None:
    m = _module("""
        from accelerate import Accelerator
        def wrap(hp):
            mp = "bf16" if hp.te_fp8 else hp.mixed_precision
            return Accelerator(mixed_precision=mp)
        def run(hp):
            return wrap(hp)
        def unused(hp):
            return wrap(hp)
    """, bindings={"run": [Call("utils.run", 9, args=(Call("utils.HP", 3,
                                                         kwargs={"te_fp8": True}),))]})
    (acc,) = _calls(m, "Accelerator", "wrap")
    # unused() is called by no file of the job: its call of wrap() does not count
    assert acc.kwargs["mixed_precision"] == "bf16"


def test_an_import_inside_a_function_binds_in_its_branch() -> None:
    m = _module("""
        def build(fp8):
            if fp8:
                from model_fp8 import Net
            else:
                from model_bf16 import Net
            return Net()
        build(True)
    """)
    (net,) = _calls(m, "Net", "build")
    assert net.func == "model_fp8.Net"


MNIST = """
    import argparse
    import transformer_engine.pytorch as te
    def train(model, use_fp8):
        with te.autocast(enabled=use_fp8):
            model()
    def calibrate(model, fp8):
        with te.autocast(enabled=fp8, calibrating=True):
            model()
    def helper(model, fp8):
        calibrate(model, fp8)
    def unused(model, fp8):
        with te.autocast(enabled=fp8):
            model()
    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--use-fp8", action="store_true")
        p.add_argument("--use-fp8-infer", action="store_true")
        args = p.parse_args()
        train(None, args.use_fp8)
        if args.use_fp8_infer and not args.use_fp8:
            calibrate(None, args.use_fp8)
            helper(None, args.use_fp8)
    if __name__ == "__main__":
        main()
"""


def test_a_function_whose_every_call_is_in_a_branch_that_does_not_run_does_not_run() -> None:
    """TE's MNIST example with --use-fp8: calibrate() is called only under `if use_fp8_infer
    and not use_fp8`, so its autocast (whose fp8 made the job's FP8 unknown) is no call of the
    job; so is what only such a function calls. A function with no call in the file (a
    registry entry, an entry point called from elsewhere) still counts."""
    m = _module(MNIST, argv=("--use-fp8",))
    scopes = {s.name for c, s in m.calls() if c.name.endswith("autocast")}
    assert "train" in scopes and "unused" in scopes
    assert "calibrate" not in scopes
    assert all(c.kwargs.get("enabled") is True for c, s in m.calls()
               if c.name.endswith("autocast") and s.name == "train")


def test_the_same_function_runs_when_the_launch_line_takes_its_branch() -> None:
    m = _module(MNIST, argv=("--use-fp8-infer",))
    scopes = {s.name for c, s in m.calls() if c.name.endswith("autocast")}
    assert "calibrate" in scopes


def test_calls_that_reach_each_other_in_a_loop_are_not_decided_never_called() -> None:
    m = _module("""
        import transformer_engine.pytorch as te
        def a(n):
            with te.autocast(enabled=True):
                b(n)
        def b(n):
            a(n)
        if False:
            a(1)
    """)
    scopes = {s.name for c, s in m.calls() if c.name.endswith("autocast")}
    assert scopes == {"a"}          # a cycle: not decided, so a's code still counts
