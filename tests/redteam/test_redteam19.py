"""redteam19 (session 44): attacks on what session 44 turned from Unknown into an answer.

- pyfix9's script read by hand (``python FILE.py``, its argparse defaults) and, the same class,
  a launch line's words: the declared default / word was taken as the value even where the file
  itself changes it before or after parsing (reading/pyargedits.py, fixed as a class):
  ``parser.set_defaults``, ``sys.argv`` written before parsing, ``parse_args([...])`` /
  ``parse_args(argv)`` / ``namespace=``, ``args.x = ...`` / ``setattr`` / ``vars(args).update``
  after it, and (by hand) a sub-command's options, which ``python FILE.py`` never sets.
  Each case below read a confident FP8 yes before the fix (the file turns it off).
- primus2's presets named from a variable (frameworks/primus_launch.py): a ``source f`` /
  ``set -a`` before ``primus-cli`` (launchenv's ``*``: any variable) left ``${MODEL:default}``
  at its default, a confident BF16 where the sourced file names an FP8 preset; now Unknown.
- fwacc / sweep21 (frameworks/accelerate_plugins.py): ``Accelerator(**kw)`` / ``(*a)`` the text
  does not give left the code's own mixed_precision absent, read as not passed: FP8D-ACC-0019's
  silent fallback fired with confidence where it may be "fp8" (HW-0001's case); now Unknown,
  both undetermined; a positional ``Accelerator(True, False, "fp8")`` is read.
Holding (tests that can fail): redteam18's ``{ }`` evaluation with braces in words, quotes,
comments, here-documents and 50-deep ``!`` nesting (never the other arm than bash 5); ACC-0099
on a stated / unknown mixed_precision; fwacc's backend pick from flags and exports.
Open (strict xfail, owner named): two parsers of one file sharing a dest (reading/pyoption.py
shared_dest: free since pyfix9 merged); ``check train.py run.sh`` where run.sh runs it as
``python -m train`` (jobs/walk.py re-read: shell19); ACCELERATE_FP8_BACKEND from a sourced file,
``set -a``, ``export $(...)``, ``env X=V``, an undecided branch, and ``X=v;`` values (shell19:
jobs/launchfacts._env, reading/launchenv.py); ``--config_file`` out of the job and ``python -m
accelerate.commands.launch`` (accelerate reader); an Accelerator built outside the job; BF16
family checkpoint names with fp8 glued / look-alike letters (fwrl11, ckptname.py); prime-rl's KV
cache dtype under unknown launch words (fwrl11); a TE autocast only in a never-called function
(pytorch_te reader, ACC-0099).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

_HEAD = """
import argparse
import os
import sys
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format


def train(args):
    model = te.Linear(768, 768)
    opt = torch.optim.AdamW(model.parameters())
    recipe = DelayedScaling(fp8_format=Format.HYBRID)
    for step in range(10):
        with te.fp8_autocast(enabled=args.use_fp8, fp8_recipe=recipe):
            loss = model(torch.randn(4, 768)).sum()
        loss.backward()
        opt.step()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_fp8", action="store_true", default=True)
    parser.add_argument("--no_fp8", dest="use_fp8", action="store_false")
"""
_TAIL = """
    train(args)


if __name__ == "__main__":
    main()
