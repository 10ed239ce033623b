"""A framework is one module (issue 22 item 6, structure review P1): what fp8-doctor knows about a
framework is in ``preflight/frameworks/``, and nothing outside it names one.

A kind name as a string (``"hf_trainer"``) or a fact name of a kind (``"config.megatron.x"``)
outside ``preflight/frameworks/`` is behaviour keyed on a framework that a contributor adding one
would have to find by grepping (the packages probed, the environment's needed packages, the
speed-up's shape keys, the rule areas were such places). Docstrings and comments may name
frameworks; code may not, except the words listed in ALLOWED, which are not kinds there.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from preflight.frameworks import FRAMEWORKS, KINDS, _index

ROOT = Path(__file__).resolve().parents[2] / "preflight"

ALLOWED: dict[tuple[str, str], str] = {
    ("registry/intent.py", "deepspeed"): "a value of intent.distributed, not a kind",
    ("registry/intent.py", "megatron"): "a value of intent.distributed / intent.rollout.engine",
    ("intent_fill.py", "deepspeed"): "intent.distributed == 'deepspeed' keeps intent.zero_stage",
    ("environment.py", "deepspeed"): "intent.distributed == 'deepspeed'",
    ("probes/imports.py", "deepspeed"): "a Python module the --deep import probe imports",
    ("integrations/hf.py", "deepspeed"): "the TrainingArguments attribute of that name",
    ("jobs/defaults.py", "accelerate"): "the folder `accelerate config` writes under HF_HOME",
    ("probes/runtime.py", "accelerate"): "the launcher that set ACCELERATE_* variables",
}


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants of the code, not docstrings (a bare string statement)."""
    docs = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and
            isinstance(node.value, str) and id(node) not in docs]


def _named_outside() -> list[str]:
    fact = re.compile(r"(?<![\w.])config\.(%s)\b" % "|".join(KINDS))
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("frameworks/"):
            continue
        for node in _code_strings(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value
            if (text in KINDS and (rel, text) not in ALLOWED) or fact.search(text):
                found.append(f"preflight/{rel}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_framework_is_named_outside_its_module() -> None:
    assert _named_outside() == []


def test_the_check_itself_would_see_a_kind_named_outside(tmp_path: Path) -> None:
    tree = ast.parse('X = "hf_trainer"\nY = f"config.megatron.{1}"\n"""config.nemo in a doc"""')
    assert [n.value for n in _code_strings(tree)] == ["hf_trainer", "config.megatron."]


@pytest.mark.parametrize("entry", sorted(ALLOWED))
def test_every_allowed_word_is_still_there(entry: tuple[str, str]) -> None:
    rel, word = entry
    tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
    assert any(n.value == word for n in _code_strings(tree)), entry


def test_the_generated_index_is_current() -> None:
    text = Path(_index.__file__).read_text(encoding="utf-8")
    assert _index.generated() in text, "run: python -m preflight.frameworks._index"
    assert _index.DISTRIBUTIONS == {f.kind: (*f.distributions, *f.requires) for f in FRAMEWORKS}


def test_every_framework_fills_its_record() -> None:
    kinds = set(KINDS)
    areas = [f.rule_area for f in FRAMEWORKS if f.rule_area]
    assert len(areas) == len(set(areas))
    for f in FRAMEWORKS:
        assert set(f.runs_on) <= kinds - {f.kind}, f.kind
        assert not f.rule_area or re.fullmatch(r"[A-Z]+", f.rule_area), f.kind
        assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*", d) for d in (*f.distributions,
                                                                     *f.requires)), f.kind
        for name, keys in f.shape_keys:
            assert name in {"heads", "kv_heads", "layers", "vocab", "seq", "micro_batch", "tp",
                            "model", "gated"} and keys, (f.kind, name)
        if "text" in f.formats:
            assert f.launch is not None, f"{f.kind} reads text but has no launch reader"
