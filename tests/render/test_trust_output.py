"""Reading the report and output hygiene (issue 24 items 5 and 9, issue 21 item 5).

- the default text view groups undetermined rules by what they need; ``-q`` has none of them;
- the support report opens with a short "paste this" block and states each Unknown reason once;
- Markdown shows a rule pack's title, message and reference URL as text: no ``javascript:``
  link, no HTML; only http(s) references are links;
- control characters are escaped in ``rules list`` / ``rules show``, and in ``plan`` /
  ``speedup`` output, which render no report document;
- progress: nothing into a pipe or with ``-q``; notes (rule warnings, files written) always;
- every command takes the same output flags.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from render_cases import findings_report

from preflight import cli
from preflight.cluster.__main__ import build_parser as cluster_parser
from preflight.facts import Unknown
from preflight.findings import Evidence, Finding, Fix, Reference, Severity, Undetermined
from preflight.outputs import COMMAND_FORMATS
from preflight.redact import Redactor
from preflight.render import render
from preflight.render.mdescape import md_code, md_link, md_text
from preflight.render.output import finish_output
from preflight.render.progress import progress_for

NEUTRAL = Redactor(home=None, user=None, hostnames=())
NVML = ("NVML: NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed here, "
        "or it is not mounted into this container (libnvidia-ml.so.1 is in no folder of "
        "LD_LIBRARY_PATH, /etc/ld.so.cache or the system library folders); nvidia-smi not found "
        "on PATH")
MISSING = "deepspeed is not installed here: run on the training node, pass --snapshot from it, " \
          "or --assume pkg.deepspeed=VERSION"
GPU_FACTS = ("gpu.count", "gpu.cc", "gpu.min_cc", "gpu.mig", "gpu.heterogeneous", "gpu.driver")


def _laptop_report():
    """A laptop's report: the GPU facts unknown for one NVML reason, deepspeed not installed,
    and undetermined rules that need one or the other."""
    base = findings_report()
    facts = base.facts.merged({n: Unknown(NVML) for n in GPU_FACTS}
                              | {"pkg.deepspeed.version": Unknown(MISSING)})
    und = tuple(Undetermined(f"FP8D-HW-00{i:02d}", Severity.ERROR, f"gpu rule {i}",
                             (Evidence("gpu.min_cc", Unknown(NVML), "nvml"),)) for i in range(10))
    und += tuple(Undetermined(f"FP8D-DS-00{i:02d}", Severity.ERROR, f"ds rule {i}",
                              (Evidence("pkg.deepspeed.version", Unknown(MISSING), "env"),))
                 for i in range(12))
    return dataclasses.replace(base, facts=facts, undetermined=und)


def test_undetermined_rules_are_grouped_by_what_they_need() -> None:
    text = render(_laptop_report(), "text", redactor=NEUTRAL, width=100)
    flat = " ".join(text.split())
    assert "12 rules need the training node's packages: run there, or --snapshot from there, " \
           "or --assume pkg.NAME=VERSION" in flat
    assert "10 rules need the training node's GPU" in flat
    assert "why: not installed here: deepspeed" in flat
    assert "ds rule 3" not in text and "? FP8D-DS-0003" not in text   # no line per rule ...
    verbose = render(_laptop_report(), "text", redactor=NEUTRAL, detail="verbose")
    assert "? FP8D-DS-0003  ds rule 3" in verbose                    # ... except under -v
    quiet = render(_laptop_report(), "text", redactor=NEUTRAL, detail="quiet").splitlines()
    assert len(quiet) == len(findings_report().findings) + 1 and "22 undetermined" in quiet[-1]


def test_the_support_report_opens_with_a_short_block_to_paste() -> None:
    md = render(_laptop_report(), "markdown", redactor=NEUTRAL)
    paste = md.split("## Paste this")[1].split("## Findings")[0]
    block = paste.split("```text\n")[1].split("\n```")[0].splitlines()
    assert md.index("## Paste this") < md.index("## Findings") and len(block) <= 20
    assert block[0].startswith("fp8-doctor 0.1.0: 1 error, 1 warning, 1 info")
    assert "error   FP8D-ACC-0001  FP8 silently not applied under DeepSpeed  " \
           "(/work/job/accelerate.yaml:4)" in block
    assert "torch: 2.13.0 (CUDA 12.8)" in block
    assert "GPU: unknown (NVML: NVML library (libnvidia-ml.so.1) not found)" in block


def test_each_unknown_reason_is_stated_once_in_the_support_report() -> None:
    md = render(_laptop_report(), "markdown", redactor=NEUTRAL)
    assert md.count("nvidia-smi not found on PATH") == 1      # 6 facts and 10 rules share it
    assert md.count("pass --snapshot from it, or --assume pkg.deepspeed") == 1
    assert "| `gpu.mig` | unknown (why: 1) |" in md or "| `gpu.mig` | unknown (why: 2) |" in md


HOSTILE_TITLE = "Click [here](javascript:alert(1)) <img src=x onerror=alert(2)>"
HOSTILE_URL = "javascript:alert(document.cookie)"


def _hostile_report():
    base = findings_report()
    pack = Finding("ACME-0001", Severity.ERROR, HOSTILE_TITLE,
                   "See ![x](https://evil.example/t.png) and <script>alert(3)</script> &amp; "
                   "`code [kept](as-is)`", Fix("[fix](javascript:alert(4))"),
                   references=(Reference("WEB", HOSTILE_URL),
                               Reference("SOURCE", "https://github.com/a/b/blob/v1/x (y).py")))
    return dataclasses.replace(base, findings=(*base.findings, pack))


def test_markdown_shows_pack_text_as_text() -> None:
    md = render(_hostile_report(), "markdown", redactor=NEUTRAL)
    # The block to paste is a fenced code block: literal text there, whatever it holds.
    md = re.sub(r"(?ms)^```text$.*?^```$", "", md)
    assert not re.search(r"(?<!\\)\]\(javascript:", md)   # no link opens on it
    assert not re.search(r"(?<!\\)<(img|script)", md) and not re.search(r"!\[x\]\(", md)
    assert "\\[here\\]" in md and "\\<img src=x onerror=alert(2)>" in md   # shown, escaped
    assert "&amp;amp;" in md                        # an entity is shown as written
    assert "`code [kept](as-is)`" in md             # code spans are literal already
    assert f"WEB: `{HOSTILE_URL}`" in md            # not a link
    assert "[SOURCE](https://github.com/a/b/blob/v1/x%20%28y%29.py)" not in md   # blank: no link
    assert "SOURCE: `https://github.com/a/b/blob/v1/x (y).py`" in md


def test_markdown_helpers() -> None:
    assert md_text("a [b](c) `x [y](z)` <d>") == "a \\[b\\](c) `x [y](z)` \\<d>"
    assert md_text("unmatched ` tick [a]") == "unmatched \\` tick \\[a\\]"
    assert md_link("SOURCE", "https://x.org/a_(b)") == "[SOURCE](https://x.org/a_%28b%29)"
    assert md_link("X", "file:///etc/passwd") == "X: `file:///etc/passwd`"
    assert md_code("a ``b`` c") == "```a ``b`` c```"


ESC = "\x1b]0;pwned\x07\x1b[2J"
BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_rules_list_and_show_escape_a_packs_control_characters(tmp_path: Path, capsys) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    bundled = Path(__file__).resolve().parents[2] / "rules" / "torch" / "FP8D-TORCH-0003.yaml"
    # YAML refuses raw control characters; a double-quoted scalar spells them as escapes.
    text = bundled.read_text().replace("id: FP8D-TORCH-0003", "id: ACME-0001").replace(
        "title: FP8 training asked for", 'title: "FP8\\e]0;pwned\\a\\e[2J training asked for"\n#')
    (pack / "ACME-0001.yaml").write_text(text)
    for argv in (["rules", "list", str(pack)], ["rules", "show", "ACME-0001", "--rules", str(pack)],
                 ["rules", "list", str(pack), "--format", "markdown"]):
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert "pwned" in out and not BAD.search(out), argv


def test_rules_show_knows_the_built_in_findings(capsys) -> None:
    assert cli.main(["rules", "show", "FP8D-CFG-NO-JOB", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["builtin"] is True and doc["title"].startswith("No job config was read")


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_plan_and_speedup_output_is_escaped_and_redacted(fmt: str) -> None:
    token = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456"
    raw = (json.dumps({"model": f"m{ESC}", "note": f"token {token}"}, indent=2)
           if fmt == "json" else f"model m{ESC} token {token}\n")
    out = finish_output(raw, fmt)
    assert token not in out and not BAD.search(out)
    if fmt == "json":
        assert json.loads(out)["model"].startswith("m\\x1b")
    assert token in finish_output(raw, fmt, redact=False)   # --no-redact keeps it


def test_no_progress_into_a_pipe_or_with_q_but_notes_always() -> None:
    for kwargs in ({}, {"live": True, "quiet": True}):
        stream = io.StringIO()
        with progress_for("fp8-doctor check", stream=stream, **kwargs) as progress:
            progress("probing this machine")
            progress("rule warning: ACME-0001: unknown key 'foo'")
            progress("wrote out.json")
        assert stream.getvalue().splitlines() == ["rule warning: ACME-0001: unknown key 'foo'",
                                                  "wrote out.json"], kwargs


@pytest.mark.parametrize("command", ["check", "report", "smoke", "plan", "speedup"])
def test_every_command_takes_the_same_output_flags(command: str, tmp_path: Path) -> None:
    fmt = COMMAND_FORMATS[command][-1]
    argv = [command, "--color", "never", "--format", fmt, "-o", str(tmp_path / "out"), "-q",
            "--no-redact"]
    args = cli.build_parser(command).parse_args(argv)
    assert (args.color, args.format, args.detail, args.no_redact) == ("never", fmt, "quiet", True)
    assert args.output == str(tmp_path / "out")


def test_the_multi_rank_mode_takes_them_too(tmp_path: Path) -> None:
    args = cluster_parser().parse_args(["--color", "never", "--format", "sarif", "-q", "-o",
                                        str(tmp_path / "r.sarif")])
    assert (args.color, args.format, args.detail) == ("never", "sarif", "quiet")