"""
_PARSE = "    args = parser.parse_args()\n"


def _script(body: str = _PARSE, tail: str = _TAIL, pre: str = "") -> str:
    return _HEAD.replace("\n\ndef train", pre + "\n\ndef train", 1) + body + tail


def _fp8(root: Path, files: dict[str, str], *names: str) -> Any:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    read = read_paths([str(root / n) for n in names or ("train.py",)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


_CHANGED = {
    "set_defaults": "    parser.set_defaults(use_fp8=False)\n" + _PARSE,
    "set_defaults_mapping": "    parser.set_defaults(**{'use_fp8': False})\n" + _PARSE,
    "argv_append": "    sys.argv.append('--no_fp8')\n" + _PARSE,
    "argv_assign": "    sys.argv = [sys.argv[0], '--no_fp8']\n" + _PARSE,
    "argv_iadd": "    sys.argv += ['--no_fp8']\n" + _PARSE,
    "argv_extend": "    sys.argv.extend(['--no_fp8'])\n" + _PARSE,
    "argv_insert": "    sys.argv.insert(1, '--no_fp8')\n" + _PARSE,
    "argv_slice": "    sys.argv[1:] = ['--no_fp8']\n" + _PARSE,
    "attr_set": _PARSE + "    args.use_fp8 = False\n",
    "attr_and_env": _PARSE + "    args.use_fp8 = args.use_fp8 and os.environ.get('X') == '1'\n",
    "setattr": _PARSE + "    setattr(args, 'use_fp8', False)\n",
    "setattr_name": _PARSE + "    setattr(args, 'use_' + 'fp8', False)\n",
    "vars_update": _PARSE + "    vars(args).update(use_fp8=False)\n",
    "dict_item": _PARSE + "    args.__dict__['use_fp8'] = False\n",
    "namespace": "    args = parser.parse_args(namespace=argparse.Namespace(use_fp8=False))\n",
    "namespace_name": "    ns = argparse.Namespace(use_fp8=False)\n    args = parser.parse_args(namespace=ns)\n",
    "argv_param": "    args = parser.parse_args(argv)\n",
}


@pytest.mark.parametrize("body", list(_CHANGED.values()), ids=list(_CHANGED))
@pytest.mark.parametrize("launch", [None, "torchrun --nproc_per_node 8 train.py\n"])
def test_an_option_the_file_changes_is_not_its_default(tmp_path: Path, body: str,
                                                       launch: str | None) -> None:
    tail = _TAIL.replace("    main()\n", "    main(sys.argv[1:] + ['--no_fp8'])\n")
    files = {"train.py": _script(body, tail)}
    if launch is not None:
        files["run.sh"] = launch
    got = _fp8(tmp_path, files, "run.sh" if launch else "train.py")
    assert isinstance(got, Unknown) or got is False
    assert got is not True


def test_a_top_level_argv_write_is_seen(tmp_path: Path) -> None:
    got = _fp8(tmp_path, {"train.py": _script(pre="\nsys.argv.append('--no_fp8')")})
    assert isinstance(got, Unknown)
    assert "sys.argv" in got.reason


@pytest.mark.parametrize("body", [
    "    args = parser.parse_args(['--no_fp8'])\n",
    "    args = parser.parse_args(args=['--no_fp8'])\n",
    _PARSE + "    args = parser.parse_args(['--no_fp8'])\n",     # the second parse is the one read
])
def test_a_command_line_the_text_gives_is_parsed(tmp_path: Path, body: str) -> None:
    assert _fp8(tmp_path, {"train.py": _script(body)}) is False


def test_a_sub_commands_options_are_not_set_by_hand(tmp_path: Path) -> None:
    body = ("    sub = parser.add_subparsers(dest='cmd')\n    tr = sub.add_parser('train')\n"
            "    tr.add_argument('--fp8', action='store_true', default=True)\n" + _PARSE)
    text = _script(body).replace("enabled=args.use_fp8", "enabled=args.fp8")
    assert _fp8(tmp_path, {"train.py": text}) is not True


# --- quiet: what the file does not change keeps its reading --------------------------------------

@pytest.mark.parametrize("body, tail", [
    (_PARSE, _TAIL),
    ("    args = parser.parse_args(argv)\n", _TAIL),                 # main() gives None
    ("    args = parser.parse_args(sys.argv[1:])\n", _TAIL),
    (_PARSE + "    args.lr = 0.1\n    parser.set_defaults(lr=1)\n", _TAIL),   # another dest
    (_PARSE + "    argv = ['x']\n", _TAIL),                             # a local named argv
])
def test_a_file_that_leaves_the_option_alone_keeps_its_default(tmp_path: Path, body: str,
                                                               tail: str) -> None:
    assert _fp8(tmp_path, {"train.py": _script(body, tail)}) is True


def test_a_launch_word_still_wins_where_the_file_changes_nothing(tmp_path: Path) -> None:
    files = {"train.py": _script("    args = parser.parse_args(argv)\n"),
             "run.sh": "python train.py --no_fp8\n"}
    assert _fp8(tmp_path, files, "run.sh") is False


# --- hostile: many edits, bounded -----------------------------------------------------------------

def test_many_argv_edits_are_read_in_bounded_time(tmp_path: Path) -> None:
    from tests.cputime import cpu_seconds
    body = "    sys.argv.append('--x')\n" * 3000 + "    setattr(args, 'a', 1)\n" * 3000 + _PARSE
    before = cpu_seconds()
    got = _fp8(tmp_path, {"train.py": _script(body)})
    assert got is not True
    assert cpu_seconds() - before < 40      # ~2 s quiet


# --- open ---------------------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason="reading/pyoption.py shared_dest merges two parsers' "
                   "options by dest: the first parser's default is read for the second's "
                   "(free since pyfix9 merged; the Arg does not know its parser)")
def test_two_parsers_sharing_a_dest_are_not_merged(tmp_path: Path) -> None:
    body = ("    ev = argparse.ArgumentParser()\n"
            "    ev.add_argument('--fp8', action='store_true', default=True)\n"
            "    tp = argparse.ArgumentParser()\n    tp.add_argument('--fp8', action='store_true')\n"
            "    args = tp.parse_args()\n")
    text = _script(body).replace("enabled=args.use_fp8", "enabled=args.fp8")
    assert _fp8(tmp_path, {"train.py": text}) is False


def test_a_module_launch_named_after_the_script_gives_its_arguments(tmp_path: Path) -> None:
    files = {"train.py": _script(), "run.sh": "python -m train --no_fp8\n"}
    assert _fp8(tmp_path, files, "train.py", "run.sh") is False


# --- fwacc: accelerate's FP8 backend picked from what is installed (frameworks/accelerate_backend.py)
# auto_backend reads "no ACCELERATE_FP8_BACKEND fact" as "not set": every way a launch script
# gives the variable that the env facts do not carry turns into a confident pick of torchao.

_ACC_SCRIPT = """from accelerate import Accelerator
accelerator = Accelerator()
model = accelerator.prepare(model)
for batch in data:
    accelerator.backward(model(batch).loss)
