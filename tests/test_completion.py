"""``fp8-doctor completion``: scripts generated from the parser complete what the parser takes.

The bash script is exercised in a real bash (the function is called with COMP_WORDS set, as
bash's completion machinery does); zsh loads that same function through bashcompinit; fish is
checked line by line against the parser."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from preflight.cli import build_parser, main
from preflight.commands.completion import script, walk
from preflight.outputs import FORMATS

BASH = shutil.which("bash")


def _complete(words: list[str]) -> list[str]:
    """What bash offers for ``words`` (the last one is being completed)."""
    body = script(build_parser(), "bash")
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    prog = (f"{body}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=(); "
            "_fp8_doctor; printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", prog], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    return [w for w in out.splitlines() if w]


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@pytest.mark.parametrize("words,expected", [
    (["fp8-doctor", ""], {"check", "snapshot", "report", "smoke", "rules", "completion"}),
    (["fp8-doctor", "check", "--format", ""], {"text", "json", "markdown", "sarif"}),
    (["fp8-doctor", "check", "--format", "json", "--fail-on", "w"], {"warning"}),
    (["fp8-doctor", "check", "--fo"], {"--format"}),
    (["fp8-doctor", "smoke", "--backend", ""], {"auto", "scaled_mm", "torchao", "te"}),
    (["fp8-doctor", "smoke", "--format", ""], {"text", "json"}),
    (["fp8-doctor", "rules", ""], {"list", "show", "lint", "test"}),
    (["fp8-doctor", "rules", "show", "--format", ""], {"text", "json"}),
    (["fp8-doctor", "completion", ""], {"bash", "zsh", "fish"}),
])
def test_bash_completes_from_the_parser(words: list[str], expected: set[str]) -> None:
    got = set(_complete(words))
    assert expected <= got, got
    if words[-1]:
        assert all(g.startswith(words[-1]) for g in got)


@pytest.mark.skipif(BASH is None, reason="bash not installed")
def test_bash_leaves_paths_to_file_completion() -> None:
    """A PATH or an -o FILE gets no words from us: `complete -o default` completes files."""
    assert _complete(["fp8-doctor", "check", "job/"]) == []
    assert _complete(["fp8-doctor", "check", "-o", ""]) == []


def test_every_option_of_check_is_in_every_script() -> None:
    tree = walk(build_parser())
    check = next(c for c in tree.subcommands if c.path == ("check",))
    flags = {f for o in check.options for f in o.flags if f.startswith("--")}
    assert {"--format", "--fail-on", "--quiet", "--verbose", "--no-smoke"} <= flags
    for shell in ("bash", "zsh", "fish"):
        text = script(build_parser(), shell)
        missing = [f for f in flags if (f if shell != "fish" else f"-l {f[2:]}") not in text]
        assert not missing, (shell, missing)


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_scripts_parse(shell: str, tmp_path) -> None:
    path = tmp_path / f"c.{shell}"
    path.write_text(script(build_parser(), shell))
    # zsh's script is bash-compatible past its two autoload lines; bash -n checks the syntax.
    subprocess.run([BASH, "-n", str(path)], check=True, timeout=30)


def test_fish_script_has_subcommands_and_choices() -> None:
    text = script(build_parser(), "fish")
    assert "-n '__fish_use_subcommand' -a check" in text
    formats = " ".join(FORMATS)     # every report format of the table, junit included
    assert "junit" in formats
    assert f"-n '__fish_seen_subcommand_from check' -l format -x -a '{formats}'" in text
    assert "__fish_seen_subcommand_from rules && __fish_seen_subcommand_from show" in text
    assert "-n '__fish_seen_subcommand_from check' -F" in text       # PATH: files
    assert "-n '__fish_seen_subcommand_from completion' -F" not in text


def test_cli_prints_the_script_and_refuses_an_unknown_shell(capsys) -> None:
    assert main(["completion", "bash"]) == 0
    assert "complete -o default -o bashdefault -F _fp8_doctor fp8-doctor" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["completion", "powershell"])
    assert info.value.code == 2
