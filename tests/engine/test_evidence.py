"""What a rule rests on: lint refuses moving links, unpinned SOURCE, FIX that is no change, a
`stated` rule without a statement; `measured` needs its device and date (issue 16)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from preflight.commands import rules as commands
from preflight.engine import evidence

RULE = """schema_version: "1.0"
id: FP8D-TE-0900
title: t
severity: warning
confidence: {confidence}
{extra}when: {{fact: intent.fp8, op: eq, value: true}}
message: m
fix: f
references:
  - {{type: {rtype}, url: "{url}"}}
tests:
  - {{facts: {{intent.fp8: true}}, expect: fire}}
  - {{facts: {{intent.fp8: false}}, expect: quiet}}
"""


def _lint(tmp_path: Path, **kw: str) -> tuple[int, str]:
    values = {"confidence": "stated", "extra": "", "rtype": "REPORT",
              "url": "https://github.com/NVIDIA/TransformerEngine/issues/1"} | kw
    path = tmp_path / "FP8D-TE-0900.yaml"
    path.write_text(RULE.format(**values), encoding="utf-8")
    parser = argparse.ArgumentParser()
    commands.add_arguments(parser)
    out: list[str] = []
    code = commands.main(parser.parse_args(["lint", str(path)]), lambda t, _o: out.append(t))
    return code, "\n".join(out)


@pytest.mark.parametrize("url", [
    "https://github.com/pytorch/ao/blob/main/torchao/float8/README.md",
    "https://github.com/deepspeedai/DeepSpeed/tree/master/deepspeed",
    "https://raw.githubusercontent.com/pytorch/pytorch/main/README.md",
    "https://docs.pytorch.org/docs/stable/notes/cuda.html",
    "https://docs.nvidia.com/nemo-framework/user-guide/latest/features.html",
    "https://transformerengine.readthedocs.io/en/latest/index.html",
])
def test_moving_links_are_lint_errors_at_their_line(tmp_path: Path, url: str) -> None:
    assert evidence.moving_ref(url) is not None
    code, out = _lint(tmp_path, rtype="DOCS", url=url)
    assert code == 1 and "FP8D-TE-0900.yaml:10:" in out


@pytest.mark.parametrize("url, pinned", [
    ("https://github.com/pytorch/ao/blob/v0.18.0/torchao/float8/config.py", True),
    ("https://github.com/NVIDIA/Megatron-LM/blob/core_v0.16.0/megatron/training/arguments.py#L5",
     True),
    ("https://github.com/NVIDIA/TransformerEngine/commit/0edf30b87159e82048b5f248e4b379aebb8f364a",
     True),
    ("https://github.com/pytorch/ao/pull/1051", False),
    ("https://github.com/pytorch/ao/blob/main/x.py", False),
    ("https://example.org/docs/page.html", False),
    ("https://docs.pytorch.org/docs/2.9/notes/cuda.html", True),
])
def test_source_must_name_a_tag_or_commit(tmp_path: Path, url: str, pinned: bool) -> None:
    assert evidence.pinned_source(url) is pinned
    code, _ = _lint(tmp_path, confidence="verified", rtype="SOURCE", url=url)
    assert code == (0 if pinned else 1)


@pytest.mark.parametrize("url, ok", [
    ("https://github.com/huggingface/accelerate/pull/3361", True),
    ("https://github.com/pytorch/pytorch/commit/abcdef1234567", True),
    ("https://github.com/huggingface/accelerate/issues/3360", False),
    ("https://github.com/huggingface/accelerate/releases/tag/v1.11.0", False),
])
def test_fix_must_be_a_pull_request_or_commit(tmp_path: Path, url: str, ok: bool) -> None:
    assert evidence.is_fix_link(url) is ok
    code, _ = _lint(tmp_path, confidence="inferred", rtype="FIX", url=url)
    assert code == (0 if ok else 1)


def test_stated_rule_needs_a_statement(tmp_path: Path) -> None:
    assert _lint(tmp_path)[0] == 0
    code, out = _lint(tmp_path, rtype="FIX", url="https://github.com/pytorch/ao/pull/1")
    assert code == 1 and "FP8D-TE-0900.yaml:5:" in out


def test_measured_needs_device_and_date(tmp_path: Path) -> None:
    code, out = _lint(tmp_path, confidence="measured")
    assert code == 1 and "FP8D-TE-0900.yaml:5:" in out
    ok = 'measured: {device: "NVIDIA H100 80GB HBM3", date: "2026-11-23"}\n'
    assert _lint(tmp_path, confidence="measured", extra=ok)[0] == 0
    bad_date = 'measured: {device: "H100", date: "last week"}\n'
    assert _lint(tmp_path, confidence="measured", extra=bad_date)[0] == 1


def test_read_at_names_a_tag_not_a_branch(tmp_path: Path) -> None:
    good = "read_at: [NVIDIA/TransformerEngine@v2.2]\n"
    assert _lint(tmp_path, confidence="verified", extra=good)[0] == 0
    code, out = _lint(tmp_path, confidence="verified",
                      extra="read_at: [NVIDIA/TransformerEngine@main]\n")
    assert code == 1 and "FP8D-TE-0900.yaml:6:" in out
    assert _lint(tmp_path, confidence="verified", extra="read_at: [not a ref]\n")[0] == 1
