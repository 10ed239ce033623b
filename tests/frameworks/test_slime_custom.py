"""slime / miles ``--custom-config-path`` (frameworks/slime_custom.py; issue 22, holdout11): the
YAML whose keys slime sets on its arguments after parsing, from a file (miles' mis.yaml,
fixtures/configs/slime/README.md) or the inline ``base64:`` file miles' Python launchers build
(``U.encode_pseudo_file``: the holdout11 job's scripts/run_qwen3_4b.py, radixark/miles @
31f1ca961a94cb860cec3b2dea34ec332bfa8f76, verbatim in benchmarks/realjobs)."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ROOT = Path(__file__).resolve().parents[2]
SLIME = ROOT / "fixtures" / "configs" / "slime"
MILES = ROOT / "benchmarks" / "realjobs" / \
    "holdout11-miles-py-qwen3-4b-fp8e2e-param-gather-mis-h100" / "files" / "scripts" / \
    "run_qwen3_4b.py"
MILES_LINE = "python scripts/run_qwen3_4b.py --hardware H100 --train-fp8 --rollout-fp8 {more}\n"


def _shell(tmp_path: Path, custom: str | None, mis: str | None = None) -> dict[str, Any]:
    """slime's FP8-rollout script (BF16 training, Qwen3-4B-FP8 in SGLang) with a custom config."""
    shutil.copytree(SLIME / "scripts", tmp_path / "scripts")
    (tmp_path / "low_precision").mkdir()
    text = (SLIME / "low_precision" / "run-qwen3-4b-fp8.sh").read_text()
    if custom is not None:
        text = text.replace("   ${MISC_ARGS[@]}", f"   ${{MISC_ARGS[@]}} --custom-config-path {custom}")
    script = tmp_path / "low_precision" / "run.sh"
    script.write_text(text)
    if mis is not None:
        (tmp_path / "low_precision" / "mis.yaml").write_text(mis)
    return _derive([script])


def _derive(paths: list[Path]) -> dict[str, Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts, "prov": {**read.provenance, **prov}}


MIS = (SLIME / "mis" / "mis.yaml").read_text()


def test_mis_yaml_of_a_shell_launcher_turns_tis_on(tmp_path: Path) -> None:
    got = _shell(tmp_path, "mis.yaml", MIS)
    assert got["intent.rollout.fp8"] is True
    assert got["config.slime.use_tis"] is True and got["config.slime.tis_mode"] == "truncate"
    assert str(got["prov"]["config.slime.use_tis"]).endswith("mis.yaml:2")
    assert got["intent.rollout.is_correction"] is True
    assert "config.slime.rs_lower_bound" not in got          # null: unset again


def test_without_it_tis_is_off_and_a_false_in_it_wins_over_the_flag(tmp_path: Path) -> None:
    assert _shell(tmp_path / "a", None)["intent.rollout.is_correction"] is False
    off = _shell(tmp_path / "b", "--use-tis --custom-config-path mis.yaml",
                 MIS.replace("use_tis: true", "use_tis: false"))
    assert off["intent.rollout.is_correction"] is False


def test_decoy_in_a_yaml_comment_sets_nothing(tmp_path: Path) -> None:
    got = _shell(tmp_path, "mis.yaml", MIS.replace("use_tis: true", "# use_tis: true"))
    assert got["intent.rollout.is_correction"] is False


def test_unreadable_custom_config_leaves_tis_unknown(tmp_path: Path) -> None:
    cases = {"a": ("$MIS_CONFIG", None), "b": ("missing.yaml", None),
             "c": ("mis.yaml", "use_tis: [true\n"), "d": ("mis.yaml", "- use_tis\n"),
             "e": ("base64:%%%notbase64", None)}
    for name, (custom, text) in cases.items():
        got = _shell(tmp_path / name, custom, text)
        corr = got["intent.rollout.is_correction"]
        assert isinstance(corr, Unknown) and "custom-config-path" in corr.reason, name
        assert isinstance(got["config.slime.custom_config"], Unknown), name


def test_inline_base64_config_on_the_command_line(tmp_path: Path) -> None:
    inline = "base64:" + base64.b64encode(b"use_tis: true\n").decode()
    assert _shell(tmp_path, inline)["intent.rollout.is_correction"] is True


def _miles(tmp_path: Path, more: str, script: str | None = None) -> dict[str, Any]:
    target = tmp_path / "scripts" / "run_qwen3_4b.py"
    target.parent.mkdir(parents=True)
    target.write_text(script if script is not None else MILES.read_text())
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + MILES_LINE.format(more=more))
    return _derive([tmp_path / "run.sh"])


def test_miles_python_launcher_enable_mis_writes_tis_config(tmp_path: Path) -> None:
    got = _miles(tmp_path / "on", "--enable-mis")
    assert got["intent.rollout.fp8"] is True and got["intent.rollout.is_correction"] is True
    assert got["config.slime.tis_upper_bound"] == 2.0
    assert got["prov"]["config.slime.use_tis"].line == 287      # its --custom-config-path
    assert _miles(tmp_path / "off", "")["intent.rollout.is_correction"] is False


