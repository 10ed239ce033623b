"""A module-level object shared across the job's files (reading/pyshared.py): the entry script
sets its attributes, then calls a function of the module that defines it, which reads them
(holdout14: TE's te_llama tutorial, ``from utils import *``, ``hyperparams.mixed_precision =
"fp8"``, ``wrap_with_accelerator(model, hyperparams)`` -> ``Accelerator(mixed_precision=
hyperparams.mixed_precision, kwargs_handlers=[FP8RecipeKwargs(backend="te")] if ... == "fp8"
else None)`` was Unknown: "mixed_precision of HyperParameters() is not given in this file")."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

MP = "config.accelerate.mixed_precision"
HANDLERS = "config.accelerate.kwargs_handlers"

UTILS = """
from types import SimpleNamespace
from dataclasses import dataclass
from accelerate import Accelerator
from accelerate.utils.dataclasses import FP8RecipeKwargs


class HyperParameters:
    def __init__(self):
        self.mixed_precision = "bf16"
        self.batch_size = 8


@dataclass
class Settings:
    mixed_precision: str = "bf16"


hyperparams = HyperParameters()
ns = SimpleNamespace(mixed_precision="bf16")
cfg = {"mixed_precision": "bf16"}
settings = Settings()


def wrap(model, hyperparams):
    handlers = [FP8RecipeKwargs(backend="te")] if hyperparams.mixed_precision == "fp8" else None
    return Accelerator(mixed_precision=hyperparams.mixed_precision, kwargs_handlers=handlers)


def wrap_global(model):
    return Accelerator(mixed_precision=hyperparams.mixed_precision)


def _inner():
    return Accelerator(mixed_precision=hyperparams.mixed_precision)


def _middle():
    return _inner()


def wrap_deep(model):
    return _middle()


def wrap_ns(model):
    return Accelerator(mixed_precision=ns.mixed_precision)


def wrap_cfg(model):
    return Accelerator(mixed_precision=cfg["mixed_precision"])


def wrap_settings(model):
    return Accelerator(mixed_precision=settings.mixed_precision)
"""


def _job(tmp_path: Path, script: str, utils: str = UTILS, **more: str) -> str:
    (tmp_path / "train.py").write_text(textwrap.dedent(script))
    (tmp_path / "utils.py").write_text(textwrap.dedent(utils))
    for name, text in more.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return str(tmp_path / "train.py")


def _mp(tmp_path: Path, script: str, **kw: str) -> object:
    return read_paths([_job(tmp_path, script, **kw)]).facts.get(MP)


@pytest.mark.parametrize("imports,obj,call", [
    ("from utils import *", "hyperparams", "wrap(None, hyperparams)"),
    ("from utils import *", "hyperparams", "wrap_global(None)"),
    ("from utils import *", "hyperparams", "wrap_deep(None)"),
    ("from utils import hyperparams, wrap", "hyperparams", "wrap(None, hyperparams)"),
    ("from utils import hyperparams, wrap_deep", "hyperparams", "wrap_deep(None)"),
    ("import utils", "utils.hyperparams", "utils.wrap(None, utils.hyperparams)"),
    ("import utils", "utils.hyperparams", "utils.wrap_global(None)"),
    ("from utils import *", "ns", "wrap_ns(None)"),
    ("from utils import *", "settings", "wrap_settings(None)"),
])
def test_the_script_sets_it_before_the_call(tmp_path: Path, imports: str, obj: str,
                                            call: str) -> None:
    read = read_paths([_job(tmp_path, f"""
        {imports}
        {obj}.batch_size = 4
        {obj}.mixed_precision = "fp8"
        {call}
        """)])
    assert read.facts[MP] == "fp8"
    assert str(read.provenance[MP]).split(":")[0].endswith("utils.py")


def test_the_recipe_handler_chosen_by_the_shared_value(tmp_path: Path) -> None:
    facts = read_paths([_job(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        wrap(None, hyperparams)
        """)]).facts
    assert facts[HANDLERS] == ["FP8RecipeKwargs"]


def test_a_dict_item_set_by_the_script(tmp_path: Path) -> None:
    assert _mp(tmp_path, """
        from utils import *
        cfg["mixed_precision"] = "fp8"
        wrap_cfg(None)
        """) == "fp8"


@pytest.mark.parametrize("call", ["wrap(None, hyperparams)", "wrap_global(None)"])
def test_quiet_the_class_default_when_the_script_sets_nothing(tmp_path: Path, call: str) -> None:
    read = read_paths([_job(tmp_path, f"""
        from utils import *
        hyperparams.batch_size = 4
        {call}
        """)])
    assert read.facts[MP] == "bf16"
    assert HANDLERS not in read.facts


