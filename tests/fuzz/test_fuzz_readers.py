"""Fuzz targets, one per reader of something outside our control (issue 13, deliverable 7):
YAML, JSON, TOML, shell / args launch files, and snapshots.

Each target builds hostile input with hypothesis (structure-aware: fragments of the format mixed
with control characters, deep nesting, long runs and huge numbers), writes it to a real file,
runs the real reader and the real renderers, and holds the reliability contract
(docs/reliability.md): no exception escapes, a problem names the file, every format renders,
and nothing takes more than :data:`SECONDS`. The budget is fixed (:data:`EXAMPLES` a target) and
derandomized under CI by tests/conftest.py, so CI runs the same examples every time;
``FP8D_FUZZ_EXAMPLES=2000`` runs a longer, random hunt locally.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cputime import cpu_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight.api import evaluate_facts
from preflight.facts import Facts
from preflight.jobs.read import read_paths

EXAMPLES = int(os.environ.get("FP8D_FUZZ_EXAMPLES", "40"))   # raise it locally to hunt
SECONDS = 5.0
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_NOISE = st.sampled_from(["\x00", "\x1b[2J", "\r", "\x07", "\u202e", "\ufeff",
                          "9" * 5000, "a." * 300, "[" * 200, "{" * 200, "&a", "*a", "!!python/",
                          "${oc.env:HOME}", "$((1+", "<<EOF", "\\\n", "'", '"', "#", "---"])


def _mix(fragments: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(fragments, _NOISE, st.text(max_size=20)), max_size=40).map("".join)


YAML = _mix(st.sampled_from([
    "mixed_precision: fp8\n", "distributed_type: MULTI_GPU\n", "fp8_config:\n  backend: TE\n",
    "deepspeed_config:\n  zero_stage: 3\n", "a: &x [1, 2]\n", "b: *x\n", "- item\n", "key: |\n  x\n",
    "precision: amp_fp8\n", "model:\n  fp8: true\n", "trainer:\n  precision: 16-mixed\n",
    "? complex\n", "num_processes: 8\n", "lr: .nan\n", "x: 1e400\n", "  ", "\n"]))
JSON = _mix(st.sampled_from([
    '{"train_batch_size": 8', ', "zero_optimization": {"stage": 3}', ', "fp8": {"enabled": true}',
    "}", "]", "[", ",", ":", '"bf16"', "NaN", "Infinity", "-1e999", "1" * 50, "null", "true"]))
TOML = _mix(st.sampled_from([
    "[float8]\n", "enable_fsdp_float8_all_gather = true\n", "[training]\n", "steps = 10\n",
    "[[x]]\n", "a = [1, 2\n", "b = \"\"\"\n", "c = 1979-05-27T07:32:00Z\n", "d = inf\n",
    "[model]\nconverters = [\"float8\"]\n", "= =\n"]))
SHELL = _mix(st.sampled_from([
    "#!/bin/bash\n", "torchrun --nproc-per-node 8 pretrain_gpt.py \\\n", "  --fp8-format hybrid",
    " --transformer-impl transformer_engine", " --bf16", " \\\n", "\n", "export NVTE_X=1\n",
    "accelerate launch --mixed_precision fp8 train.py\n", "cat <<EOF\n", "EOF\n", "$(", ")",
    "\"unterminated", "'", "--deepspeed ds.json", " --num-layers $((2*", "srun ", "; "]))


def _holds_the_contract(path: Path) -> None:
    start = cpu_seconds()     # not stretched by the machine's load (tests/cputime.py)
    read = read_paths([str(path)])
    for problem in read.problems:
        assert problem.path, problem
    report = evaluate_facts(Facts(read.facts, read.provenance), fail_on="never")
    json.loads(report.render("json"), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    for fmt in ("text", "markdown", "sarif"):
        out = report.render(fmt)
        assert "\x1b" not in out and "\r" not in out
    assert cpu_seconds() - start < SECONDS


@pytest.mark.parametrize(("suffix", "strategy"), [
    (".yaml", YAML), (".json", JSON), (".toml", TOML), (".sh", SHELL), (".args", SHELL)])
def test_reader_fuzz(tmp_path: Path, suffix: str, strategy: st.SearchStrategy[str]) -> None:
    @FUZZ
    @given(text=strategy, raw=st.booleans())
    def target(text: str, raw: bool) -> None:
        path = tmp_path / f"fuzzed{suffix}"
        if raw:   # also as bytes that are not UTF-8
            path.write_bytes(text.encode("utf-8", "surrogatepass") + b"\xff\xfe")
        else:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _holds_the_contract(path)

    target()


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
              st.just("9" * 5000)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=20)
_FACT_NAMES = st.sampled_from(["gpu.count", "gpu.cc", "gpu.names", "pkg.torch.version",
                               "config.accelerate.mixed_precision", "env.NVTE_X", "smoke.error",
                               "intent.fp8", "x.y", "$unknown"])


@FUZZ
@given(facts=st.dictionaries(_FACT_NAMES, _VALUES, max_size=8),
       findings=st.one_of(_VALUES, st.lists(st.dictionaries(
           st.sampled_from(["id", "severity", "message", "evidence", "location"]), _VALUES))),
       version=st.one_of(st.just("1.0"), _VALUES), provenance=_VALUES)
def test_snapshot_fuzz(facts: dict, findings: object, version: object, provenance: object) -> None:
    import tempfile

    from preflight import cli

    doc = {"schema_version": version, "facts": facts, "findings": findings,
           "provenance": provenance}
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "s.json"
        snap.write_text(json.dumps(doc))   # NaN / Infinity included, as Python writes them
        for fmt in ("json", "text"):
            start = cpu_seconds()
            try:
                code = cli.main(["check", "--snapshot", str(snap), "--format", fmt,
                                 "--fail-on", "never", "-o", str(Path(tmp) / "out")])
            except SystemExit as exc:
                code = exc.code
            assert code in (0, 2), code          # 3 would be an internal error
            assert cpu_seconds() - start < SECONDS
            if code == 0 and fmt == "json":
                json.loads((Path(tmp) / "out").read_text(),
                           parse_constant=lambda c: pytest.fail(f"bare {c}"))
