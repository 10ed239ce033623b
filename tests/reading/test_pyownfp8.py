"""FP8 written by the job's own code (issue 22): what calling a name of a job module reaches,
followed through the module's own definitions to ``torch._scaled_mm``; and the CUDA-only
condition nanochat makes its conversion under. Fixture: the reduction of karpathy/nanochat @
92d63d4e nanochat/fp8.py and scripts/base_train.py in tests/jobs/nanochat_job.py."""

from __future__ import annotations

import ast
import textwrap

import pytest

from preflight.reading.pyownfp8 import FP8_CALL, OnCuda, on_cuda, reaches
from preflight.reading.pyvalues import Unresolved
from tests.jobs.nanochat_job import BASE_TRAIN, FP8


def test_nanochat_conversion_reaches_scaled_mm() -> None:
    own = reaches(ast.parse(FP8), "convert_to_float8_training")
    assert own is not None
    assert own.chain == ("convert_to_float8_training", "Float8Linear", "_Float8Matmul")
    assert own.marker == "_scaled_mm"
    assert "torch._scaled_mm" in own.what("nanochat/fp8.py")
    # the config is no conversion; a name not in the module is nothing
    assert reaches(ast.parse(FP8), "Float8LinearConfig") is None
    assert reaches(ast.parse(FP8), "missing") is None


def _tree(src: str) -> ast.Module:
    return ast.parse(textwrap.dedent(src))


def test_a_class_named_as_an_argument_is_not_followed() -> None:
    # looking for FP8 layers (to swap them back to BF16 for evaluation) converts nothing
    tree = _tree("""
        import torch
        class F8(torch.nn.Linear):
            def forward(self, x):
                return torch._scaled_mm(x, self.weight.t())
        def to_bf16(model):
            for m in model.modules():
                if isinstance(m, F8):
                    pass
    """)
    assert reaches(tree, "to_bf16") is None
    assert reaches(tree, "F8") is not None


def test_recursion_between_functions_ends() -> None:
    tree = _tree("""
        def a(m):
            return b(m)
        def b(m):
            return a(m)
    """)
    assert reaches(tree, "a") is None


def test_recursion_that_reaches_the_marker() -> None:
    tree = _tree("""
        import torch
        def a(m, n):
            return b(m, n - 1) if n else torch._scaled_mm(m, m)
        def b(m, n):
            return a(m, n)
    """)
    own = reaches(tree, "b")
    assert own is not None and own.chain == ("b", "a")


def test_a_name_rebound_after_its_def_is_no_longer_the_function() -> None:
    tree = _tree("""
        import torch
        def convert_to_fp8(m):
            return torch._scaled_mm(m, m)
        convert_to_fp8 = None
    """)
    assert reaches(tree, "convert_to_fp8") is None


def test_the_last_definition_binds() -> None:
    tree = _tree("""
        import torch
        def convert_to_fp8(m):
            return torch._scaled_mm(m, m)
        def convert_to_fp8(m):
            return m
    """)
    assert reaches(tree, "convert_to_fp8") is None


def test_a_marker_in_a_comment_or_string_is_none() -> None:
    tree = _tree('''
        def convert_to_fp8(m):
            """calls torch._scaled_mm"""
            # torch._scaled_mm(m, m)
            return "torch._scaled_mm"
    ''')
    assert reaches(tree, "convert_to_fp8") is None


def test_bounded_on_a_huge_module() -> None:
    body = "\n".join(f"def f{i}(m):\n    return f{i + 1}(m)" for i in range(400))
    tree = ast.parse(body + "\nimport torch\ndef f400(m):\n    return torch._scaled_mm(m, m)\n")
    assert reaches(tree, "f0") is None          # past MAX_DEPTH hops: not followed
    assert reaches(tree, "f395") is not None


def _when_at(src: str, call_line: int, if_line: int) -> Unresolved | None:
    return on_cuda(ast.parse(textwrap.dedent(src)), call_line,
                   Unresolved("a condition", if_line))


@pytest.mark.parametrize("test, branch, cuda", [
    ('device_type != "cuda"', "else", True),      # nanochat base_train.py:169-190
    ('device_type != "cuda"', "body", False),
    ('device_type == "cuda"', "body", True),
    ('"cuda" == device.type', "body", True),
    ("torch.cuda.is_available()", "body", True),
    ("not torch.cuda.is_available()", "else", True),
    ("not torch.cuda.is_available()", "body", False),
    ('device_type == "mps"', "body", False),
    ("args.fp8 and torch.cuda.is_available()", "body", False),   # not a device test alone
])
def test_cuda_only_conditions(test: str, branch: str, cuda: bool) -> None:
    src = f"if {test}:\n    a = 1\n    convert(model)\nelse:\n    b = 2\n    convert(model)\n"
    line = 3 if branch == "body" else 6
    got = _when_at(src, line, 1)
    assert isinstance(got, OnCuda) is cuda
    assert isinstance(got, Unresolved)          # every other reader still sees it undecided


def test_a_call_nested_deeper_keeps_its_condition() -> None:
    # another `if` between the CUDA test and the call: its test is not known to hold
    src = 'if device_type == "cuda":\n    if other:\n        convert(model)\n'
    assert not isinstance(_when_at(src, 3, 1), OnCuda)


def test_nanochat_conversion_is_made_only_on_cuda() -> None:
    tree = ast.parse(BASE_TRAIN)
    line = next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and
                getattr(n.func, "id", "") == "convert_to_float8_training")
    test = next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.If) and
                "cuda" in ast.unparse(n.test))
    assert isinstance(on_cuda(tree, line, Unresolved("x", test)), OnCuda)
    assert on_cuda(tree, line, None) is None


@pytest.mark.parametrize("name, match", [
    ("convert_to_float8_training", True), ("convert_to_fp8", True), ("enable_fp8", True),
    ("apply_fp8_training", True), ("swap_to_float8_linear", True), ("fp8_model", True),
    ("disable_fp8", False), ("fp8_recipe", False), ("convert", False), ("from_recipe_name", False),
    ("Float8LinearConfig", False), ("fp8_linear_config", False), ("Float8Linear", False),
])
def test_fp8_conversion_names(name: str, match: bool) -> None:
    assert bool(FP8_CALL.match(name)) is match