def test_miles_config_text_from_an_unknown_value_is_unknown(tmp_path: Path) -> None:
    text = MILES.read_text()
    unknown = text.replace('config_text = f"""\nuse_tis: true',
                           'config_text = f"""\nuse_tis: {os.environ["MY_TIS"]}')
    assert unknown != text
    got = _miles(tmp_path / "env", "--enable-mis", "import os\n" + unknown)
    assert isinstance(got["intent.rollout.is_correction"], Unknown)
    own = text.replace("import typer\n", "import typer\n\n\ndef encode_pseudo_file(t):\n"
                       "    return '/tmp/x.yaml'\n\n").replace("U.encode_pseudo_file(",
                                                              "encode_pseudo_file(")
    got = _miles(tmp_path / "own", "--enable-mis", own)
    assert isinstance(got["intent.rollout.is_correction"], Unknown)


FLAG_LINE = '            f"--custom-config-path {U.encode_pseudo_file(config_text)} "\n'


def _written(tmp_path: Path, write: str, flag: str, top: str = "") -> Any:
    """The real launcher with its config written to a file by the given statements."""
    text = MILES.read_text()
    assert text.count(FLAG_LINE) == 1
    text = text.replace(FLAG_LINE, flag).replace(
        '""".strip()\n        misc_args += (', '""".strip()\n' + write + "        misc_args += (")
    text = text.replace("import typer\n", "import typer\n" + top)
    return _miles(tmp_path, "--enable-mis", text)["intent.rollout.is_correction"]


def test_config_written_with_open_write_or_write_text_then_named(tmp_path: Path) -> None:
    flag = '            "--custom-config-path /tmp/mis.yaml "\n'
    opened = ('        with open("/tmp/mis.yaml", "w") as f:\n'
              "            f.write(config_text)\n")
    assert _written(tmp_path / "a", opened, flag) is True
    path = '        pathlib.Path("/tmp/mis.yaml").write_text(config_text)\n'
    assert _written(tmp_path / "b", path, flag, "import pathlib\n") is True
    var = ('        cfg = "/tmp/mis.yaml"\n        with open(cfg, "w") as f:\n'
           "            f.write(config_text)\n")
    assert _written(tmp_path / "c", var, '            f"--custom-config-path {cfg} "\n') is True


def test_dict_dumped_to_a_temporary_file_a_function_returns(tmp_path: Path) -> None:
    # the shape of THUDM/slime tests/test_glm4.7_30B_A3B_pd_mooncake.py l.30-54 @ 624b824a
    top = ("import tempfile\nimport yaml\n\n\ndef write_mis_config():\n"
           '    config = {"use_tis": True, "tis_mode": "truncate"}\n'
           '    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)\n'
           "    with f:\n        yaml.safe_dump(config, f, sort_keys=False)\n"
           "    return f.name\n")
    flag = '            f"--custom-config-path {write_mis_config()} "\n'
    assert _written(tmp_path / "a", "", flag, top) is True
    off = top.replace('"use_tis": True', '"use_tis": False')
    assert _written(tmp_path / "b", "", flag, off) is False
    unknown = top.replace('"use_tis": True', '"use_tis": os.environ["TIS"]')
    got = _written(tmp_path / "c", "", flag, "import os\n" + unknown)
    assert isinstance(got, Unknown)


def test_written_config_decoys_and_unknowns(tmp_path: Path) -> None:
    flag = '            "--custom-config-path /tmp/mis.yaml "\n'
    other = ('        with open("/tmp/other.yaml", "w") as f:\n'
             "            f.write(config_text)\n")
    assert isinstance(_written(tmp_path / "a", other, flag), Unknown)     # not the flag's file
    read_only = ('        with open("/tmp/mis.yaml") as f:\n'
                 "            f.read()\n")
    assert isinstance(_written(tmp_path / "b", read_only, flag), Unknown)
    env_path = ('        with open(os.environ["CFG"], "w") as f:\n'
                "            f.write(config_text)\n")
    got = _written(tmp_path / "c", env_path, '            f"--custom-config-path {os.environ[\'CFG\']} "\n',
                   "import os\n")
    assert isinstance(got, Unknown)
    twice = ('        with open("/tmp/mis.yaml", "w") as f:\n            f.write(config_text)\n'
             '        with open("/tmp/mis.yaml", "w") as f:\n            f.write("use_tis: false")\n')
    assert isinstance(_written(tmp_path / "d", twice, flag), Unknown)
    maybe = ('        if os.environ.get("MIS"):\n'
             '            with open("/tmp/mis.yaml", "w") as f:\n'
             "                f.write(config_text)\n")
    assert isinstance(_written(tmp_path / "e", maybe, flag, "import os\n"), Unknown)


def test_a_quoted_or_listed_use_tis_is_its_python_truth(tmp_path: Path) -> None:
    # redteam8: slime tests `args.use_tis` as Python does (loss.py l.987 @ v0.3.1), after
    # setattr of the YAML value: the string 'false' is on, an empty list off
    for n, (text, on) in enumerate([("use_tis: 'false'\n", True), ("use_tis: '0'\n", True),
                                    ("use_tis: ''\n", False), ("use_tis: []\n", False),
                                    ("use_tis: [false]\n", True)]):
        got = _shell(tmp_path / str(n), "mis.yaml", text)
        assert got["intent.rollout.is_correction"] is on, text
        assert got["config.slime.use_tis"] is on, text
