"""Attributes of objects the file builds (reading/pyprops.py): a ``@property`` of the file's class
returning a module-level table lookup, read where the launcher formats it -- miles' Kimi-K2
launcher (radixark/miles 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, scripts/run_kimi_k2.py:41-98,
:158-159, :226-235; held-out set 13), reduced --, a dataclass's ``self.x`` (its calls, its
``__post_init__``), ``self.x = None`` as a value (redteam8: ``instance_attr`` gave None for "not
set" too), and redteam8's two Python readings: an import after an assignment (or a class after
an import) rebinds the name, and the job's own ``class DelayedScaling`` is no TE recipe. Each
failed before."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, Unresolved, parse

_KIMI = '''
    from dataclasses import dataclass
    from typing import Literal

    import typer

    import miles.utils.external_utils.command_utils as U

    _MODEL_NAMES = Literal["Kimi-K2-Instruct", "Kimi-K2-Thinking"]


    @dataclass(frozen=True)
    class _Recipe:
        megatron_model_type: str
        hf_checkpoint: str
        use_tis: bool


    _RECIPES: dict[str, _Recipe] = {
        "Kimi-K2-Instruct": _Recipe(
            megatron_model_type="kimi-k2",
            hf_checkpoint="Kimi-K2-Instruct",
            use_tis=False,
        ),
        "Kimi-K2-Thinking": _Recipe(
            megatron_model_type="kimi-k2-thinking",
            hf_checkpoint="Kimi-K2-Thinking-fp8",
            use_tis=True,
        ),
    }


    @dataclass
    class ScriptArgs(U.ExecuteTrainConfig):
        model_name: _MODEL_NAMES = "Kimi-K2-Instruct"
        num_gpus_per_node: int = 8
        model_dir: str = "/root/models"

        @property
        def recipe(self) -> _Recipe:
            return _RECIPES[self.model_name]


    def execute(args: ScriptArgs):
        recipe = args.recipe
        ckpt_args = f"--hf-checkpoint {args.model_dir}/{recipe.hf_checkpoint} "
        grpo_args = "--advantage-estimator grpo "
        if recipe.use_tis:
            grpo_args += "--use-tis "
        sglang_args = "--rollout-num-gpus-per-engine 16 "
        train_args = f"{ckpt_args} {grpo_args} {sglang_args} "
        U.execute_train(
            train_args=train_args,
            config=args,
            num_gpus_per_node=args.num_gpus_per_node,
            megatron_model_type=recipe.megatron_model_type,
        )


    @U.dataclass_cli
    def main(args: ScriptArgs):
        execute(args)


    if __name__ == "__main__":
        typer.run(main)
'''


def _facts(tmp_path: Path, line: str, script: str = _KIMI) -> tuple[dict[str, Any], Any]:
    (tmp_path / "scripts").mkdir(exist_ok=True)
    (tmp_path / "scripts" / "run_kimi_k2.py").write_text(textwrap.dedent(script))
    (tmp_path / "run.sh").write_text(line + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return dict(read.facts), values


def test_the_property_reads_the_table_entry_the_launch_line_picks(tmp_path: Path) -> None:
    facts, values = _facts(tmp_path, "MILES_SCRIPT_EXTERNAL_RAY=1 python scripts/run_kimi_k2.py "
                           "--model-name Kimi-K2-Thinking")
    assert facts["config.slime.hf_checkpoint"] == "/root/models/Kimi-K2-Thinking-fp8"
    assert values["intent.rollout.fp8"] is True
    assert values["intent.rollout.is_correction"] is True


def test_the_default_entry_is_bf16(tmp_path: Path) -> None:
    facts, values = _facts(tmp_path, "python scripts/run_kimi_k2.py")
    assert facts["config.slime.hf_checkpoint"] == "/root/models/Kimi-K2-Instruct"
    assert values["intent.rollout.is_correction"] is not True


def _record(script: str) -> Any:
    m = Module("x.py", parse("x.py", textwrap.dedent(script)), ())
    return next(c for c, _ in m.calls() if c.name == "record").args[0]


_PROP = '''
    TABLE = {"a": "fp8", "b": "bf16"}

    class Cfg:
        def __init__(self, name):
            self.name = name

        @property
        def precision(self):
            {body}

    record(Cfg(name="a").precision)
'''


def test_a_property_of_a_call_of_the_files_class() -> None:
    assert _record(_PROP.replace("{body}", "return TABLE[self.name]")) == "fp8"


# hostile variants


@pytest.mark.parametrize("body", [
    "raise RuntimeError('no')",                 # a property that raises: nothing returns
    "return self.precision",                    # itself
    "return Cfg(name=self.name).precision",     # a new instance of itself
    "return TABLE[self.missing]",
])
def test_a_property_that_does_not_give_a_value_is_unknown(body: str) -> None:
    assert isinstance(_record(_PROP.replace("{body}", body)), Unresolved)


def test_a_method_is_no_property() -> None:
    script = _PROP.replace("@property", "").replace("{body}", "return 'fp8'")
    assert isinstance(_record(script), Unresolved)


def test_a_rebound_property_name_is_not_the_builtin() -> None:
    script = "property = lambda f: f\n" + textwrap.dedent(_PROP).replace(
        "{body}", "return 'fp8'")
    assert isinstance(_record(script), Unresolved)


@pytest.mark.parametrize("table", [
    "{f'k{i}': 'fp8' for i in range(100_000)}",                       # built when it runs
    "{" + ", ".join(f"{i}: {i}" for i in range(10_000)) + ", 'a': 'fp8'}",   # too long
])
def test_a_huge_table_is_bounded(table: str) -> None:
    script = textwrap.dedent(_PROP).replace("{body}", "return TABLE[self.name]").replace(
        "TABLE = {\"a\": \"fp8\", \"b\": \"bf16\"}", "TABLE = " + table)
    assert isinstance(_record(script), Unresolved)


# dataclasses


_DC = '''
    from dataclasses import dataclass, field

    @dataclass
    class Handler:
        mode: str
        recipe: object = None
        layers: list = field(init=False, default_factory=list)
        enabled: bool = False

        def __post_init__(self):
            if self.mode == "none":
                return
            self.enabled = self.mode in ["fp8", "mxfp8"]
            if self.recipe is None:
                self.recipe = "default"

        def use(self):
            record((self.mode, self.enabled, self.recipe, self.layers))

    Handler(mode=MODE).use()
'''


@pytest.mark.parametrize("mode, values", [
    ('"fp8"', ("fp8", True, "default", [])),
    ('"none"', ("none", False, None, [])),
    ('"bf16"', ("bf16", False, "default", [])),
])
def test_a_dataclass_field_and_its_post_init(mode: str, values: tuple[Any, ...]) -> None:
    got = _record(_DC.replace("MODE", mode))
    assert got[:3] == list(values[:3])
    assert got[3] == [] or getattr(got[3], "func", "") == "builtins.list"


def test_a_field_set_again_in_a_method_is_unknown() -> None:
    script = _DC.replace('MODE', '"fp8"').replace(
        "    def use(self):", "    def flip(self):\n            self.enabled = False\n\n"
        "        def use(self):")
    assert isinstance(_record(script)[1], Unresolved)


def test_set_to_none_is_none_not_unset() -> None:
    script = '''
        import transformer_engine.pytorch as te

        class Model:
            def __init__(self):
                self.recipe = None

            def forward(self):
                record(self.recipe)

        Model().forward()
    '''
    assert _record(script) is None


# redteam8: names bind in statement order


def _intent(tmp_path: Path, script: str) -> dict[str, Any]:
    (tmp_path / "train.py").write_text(textwrap.dedent(script))
    read = read_paths([str(tmp_path / "train.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values


_TE = '''
    import torch
    {before}
    model = te.Linear(8, 8)
    with te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling()):
        model(torch.ones(8, 8))
'''


@pytest.mark.parametrize("before, fp8", [
    ("te = None\nimport transformer_engine.pytorch as te\n"
     "from transformer_engine.common.recipe import DelayedScaling", True),
    ("import transformer_engine.pytorch as te\nte = None\n"
     "from transformer_engine.common.recipe import DelayedScaling", None),
])
def test_an_import_after_an_assignment_rebinds_the_name(tmp_path: Path, before: str,
                                                        fp8: bool | None) -> None:
    got = _intent(tmp_path, _TE.replace("{before}", before.replace("\n", "\n    ")))
    assert (got["intent.fp8"] is True) == (fp8 is True)


def test_the_jobs_own_class_named_like_a_te_recipe_is_not_te(tmp_path: Path) -> None:
    own = ("import transformer_engine.pytorch as te\n"
           "from transformer_engine.common.recipe import DelayedScaling\n"
           "class DelayedScaling:\n    def __init__(self, margin=0):\n        self.margin = 0")
    got = _intent(tmp_path, _TE.replace("{before}", own.replace("\n", "\n    ")))
    assert isinstance(got["intent.recipe"], Unknown)
    te = own.split("class")[0]
    got = _intent(tmp_path, _TE.replace("{before}", te.replace("\n", "\n    ")))
    assert got["intent.recipe"] == "delayed"
