"""argparse's own error messages have their control characters escaped (issue 21 item 5).

Red team, this round: every message of fp8-doctor was escaped, but argparse's quote what was
typed, raw: ``fp8-doctor check --x$'\\e[2J'`` cleared the terminal of whoever read the CI log,
and an OSC 8 sequence made a link there. Both front doors (the console script's commands and the
multi-rank mode) use one parser class; subparsers inherit it.
"""

from __future__ import annotations

import pytest

from preflight.cli import main
from preflight.cluster.cli import build_parser as cluster_parser

ESC = "\x1b]8;;https://evil.example\x07x\x1b]8;;\x07\x1b[2J\u202e\x9b"


@pytest.mark.parametrize("argv", [
    ["check", "--x" + ESC],
    ["check", "--no-smoke", "--format", "text", "a", "--" + ESC],
    ["rules", "show", "FP8D-ACC-0001", "--y" + ESC],
    ["--z" + ESC],
    ["completion", "bash", "--w" + ESC],
])
def test_the_console_scripts_usage_errors_are_escaped(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err
    assert not any(c in err for c in "\x1b\x07\u202e\x9b"), repr(err)


def test_the_multi_rank_modes_usage_errors_are_escaped(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cluster_parser().parse_args(["--x" + ESC])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "\\x1b" in err and not any(c in err for c in "\x1b\x07\u202e\x9b"), repr(err)
