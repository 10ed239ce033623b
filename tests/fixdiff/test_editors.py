"""The round-trip editors behind ``check --diff`` (issue 24, item 3): each changes only the value,
key or flag concerned, keeps comments, order, quoting and continuations, and refuses (with
the reason) what it cannot do without guessing."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.fixdiff import jsonedit, shelledit, tomledit, yamledit
from preflight.fixdiff.common import EditError, Op

ACC = """\
# the team's accelerate config
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU   # the cluster
mixed_precision: fp8
fp8_config:
  backend: TE     # te
  fp8_format: 'E4M3'

  amax_history_len: 16
deepspeed_config:
  deepspeed_config_file: ds.json
fsdp_config:
flow: {a: 1, b: 2}
num_processes: 8
"""


def _changed(old: str, new: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(old.splitlines(), new.splitlines(), n=0,
                                              lineterm="")
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


@pytest.mark.parametrize(("op", "lines"), [
    (Op("set", ("fp8_config", "fp8_format"), "HYBRID"),
     ["-  fp8_format: 'E4M3'", "+  fp8_format: 'HYBRID'"]),           # quoting kept
    (Op("set", ("fp8_config", "backend"), "AO"),
     ["-  backend: TE     # te", "+  backend: AO     # te"]),           # comment kept
    (Op("delete", ("mixed_precision",)), ["-mixed_precision: fp8"]),
    (Op("set", ("fp8_config", "interval"), 1), ["+  interval: 1"]),
    (Op("set", ("fsdp_config", "fsdp_version"), 2), ["+  fsdp_version: 2"]),   # a null filled
    (Op("delete", ("deepspeed_config", "deepspeed_config_file")),
     ["-deepspeed_config:", "-  deepspeed_config_file: ds.json", "+deepspeed_config: {}"]),
    (Op("set", ("flow", "c"), 3), ["-flow: {a: 1, b: 2}", "+flow: {a: 1, b: 2, c: 3}"]),
    (Op("delete", ("flow", "a")), ["-flow: {a: 1, b: 2}", "+flow: {b: 2}"]),
    (Op("set", ("new", "deep", "x"), True), ["+new:", "+  deep:", "+    x: true"]),
    (Op("set", ("num_processes",), "yes"), ["-num_processes: 8", '+num_processes: "yes"']),
    (Op("set", ("fp8_config", "override"), [False, False, True]),
     ["+  override: [false, false, true]"]),
])
def test_yaml_edits_touch_only_their_lines(op: Op, lines: list[str]) -> None:
    new = yamledit.apply(ACC, op)
    assert _changed(ACC, new) == lines
    assert all(c in new.splitlines() for c in ACC.splitlines() if c.lstrip().startswith("#"))


def test_yaml_refuses_what_it_cannot_do_plainly() -> None:
    anchored = "base: &b\n  x: 1\nother:\n  <<: *b\n  y: 2\n"
    with pytest.raises(EditError, match="anchored"):
        yamledit.apply(anchored, Op("set", ("base", "x"), 2))
    with pytest.raises(EditError, match="block"):
        yamledit.apply("a:\n  b: 1\n", Op("set", ("a",), 2))
    with pytest.raises(EditError, match="not a mapping"):
        yamledit.apply("- 1\n- 2\n", Op("set", ("a",), 2))
    with pytest.raises(EditError, match="holds a value"):
        yamledit.apply("a: 1\n", Op("set", ("a", "b"), 2))
    with pytest.raises(EditError, match="not in the file"):
        yamledit.apply("a: 1\n", Op("delete", ("b",)))


def test_yaml_locate_follows_the_line_under_a_prefix() -> None:
    text = "variables:\n  precision: amp_fp8\nprecision: ${variables.precision}\n"
    assert yamledit.locate(text, ("precision",), 2) == ("variables", "precision")
    assert yamledit.locate(text, ("precision",), 3) == ("precision",)
    with pytest.raises(EditError):
        yamledit.locate(text, ("precision",), 1)


TITAN = """\
# torchtitan
[model]
name = "llama3"   # the model
converters = ["float8"]

[float8]
enable_fsdp_float8_all_gather = true  # comm
recipe_name = "rowwise"