"""
_AO_TE = {"pkg.accelerate": "1.11.0", "pkg.transformer-engine": "2.8.0", "pkg.torchao": "0.13.0"}
_LAUNCH = "accelerate launch --mixed_precision fp8 train.py\n"


def _intent(root: Path, run_sh: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    from preflight.assume import apply_assumptions
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(_ACC_SCRIPT)
    (root / "run.sh").write_text("#!/bin/bash\n" + run_sh)
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    read = read_paths([str(root / "run.sh")])
    values, _ = intent.derive(apply_assumptions(Facts(read.facts, read.provenance), _AO_TE))
    return values


@pytest.mark.parametrize("run_sh", [
    _LAUNCH, "export ACCELERATE_FP8_BACKEND=TE\n" + _LAUNCH,
    "ACCELERATE_FP8_BACKEND=TE " + _LAUNCH,
    "accelerate launch --mixed_precision fp8 --fp8_backend=te train.py\n",
])
def test_quiet_the_backend_the_launch_script_states(tmp_path: Path, run_sh: str) -> None:
    want = "torchao" if run_sh == _LAUNCH else "te"
    assert _intent(tmp_path, run_sh)["intent.backend"] == want


def test_os_putenv_does_not_name_the_backend(tmp_path: Path) -> None:
    # os.putenv leaves os.environ as it was: accelerate's os.environ lookup does not see it
    (tmp_path / "x").mkdir()
    script = "import os\nos.putenv('ACCELERATE_FP8_BACKEND', 'TE')\n" + _ACC_SCRIPT
    root = tmp_path / "x"
    (root / ".git").mkdir()
    (root / "train.py").write_text(script)
    (root / "run.sh").write_text(_LAUNCH)
    from preflight.assume import apply_assumptions
    read = read_paths([str(root / "run.sh")])
    values, _ = intent.derive(apply_assumptions(Facts(read.facts, read.provenance), _AO_TE))
    assert values["intent.backend"] == "torchao"


@pytest.mark.xfail(strict=True, reason="shell19 (jobs/launchfacts._env asks launch_env without "
                   "unknown=True: a sourced file, `set -a`, `export $(...)`, `env X=V cmd` give "
                   "no env fact) + accelerate_backend (absence read as 'not set'): torchao picked")
@pytest.mark.parametrize("run_sh, extra", [
    ("set -a\n. ./env.sh\nset +a\n" + _LAUNCH, {"env.sh": "ACCELERATE_FP8_BACKEND=TE\n"}),
    ("export $(cat .env | xargs)\n" + _LAUNCH, {".env": "ACCELERATE_FP8_BACKEND=TE\n"}),
    ("source /etc/profile.d/job.sh\n" + _LAUNCH, {}),
    ("env ACCELERATE_FP8_BACKEND=TE " + _LAUNCH, {}),
], ids=["set-a", "export-subst", "source-outside", "env-prefix"])
def test_a_backend_variable_the_text_does_not_show_is_not_a_pick(
        tmp_path: Path, run_sh: str, extra: dict[str, str]) -> None:
    assert _intent(tmp_path, run_sh, extra)["intent.backend"] != "torchao"


def test_a_backend_a_plainly_sourced_file_exports_is_read(tmp_path: Path) -> None:
    # shell19: `source .env` (always run, plain export, in the job) is followed.
    run_sh = "source .env\n" + _LAUNCH
    assert _intent(tmp_path, run_sh, {".env": "export ACCELERATE_FP8_BACKEND=TE\n"}
                   )["intent.backend"] == "te"


@pytest.mark.xfail(strict=True, reason="shell19 (jobs/launchfacts._env: launch_env(unknown="
                   "False) takes an export in an undecided branch as run): a confident te")
@pytest.mark.parametrize("run_sh", [
    'if [ -n "$X" ]; then\n  export ACCELERATE_FP8_BACKEND=TE\nfi\n' + _LAUNCH,
    '[ -n "$X" ] && export ACCELERATE_FP8_BACKEND=TE\n' + _LAUNCH,
])
def test_a_backend_exported_in_an_undecided_branch_is_not_known(tmp_path: Path,
                                                                run_sh: str) -> None:
    assert isinstance(_intent(tmp_path, run_sh)["intent.backend"], Unknown)


@pytest.mark.xfail(strict=True, reason="shell19 (reading/launchenv.py: an export's word keeps "
                   "the `;` that ends it when the launch is on a later line: 'fp8;', FP8 Unknown)")
@pytest.mark.parametrize("run_sh", [
    "export ACCELERATE_MIXED_PRECISION=fp8; export X=1\naccelerate launch train.py\n",
    "if true; then export ACCELERATE_MIXED_PRECISION=fp8; fi\naccelerate launch train.py\n",
])
def test_an_export_ended_by_a_semicolon_keeps_its_value(tmp_path: Path, run_sh: str) -> None:
    assert _intent(tmp_path, run_sh)["intent.fp8"] is True


@pytest.mark.xfail(strict=True, reason="accelerate reader (refactor44 / free): a --config_file "
                   "out of the job is not opened, yet the backend is picked as if it named none")
def test_a_config_file_out_of_the_job_leaves_the_backend_unknown(tmp_path: Path) -> None:
    run_sh = "accelerate launch --config_file /etc/acc.yaml --mixed_precision fp8 train.py\n"
    assert isinstance(_intent(tmp_path, run_sh)["intent.backend"], Unknown)


@pytest.mark.xfail(strict=True, reason="accelerate_launch.COMMAND (refactor44 / free) knows "
                   "`accelerate launch` only: `python -m accelerate.commands.launch` runs the "
                   "same launcher, its --mixed_precision fp8 is dropped and FP8 reads False")
@pytest.mark.parametrize("launch", ["python -m accelerate.commands.launch",
                                    "python -m accelerate.commands.accelerate_cli launch"])
def test_accelerate_launched_as_a_module_is_read(tmp_path: Path, launch: str) -> None:
    assert _intent(tmp_path, f"{launch} --mixed_precision fp8 train.py\n")["intent.fp8"] \
        is not False


# --- fwrl10: checkpoint names of BF16 families (frameworks/ckptname.py) ----------------------------

@pytest.mark.parametrize("name, fp8", [
    ("XiaomiMiMo/MiMo-7B-RL", False), ("/models/DeepSeek-R1-Distill-Qwen-7B", False),
    ("MiMo-7B-RL-FP8", True), ("RedHatAI/DeepSeek-R1-Distill-Qwen-7B-FP8-dynamic", True),
    ("/ckpt/MiMo-7B-RL-fp8-dynamic/", True), ("MiMo-7B-RL-float8dq-row", True),
])
def test_quiet_family_names_and_separated_fp8_names_hold(name: str, fp8: bool) -> None:
    from preflight.frameworks.ckptname import says_fp8
    assert says_fp8(name) is fp8


@pytest.mark.xfail(strict=True, reason="fwrl11 (frameworks/ckptname.py): FP8_NAME wants a "
                   "[-_./] on both sides; a BF16 family name with fp8 glued to a word, after "
                   "another separator or in look-alike letters is read as the family's BF16")
@pytest.mark.parametrize("name", [
    "MiMo-7B-RL-fp8block", "MiMo-7B-RL-FP8block", "MiMo-7B-RL-fp8kv", "MiMo-7B-RLFP8",
    "deepseek-r1-distill-qwen-7b-fp8dyn", "MiMo-7B-RL-F8_E4M3", "MiMo-7B-RL-e4m3",
    "MiMo-7B-RL-ＦＰ8", "MiMo-7B-RL-FP８", "MiMo-7B-RL–FP8", "MiMo-7B-RL FP8", "MiMo-7B-RL+FP8",
    "MiMo-7B-RL(FP8)", "MiMo-7B-RL:fp8", "MiMo-7B-RL,FP8", "MiMo-7B-RL@fp8",
])
def test_a_bf16_family_name_that_says_fp8_otherwise_is_not_bf16(name: str) -> None:
    from preflight.frameworks.ckptname import says_fp8
    assert says_fp8(name) is not False


# --- redteam18's `{ }` groups in an if test (reading/shellchain.py): holding ----------------------
# Each expected arm is what bash 5 printed with `echo` in place of the launch; the walk may leave
# a test undecided (both arms) but never decides the other arm.

_ARMS = "; then python train.py --fp8 1; else python train.py --fp8 0; fi\n"


@pytest.mark.parametrize("test, bash", [
    ("A=1\nif { echo }; [ $A = 2 ]; }", "0"), ("A=1\nif { echo {; [ $A = 1 ]; }", "1"),
    ("A=1\nif { echo '}'; [ $A = 2 ]; }", "0"), ('A=1\nif { [ "}" = "}" ] && [ $A = 2 ]; }', "0"),
    ("A=1\nif { [ $A = 1 ] && echo a }; }", "1"), ("A=1\nif { [ $A = 2 ] || echo x}; }", "1"),
    ("A=1\nif { cat <<EOF\n}\nEOF\n[ $A = 2 ]; }", "0"),
    ("A=1\nif { cat <<EOF >/dev/null\n[ $A = 1 ] || { \nEOF\n[ $A = 2 ]; }", "0"),
    ("A=1\nif { echo {a,b}; [ $A = 2 ]; }", "0"), ("A=1\nif { B=${A:-}}; [ $A = 2 ]; }", "0"),
    ("A=1\nif { ( [ $A = 2 ] ); }", "0"), ("A=1\nif ! {\n [ $A = 1 ]\n}", "0"),
    ("A=1\nif " + "{ ! " * 50 + "[ $A = 1 ]" + "; }" * 50, "1"),
    ("A=1\nif " + "{ ! " * 51 + "[ $A = 1 ]" + "; }" * 51, "0"),
    ("A=1\nif { [ $A = 2 ] # }\n}", "0"), ("A=1\nif { [ $A = 1 ] # } || false\n}", "1"),
    ("A=1\nif { echo \\}; [ $A = 2 ]; }", "0"), ("A=1\nif { case $A in 1) false;; esac; }", "0"),
])
def test_a_brace_in_a_word_or_here_document_never_decides_the_other_arm(test: str,
                                                                        bash: str) -> None:
    from preflight.reading.shellexpand import launches
    from preflight.reading.shellheredoc import kept_text
    from preflight.reading.shellwords import split
    got = launches(split(kept_text(test + _ARMS)), lambda w: w.endswith("train.py"))
    assert {la.args[1].text for la in got} in ({bash}, {"0", "1"})


# --- primus2: presets named from a variable (frameworks/primus_launch.py) --------------------------
# A sourced file or `set -a` before the launch may export MODEL / BACKEND / an override's
# variable: launchenv gives that as the `*` entry, which the experiment's `${VAR:default}` did not
# look at (it read as the default: a confident BF16 for an FP8 preset the sourced file names).

_PRIMUS = """modules:
  pre_trainer:
    framework: torchtitan
    config: pre_trainer.yaml
    model: {model}
    overrides:
      training:
        local_batch_size: 4
{extra}"""
_PRIMUS_RUN = ("#!/bin/bash\n{env}./primus-cli direct -- train pretrain --config "
               "examples/torchtitan/configs/MI355X/exp.yaml\n")


def _primus(root: Path, env: str, model: str = "${MODEL:llama3.1_8B}.yaml", extra: str = "",
            files: dict[str, str] | None = None) -> Any:
    folder = root / "examples" / "torchtitan" / "configs" / "MI355X"
    folder.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (folder / "exp.yaml").write_text(_PRIMUS.format(model=model, extra=extra))
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    (root / "run.sh").write_text(_PRIMUS_RUN.format(env=env))
    read = read_paths([str(root / "run.sh")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("env, files", [
    ("set -a\n. ./env.sh\nset +a\n", {"env.sh": "MODEL=llama3.1_8B-fp8\n"}),
    ("source /opt/site/primus.env\n", {}),
    pytest.param("if [ -n \"$X\" ]; then source env.sh; fi\n",
                 {"env.sh": "export MODEL=llama3.1_8B-fp8\n"},
                 marks=pytest.mark.xfail(strict=True, reason="launchenv.process_env (shell owner): "
                                         "a `source` under an undecided `if` marks nothing, so "
                                         "${MODEL:default} takes its default: a confident BF16 "
                                         "(the lead's twin of redteam19's attack, session 44)")),
])
def test_a_sourced_file_may_name_the_preset(tmp_path: Path, env: str,
                                            files: dict[str, str]) -> None:
    got = _primus(tmp_path, env, files=files)
    assert isinstance(got, Unknown) and "MODEL" in got.reason


def test_a_sourced_file_whose_plain_exports_are_read_names_the_preset(tmp_path: Path) -> None:
    # shell19 (merged after this attack was written): a `source` that always runs, of a file in
    # the job whose exports are plain top-level lines, is followed: the FP8 preset is read.
    assert _primus(tmp_path, "source env.sh\n",
                   files={"env.sh": "export MODEL=llama3.1_8B-fp8\n"}) is True


def test_a_sourced_file_may_set_an_overrides_variable(tmp_path: Path) -> None:
    extra = "      model:\n        converters: ${CONVERTERS:primus_turbo}\n"
    hidden = _primus(tmp_path / "a", "set -a\n. ./env.sh\nset +a\n", model="llama3.1_8B.yaml",
                     extra=extra, files={"env.sh": "CONVERTERS=quantize.linear.float8\n"})
    assert isinstance(hidden, Unknown)
    shown = _primus(tmp_path / "b", "source env.sh\n", model="llama3.1_8B.yaml", extra=extra,
                    files={"env.sh": "export CONVERTERS=quantize.linear.float8\n"})
    assert shown is True


@pytest.mark.parametrize("env, fp8", [
    ("", False), ("export MODEL=llama3.1_8B-fp8\n", True),
    ("MODEL=llama3.1_8B-fp8 \\\n", True), ("env MODEL=llama3.1_8B-fp8 \\\n", True),
])
def test_quiet_a_preset_the_script_names_or_leaves_default(tmp_path: Path, env: str,
                                                           fp8: bool) -> None:
    assert _primus(tmp_path, env) is fp8


# --- sweep21 / fwacc: FP8D-ACC-0019 vs FP8D-HW-0001 by the script's own mixed_precision ----------
# The new `not (config.accelerate.accelerator.mixed_precision == fp8 and accelerate >= 1.8.0)`
# reads an absent fact as "not passed": an Accelerator(**kw) / (*a) whose mapping the text does
# not give fired ACC-0019's silent fp16 fallback with confidence (frameworks/accelerate_plugins.py
# _precision: now Unknown, both undetermined; a positional third argument is read).

_A100 = Path(__file__).resolve().parents[1] / "scenarios" / "_envs" / "a100.json"
_ACC_BODY = """
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096))
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
for step in range(10):
    loss = model(torch.randn(16, 4096, device=accelerator.device)).float().pow(2).mean()
    accelerator.backward(loss)
    opt.step()
