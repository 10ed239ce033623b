"""``remove_item`` edits (``check --diff``): one item out of a list the user wrote, the others
kept in their order, in a launch line or a YAML list; a list that would be left empty is listed,
not edited (FP8D-MEG-0004, FP8D-MEG-0057)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from preflight import api
from preflight.engine import RuleLoadError, load_rules
from preflight.facts import Facts
from preflight.findings import EditSpec
from preflight.fixdiff import build, render_diff

GIT = shutil.which("git")
MEG = """\
#!/bin/bash
# the team's launch line (comments must survive the fix)
torchrun --nproc-per-node 8 pretrain_gpt.py \\
    --transformer-impl transformer_engine --fp8-format hybrid \\
    --recompute-granularity selective \\
    --recompute-modules {modules} \\
    --bf16
"""
ASSUME = {"gpu": "H100", "pkg.transformer-engine": "2.8.0", "pkg.megatron-core": "0.14.0"}


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
def test_moe_act_and_layernorm_leave_the_recompute_list(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.sh").write_text(MEG.format(modules="core_attn moe_act mlp layernorm"))
    monkeypatch.chdir(tmp_path)
    before = api.check(["train.sh"], assume=ASSUME)
    assert "FP8D-MEG-0004" in {f.rule_id for f in before.findings}
    diff = render_diff(before, ["train.sh"])
    assert "-    --recompute-modules core_attn moe_act mlp layernorm \\" in diff
    assert "+    --recompute-modules core_attn mlp \\" in diff
    subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run([GIT, "apply", "-p1", "-"], cwd=tmp_path, input=diff.encode(),
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    after = api.check(["train.sh"], assume=ASSUME)
    assert "FP8D-MEG-0004" not in {f.rule_id for f in after.findings}
    assert after.facts["config.megatron.recompute_modules"] == ["core_attn", "mlp"]
    assert "# the team's launch line" in (tmp_path / "train.sh").read_text()


def test_a_list_left_empty_is_listed_not_edited(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.sh").write_text(MEG.format(modules="moe_act"))
    monkeypatch.chdir(tmp_path)
    report = api.check(["train.sh"], assume=ASSUME)
    assert "FP8D-MEG-0004" in {f.rule_id for f in report.findings}
    from preflight.fixdiff import diff_output

    out = diff_output(report, ["train.sh"], str(tmp_path), redact=False)
    assert out.patch == ""
    assert "would leave it empty" in out.notes


@dataclass
class _Fix:
    edits: tuple[EditSpec, ...]
    text: str = ""


@dataclass
class _Finding:
    rule_id: str
    fix: _Fix


def _facts(path: Path, value: object, line: int) -> Facts:
    name = "config.swift.recompute_modules"
    return Facts({"config.files": [{"path": str(path), "kind": "swift"}], name: value},
                 {name: f"{path}:{line}"})


@pytest.mark.parametrize(("text", "line", "value", "want"), [
    ("model: m\nrecompute_modules:  # kept\n  - core_attn\n  - mlp\n", 2, ["core_attn", "mlp"],
     ["mlp"]),
    ("model: m\nrecompute_modules: [mlp, core_attn, moe]\n", 2, ["mlp", "core_attn", "moe"],
     ["mlp", "moe"]),
])
def test_yaml_lists_lose_only_that_item(tmp_path: Path, text: str, line: int, value: list[str],
                                        want: list[str]) -> None:
    import yaml

    cfg = tmp_path / "swift.yaml"
    cfg.write_text(text)
    finding = _Finding("X", _Fix((EditSpec("config.swift.recompute_modules", "remove_item",
                                           ["core_attn"]),)))
    result = build([finding], _facts(cfg, value, line), [str(tmp_path)], str(tmp_path))
    assert not result.listed, result.listed
    old, new = result.files[str(cfg)]
    assert yaml.safe_load(new)["recompute_modules"] == want
    assert yaml.safe_load(new)["model"] == "m" and old == text
    assert ("# kept" in new) is ("# kept" in text)


@pytest.mark.parametrize(("value", "why"), [("core_attn", "single value")])
def test_a_value_that_is_not_a_list_is_listed(tmp_path: Path, value: object, why: str) -> None:
    cfg = tmp_path / "swift.yaml"
    cfg.write_text(f"recompute_modules: {value}\n")
    finding = _Finding("X", _Fix((EditSpec("config.swift.recompute_modules", "remove_item",
                                           ["core_attn"]),)))
    result = build([finding], _facts(cfg, value, 1), [str(tmp_path)], str(tmp_path))
    assert not result.files and why in result.listed[0][1]


def test_nothing_to_do_when_the_item_is_not_there(tmp_path: Path) -> None:
    cfg = tmp_path / "swift.yaml"
    cfg.write_text("recompute_modules: [mlp]\n")
    finding = _Finding("X", _Fix((EditSpec("config.swift.recompute_modules", "remove_item",
                                           ["core_attn"]),)))
    result = build([finding], _facts(cfg, ["mlp"], 1), [str(tmp_path)], str(tmp_path))
    assert not result.files and not result.listed


def test_a_rule_may_only_remove_scalars(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "rules" / "megatron" / "FP8D-MEG-0057.yaml"
    bad = tmp_path / "FP8D-MEG-0057.yaml"
    bad.write_text(src.read_text().replace("remove_item: core_attn}",
                                           "remove_item: {a: 1}}", 1))
    with pytest.raises(RuleLoadError, match="remove_item"):
        load_rules([str(bad)])