def test_quiet_the_bf16_control(tmp_path: Path) -> None:
    read = read_paths([_job(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "bf16"
        wrap(None, hyperparams)
        """)])
    assert read.facts[MP] == "bf16"
    assert HANDLERS not in read.facts


@pytest.mark.parametrize("call", ["wrap(None, hyperparams)", "wrap_global(None)",
                                  "wrap_deep(None)"])
def test_order_a_set_after_the_call_does_not_count(tmp_path: Path, call: str) -> None:
    assert _mp(tmp_path, f"""
        from utils import *
        {call}
        hyperparams.mixed_precision = "fp8"
        """) == "bf16"


def test_order_the_last_set_before_the_call_wins(tmp_path: Path) -> None:
    assert _mp(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        hyperparams.mixed_precision = "bf16"
        wrap(None, hyperparams)
        """) == "bf16"


def test_order_a_global_read_differs_between_two_calls(tmp_path: Path) -> None:
    """The module's functions read the global at either call: which one builds the
    Accelerator the text does not follow apart, so it is Unknown, never the first."""
    got = _mp(tmp_path, """
        from utils import *
        wrap_global(None)
        hyperparams.mixed_precision = "fp8"
        wrap_ns(None)
        """)
    assert isinstance(got, Unknown)


@pytest.mark.parametrize("call", ["wrap(None, hyperparams)", "wrap_global(None)"])
def test_branches_a_set_under_an_undecided_test_is_unknown(tmp_path: Path, call: str) -> None:
    got = _mp(tmp_path, f"""
        import os
        from utils import *
        if os.environ.get("USE_FP8"):
            hyperparams.mixed_precision = "fp8"
        {call}
        """)
    assert isinstance(got, Unknown)


def test_branches_a_set_in_a_branch_that_does_not_run(tmp_path: Path) -> None:
    assert _mp(tmp_path, """
        from utils import *
        if False:
            hyperparams.mixed_precision = "fp8"
        wrap(None, hyperparams)
        """) == "bf16"


def test_a_set_inside_the_calling_function(tmp_path: Path) -> None:
    assert _mp(tmp_path, """
        from utils import *
        def main():
            hyperparams.mixed_precision = "fp8"
            wrap_global(None)
        main()
        """) == "fp8"


def test_all_limits_the_star_import(tmp_path: Path) -> None:
    """``hyperparams`` is not in ``__all__``: the script's name is not the module's object
    (the script would stop with NameError), so FP8 is never read from it."""
    got = _mp(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        wrap_global(None)
        """, utils=UTILS + '\n__all__ = ["wrap_global"]\n')
    assert got != "fp8"


def test_a_module_function_that_sets_the_attribute_leaves_the_default_unknown(
        tmp_path: Path) -> None:
    got = _mp(tmp_path, """
        from utils import *
        prepare()
        wrap(None, hyperparams)
        """, utils=UTILS + '\ndef prepare():\n    hyperparams.mixed_precision = "fp8"\n')
    assert got != "bf16"


# -- hostile --------------------------------------------------------------------------------

def test_hostile_cyclic_imports(tmp_path: Path) -> None:
    read = read_paths([_job(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        wrap_global(None)
        """, utils="from train import *\n" + UTILS)])
    assert read.facts[MP] == "fp8"


def test_hostile_a_star_import_of_a_huge_module(tmp_path: Path) -> None:
    huge = UTILS + "".join(f"n{i} = {i}\n" for i in range(1_500)) + \
        "".join(f"def f{i}(x):\n    return x\n" for i in range(300))
    assert _mp(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        wrap_global(None)
        """, utils=huge) == "fp8"


def test_hostile_more_changed_names_than_followed_is_never_the_default(tmp_path: Path) -> None:
    """Past pyshared.MAX_SHARED names the script changes, the module's own value is not
    what its functions see: Unknown, never "bf16"."""
    many = UTILS + "".join(f"n{i} = {i}\n" for i in range(100))
    sets = "".join(f"n{i}.x = {i}\n" for i in range(100))
    got = _mp(tmp_path, "from utils import *\n" + sets +
              'hyperparams.mixed_precision = "fp8"\nwrap_global(None)\n', utils=many)
    assert isinstance(got, Unknown)


def test_hostile_a_module_over_the_parse_limit_is_named_not_read(tmp_path: Path) -> None:
    huge = UTILS + "".join(f"name_{i} = {i}\n" for i in range(20_000))
    read = read_paths([_job(tmp_path, """
        from utils import *
        hyperparams.mixed_precision = "fp8"
        wrap(None, hyperparams)
        """, utils=huge)])
    assert read.facts.get(MP) != "fp8"
    assert any(p.path.endswith("train.py") and p.line == 2 for p in read.problems)


def test_hostile_a_deep_attribute_chain(tmp_path: Path) -> None:
    chain = ".".join(f"a{i}" for i in range(400))
    read = read_paths([_job(tmp_path, f"""
        from utils import *
        hyperparams.{chain} = 1
        hyperparams.mixed_precision = "fp8"
        wrap(None, hyperparams)
        """)])
    assert read.facts.get(MP) in ("fp8", None) or isinstance(read.facts.get(MP), Unknown)


@pytest.mark.parametrize("name", ["torch", "os", "accelerate"])
def test_hostile_a_module_that_shadows_an_installed_one_is_never_imported(
        tmp_path: Path, name: str) -> None:
    marker = tmp_path / "imported"
    shadow = f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n" + UTILS
    before = set(sys.modules)
    read = read_paths([_job(tmp_path, f"""
        import {name}
        {name}.hyperparams.mixed_precision = "fp8"
        {name}.wrap_global(None)
        """, **{name: shadow})])
    assert not marker.exists()
    assert not any(m == name and m not in before for m in sys.modules)
    assert read is not None


def test_hostile_an_object_set_and_passed_on_many_lines(tmp_path: Path) -> None:
    """Each use applies the sets before it: worked out once per object and set count, not
    once per use (1,000 sets and 1,000 calls took a minute before)."""
    sets = "".join(f"hyperparams.x{i} = {i}\n" for i in range(1_000))
    uses = "wrap(None, hyperparams)\n" * 1_000
    assert _mp(tmp_path, "from utils import *\n" + sets +
               'hyperparams.mixed_precision = "fp8"\n' + uses) == "fp8"