"""


def _a100(root: Path, build: str, pre: str = "") -> tuple[set[str], set[str]]:
    import preflight
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text("import torch\nfrom accelerate import Accelerator\n" + pre +
                                   "\n" + build + _ACC_BODY)
    (root / "run.sh").write_text("#!/bin/bash\naccelerate launch --mixed_precision fp8 train.py\n")
    report = preflight.check([str(root / "run.sh")], smoke=False, snapshot=str(_A100), assume={
        "pkg.accelerate": "1.13.0", "pkg.transformer-engine": "2.9.0",
        "pkg.torch": "2.9.1+cu128"})
    pair = {"FP8D-ACC-0019", "FP8D-HW-0001"}
    return ({f.rule_id for f in report.findings} & pair,
            {u.rule_id for u in report.undetermined} & pair)


@pytest.mark.parametrize("build, pre", [
    ("accelerator = Accelerator(**kw)", "import mylib\nkw = mylib.kw()"),
    ("accelerator = Accelerator(*a)", "import mylib\na = mylib.a()"),
])
def test_a_mixed_precision_the_text_may_hide_decides_neither(tmp_path: Path, build: str,
                                                             pre: str) -> None:
    fired, undetermined = _a100(tmp_path, build, pre)
    assert not fired and undetermined == {"FP8D-ACC-0019", "FP8D-HW-0001"}


@pytest.mark.parametrize("build, rule", [
    ("accelerator = Accelerator()", "FP8D-ACC-0019"),
    ('accelerator = Accelerator(mixed_precision="fp8")', "FP8D-HW-0001"),
    ('accelerator = Accelerator(True, False, "fp8")', "FP8D-HW-0001"),     # by position
    ('accelerator = Accelerator(**dict(mixed_precision="fp8"))', "FP8D-HW-0001"),
    ('accelerator = Accelerator(log_with="wandb")', "FP8D-ACC-0019"),
])
def test_quiet_a_mixed_precision_the_text_gives_decides_one(tmp_path: Path, build: str,
                                                            rule: str) -> None:
    assert _a100(tmp_path, build)[0] == {rule}


@pytest.mark.xfail(strict=True, reason="accelerate reader (refactor44 / free): an Accelerator "
                   "built by a module outside the job (`mylib.make()`) is read as no argument")
def test_an_accelerator_built_outside_the_job_decides_neither(tmp_path: Path) -> None:
    assert not _a100(tmp_path, "accelerator = mylib.make()", "import mylib")[0]


# --- fwrl10: prime-rl's inference launch read beside the trainer (frameworks/prime_rl*) -----------

@pytest.mark.xfail(strict=True, reason="fwrl11 (prime_rl inference launch): words from a variable "
                   "the script never sets make the rollout's quantization Unknown, but its KV "
                   "cache dtype stays vLLM's default (False): --kv-cache-dtype fp8 may be in them")
@pytest.mark.parametrize("extra", ["$EXTRA", '"${ARGS[@]}"'])
def test_unknown_words_on_the_inference_launch_leave_the_kv_cache_unknown(
        tmp_path: Path, extra: str) -> None:
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    (job / "run_train.sh").write_text(
        "uv run torchrun --nproc-per-node 8 src/prime_rl/trainer/rl/train.py @ trainer.toml\n")
    (job / "trainer.toml").write_text("[model]\nname = \"Qwen/Qwen3-32B\"\n")
    (job / "run_inference_head.sh").write_text(f"uv run inference @ infer.toml {extra}\n")
    (job / "infer.toml").write_text("[model]\nname = \"Qwen/Qwen3-32b\"\n")
    read = read_paths([str(job / "run_train.sh"), str(job / "run_inference_head.sh")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.rollout.fp8"], Unknown)
    assert values.get("intent.rollout.kv_cache_fp8") is not False


# --- sweep21: FP8D-ACC-0099 (accelerate bf16 + the script's own TE autocast enabled=True) --------

_TE_ACC = """
import torch
import transformer_engine.pytorch as te
from accelerate import Accelerator
accelerator = Accelerator()
model = te.Linear(64, 64)
model, = accelerator.prepare(model)
{fn}
for step in range(3):
{loop}
"""
_TE_LOOP = "    with te.fp8_autocast(enabled=True):\n        model(torch.randn(4, 64)).sum().backward()\n"


def _acc_0099(root: Path, fn: str, loop: str, launch: str) -> tuple[bool, bool]:
    import preflight
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(_TE_ACC.format(fn=fn, loop=loop))
    (root / "run.sh").write_text("#!/bin/bash\n" + launch + "\n")
    report = preflight.check([str(root / "run.sh")], smoke=False, assume={
        "pkg.accelerate": "1.13.0", "pkg.transformer-engine": "2.9.0", "pkg.torch": "2.9.1+cu128"})
    return (any(f.rule_id == "FP8D-ACC-0099" for f in report.findings),
            any(u.rule_id == "FP8D-ACC-0099" for u in report.undetermined))


@pytest.mark.parametrize("launch, fired, undetermined", [
    ("accelerate launch --mixed_precision bf16 train.py", True, False),
    ("accelerate launch --mixed_precision fp8 train.py", False, False),
    ("accelerate launch --mixed_precision $MP train.py", False, True),     # MP never set here
])
def test_acc_0099_fires_only_on_a_stated_bf16(tmp_path: Path, launch: str, fired: bool,
                                             undetermined: bool) -> None:
    assert _acc_0099(tmp_path, "", _TE_LOOP, launch) == (fired, undetermined)


@pytest.mark.xfail(strict=True, reason="pytorch_te reader (free since pyfix9 merged): a TE "
                   "autocast(enabled=True) only in a function nothing calls is read as the "
                   "script's (config.pytorch.te.autocast.enabled true): ACC-0099 says the run "
                   "trains in FP8")
def test_acc_0099_ignores_an_autocast_nothing_runs(tmp_path: Path) -> None:
    fn = ("def evaluate():\n    with te.fp8_autocast(enabled=True):\n"
          "        model(torch.randn(4, 64))\n")
    loop = "    model(torch.randn(4, 64)).sum().backward()\n"
    fired, _ = _acc_0099(tmp_path, fn, loop, "accelerate launch --mixed_precision bf16 train.py")
    assert not fired


# --- pyfix9 holding: defaults only the run computes stay unknown by hand --------------------------

@pytest.mark.parametrize("default", [
    "os.environ.get('FP8', '1') == '1'", "bool(int(os.getenv('FP8', 1)))",
    "torch.cuda.get_device_capability()[0] >= 9", "cfgx.FP8", "FP8",
])
def test_a_default_the_run_computes_is_not_read_by_hand(tmp_path: Path, default: str) -> None:
    pre = "\nimport cfgx\nFP8 = True\nif os.environ.get('NOFP8'):\n    FP8 = False"
    text = _script(pre=pre).replace('default=True)', f"default={default})", 1)
    assert isinstance(_fp8(tmp_path, {"train.py": text}), Unknown)


@pytest.mark.parametrize("loop", [
    '    for flag, d in [("--use_fp8", True)]:\n        parser.add_argument(flag, default=d)\n',
    '    for flag in ("--use_fp8",):\n        parser.add_argument(flag, action="store_true")\n',
])
def test_options_added_in_a_loop_are_not_defaulted(tmp_path: Path, loop: str) -> None:
    text = _script(loop + _PARSE).replace(
        '    parser.add_argument("--use_fp8", action="store_true", default=True)\n'
        '    parser.add_argument("--no_fp8", dest="use_fp8", action="store_false")\n', "")
    assert _fp8(tmp_path, {"train.py": text}) is not True


@pytest.mark.xfail(strict=True, reason="reading/pyargedits.py (free): an `args.x = ...` under an "
                   "if is left to the evaluator, which reads the declared default (kept so "
                   "holdout19 gpt2scratch stays as reviewed; a guard the text cannot decide "
                   "should make it Unknown)")
def test_a_conditional_reassignment_after_parsing_is_not_the_default(tmp_path: Path) -> None:
    body = _PARSE + "    if os.environ.get('NO_FP8'):\n        args.use_fp8 = False\n"
    assert _fp8(tmp_path, {"train.py": _script(body)}) is not True
