"""redteam19 (session 44): attacks on what session 44 turned from Unknown into an answer.

- pyfix9's script read by hand (``python FILE.py``, its argparse defaults) and, the same class,
  a launch line's words: the declared default / word was taken as the value even where the file
  itself changes it before or after parsing (reading/pyargedits.py, fixed as a class):
  ``parser.set_defaults``, ``sys.argv`` written before parsing, ``parse_args([...])`` /
  ``parse_args(argv)`` / ``namespace=``, ``args.x = ...`` / ``setattr`` / ``vars(args).update``
  after it, and (by hand) a sub-command's options, which ``python FILE.py`` never sets.
  Each case below read a confident FP8 yes before the fix (the file turns it off).
Open (strict xfail, owner named): two parsers of one file sharing a dest (reading/pyoption.py
shared_dest merges them by dest: free since pyfix9 merged); ``check train.py run.sh`` where
run.sh runs it as ``python -m train`` (jobs/walk.py re-read: shell19, as the existing xfail in
tests/jobs/test_pyjob_byhand.py).
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


@pytest.mark.xfail(strict=True, reason="jobs/walk.py reads a named script once: a launch script "
                   "named after it that runs it as `python -m train` does not bring its "
                   "arguments (shell19; tests/jobs/test_pyjob_byhand.py's xfail, the -m form)")
def test_a_module_launch_named_after_the_script_gives_its_arguments(tmp_path: Path) -> None:
    files = {"train.py": _script(), "run.sh": "python -m train --no_fp8\n"}
    assert _fp8(tmp_path, files, "train.py", "run.sh") is False