[compile]
enable = false
"""


@pytest.mark.parametrize(("op", "lines"), [
    (Op("set", ("float8", "enable_fsdp_float8_all_gather"), False),
     ["-enable_fsdp_float8_all_gather = true  # comm",
      "+enable_fsdp_float8_all_gather = false  # comm"]),
    (Op("delete", ("float8", "recipe_name")), ['-recipe_name = "rowwise"']),
    (Op("set", ("model", "converters"), ["quantize.linear.float8"]),
     ['-converters = ["float8"]', '+converters = ["quantize.linear.float8"]']),
    (Op("set", ("quantize", "linear", "float8", "recipe_name"), "rowwise"),
     ["+", "+[quantize.linear.float8]", '+recipe_name = "rowwise"']),
])
def test_toml_edits_touch_only_their_lines(op: Op, lines: list[str]) -> None:
    assert _changed(TITAN, tomledit.apply(TITAN, op)) == lines


DS = """\
{
  "bf16": {"enabled": true},
  "fp16": {
    "enabled": true
  },
  "zero_optimization": {"stage": 2},
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}
}
"""


@pytest.mark.parametrize(("op", "lines"), [
    (Op("set", ("fp16", "enabled"), False), ['-    "enabled": true', '+    "enabled": false']),
    (Op("delete", ("optimizer", "type")),
     ['-  "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}',
      '+  "optimizer": {"params": {"lr": 1e-5}}']),
    (Op("delete", ("optimizer",)),
     ['-  "zero_optimization": {"stage": 2},',
      '-  "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}',
      '+  "zero_optimization": {"stage": 2}']),
    (Op("delete", ("bf16",)), ['-  "bf16": {"enabled": true},']),
    (Op("set", ("fp16", "loss_scale"), 0),
     ['-    "enabled": true', '+    "enabled": true,', '+    "loss_scale": 0']),
    (Op("set", ("bf16", "enabled"), "auto"),
     ['-  "bf16": {"enabled": true},', '+  "bf16": {"enabled": "auto"},']),
])
def test_json_edits_keep_order_indentation_and_inline_objects(op: Op, lines: list[str]) -> None:
    new = jsonedit.apply(DS, op)
    assert _changed(DS, new) == lines
    json.loads(new)


MEG = """\
#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py \\
    --transformer-impl transformer_engine \\
    --fp8-format hybrid --fp8-interval 4 \\
    --recompute-modules core_attn moe_act \\
    --bf16
echo done
"""


def test_shell_flag_edits_keep_continuations() -> None:
    assert _changed(MEG, shelledit.set_flag(MEG, "fp8_format", 4, "e4m3", "hybrid")) == [
        "-    --fp8-format hybrid --fp8-interval 4 \\", "+    --fp8-format e4m3 --fp8-interval 4 \\"]
    assert _changed(MEG, shelledit.delete_flag(MEG, "fp8_interval", 4, 4)) == [
        "-    --fp8-format hybrid --fp8-interval 4 \\", "+    --fp8-format hybrid \\"]
    # the command's last line goes: the line before it stops continuing onto `echo done`
    new = shelledit.delete_flag(MEG, "bf16", 6, True)
    assert _changed(MEG, new) == ["-    --recompute-modules core_attn moe_act \\", "-    --bf16",
                                  "+    --recompute-modules core_attn moe_act"]
    assert shelledit.set_flag(MEG, "recompute_modules", 5, ["core_attn"],
                              ["core_attn", "moe_act"]).count("moe_act") == 0
    assert "--transformer-impl transformer_engine --use-distributed-optimizer \\" in \
        shelledit.add_flag(MEG, "use_distributed_optimizer", 3, "transformer_impl", True,
                           "transformer_engine")


def test_shell_flag_values_are_never_guessed_past_the_one_read() -> None:
    line = "accelerate launch --num_processes 8 --mixed_precision fp8 train.py --bf16 True " \
           "2>&1 | tee log  # --x\n"
    assert shelledit.set_flag(line, "mixed_precision", 1, "bf16", "fp8") == line.replace(
        "--mixed_precision fp8", "--mixed_precision bf16")
    assert shelledit.add_flag(line, "fp8_format", 1, "mixed_precision", "HYBRID", "fp8") == \
        line.replace("fp8 train.py", "fp8 --fp8_format HYBRID train.py")
    assert shelledit.delete_flag(line, "bf16", 1, True) == line.replace(" --bf16 True", "")
    with pytest.raises(EditError, match="2 times"):
        shelledit.set_flag("x --a 1 --a 2\n", "a", 1, 3, 1)
    with pytest.raises(EditError, match="open quote"):
        shelledit.set_flag("x --a 'oops\n", "a", 1, 3, 1)


@settings(max_examples=60, deadline=None, database=None)
@given(st.dictionaries(st.text("abcxyz_", min_size=1, max_size=5),
                       st.one_of(st.booleans(), st.integers(-5, 5), st.text("ab ", max_size=4)),
                       min_size=1, max_size=6),
       st.text("abcxyz_", min_size=1, max_size=5),
       st.one_of(st.booleans(), st.integers(), st.text("a'\"#: b", max_size=6)))
def test_edits_load_as_exactly_the_change(doc: dict, key: str, value: object) -> None:
    """Whatever the document and value, an edit made is exactly the asked change (the editors
    prove it), in YAML and JSON alike."""
    for editor, text, load in ((yamledit, yaml.safe_dump(doc, sort_keys=False), yaml.safe_load),
                               (jsonedit, json.dumps(doc, indent=2), json.loads)):
        new = editor.apply(text, Op("set", (key,), value))
        assert load(new) == {**doc, key: value}
        if key in doc and len(doc) > 1:
            gone = editor.apply(text, Op("delete", (key,)))
            assert load(gone) == {k: v for k, v in doc.items() if k != key}


def test_a_static_check_imports_no_editor() -> None:
    """ruamel.yaml and tomlkit load only under --diff: the static check's start-up is as it
    was (the wheel's 0.2 s budget)."""
    probe = ("import sys; from preflight.cli import main\n"
             "try: main(['check', '--example', '-q'])\nexcept SystemExit: pass\n"
             "print(sorted(m for m in sys.modules if m.startswith(('ruamel', 'tomlkit', "
             "'preflight.fixdiff'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
