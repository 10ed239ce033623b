"""Fuzz target for the ``--diff`` writer (issue 21, item 11): hostile folder names and line
contents around the edited line. Whatever they hold, the patch is only ``#`` lines and
well-formed hunks, each header names the one job file under a safe relative name (or none),
hunk line counts match what git and patch will count, redacted secrets never show, ``git
apply --check`` accepts what is printed, and each example stays within the time budget.

Budget and derandomization as in tests/fuzz (``FP8D_FUZZ_EXAMPLES`` raises it locally)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight.facts import Facts
from preflight.findings import EditSpec, Finding, Fix, Severity
from preflight.fixdiff import build, safety
from preflight.redact import redact_text

EXAMPLES = int(os.environ.get("FP8D_FUZZ_EXAMPLES", "40"))
SECONDS = 5.0
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])
GIT = shutil.which("git")
TOKEN = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ"

NAME = st.lists(st.one_of(
    st.text("abc019 ._-é", min_size=1, max_size=6), st.text("xyz/", min_size=1, max_size=4),
    st.sampled_from(["\n", "\t", "\r", "\x1b", "\x00", "\\", '"', " ", "..", "/", "-", "+++ b",
                     "--- a", "@@ -1 +1 @@", "new mode 100755", ".git", "\u2028", "\u202e",
                     "é", "job"]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)), min_size=1,
    max_size=6).map("".join)
LINE = st.one_of(
    st.sampled_from([" " * 5000, "--- a/x", "+++ b/../../etc/passwd", "@@ -1,3 +1,3 @@",
                     "\\ No newline at end of file", f"hub_token: {TOKEN}", "a\rb", "a\x0cb",
                     "x\u2028y", "\x85", "# comment", "fp8_format: E4M3", "  ", ""]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")
HEAD = re.compile(r"^(?:---|\+\+\+) [ab]/([^\t\n]+)\t?$")


def _check_patch(patch: str, allowed: set[str]) -> list[str]:
    """The header names of ``patch``, after checking every line's shape and each hunk's
    counts (what git and patch will read)."""
    lines = patch.split("\n")
    assert lines[-1] == "", "a patch ends with a newline"
    names, i = [], 0
    while i < len(lines) - 1:
        line = lines[i]
        if line.startswith("#"):
            i += 1
            continue
        m = HEAD.match(line)
        assert m, repr(line)
        names.append(m.group(1))
        i += 1
        if line.startswith("---"):
            continue
        while i < len(lines) - 1 and lines[i].startswith("@@"):
            h = HUNK.match(lines[i])
            assert h, repr(lines[i])
            old = int(h.group(2) or 1)
            new = int(h.group(4) or 1)
            i += 1
            while old or new:
                body = lines[i]
                assert body[:1] in (" ", "-", "+"), repr(body)
                old -= body[:1] in (" ", "-")
                new -= body[:1] in (" ", "+")
                i += 1
                if i < len(lines) - 1 and lines[i] == "\\ No newline at end of file":
                    i += 1
            assert old == 0 and new == 0
    for name in names:
        assert name in allowed, name
    return names


@FUZZ
@given(name=NAME, before=st.lists(LINE, max_size=5), after=st.lists(LINE, max_size=5),
       eof=st.booleans())
def test_the_diff_writer_holds_its_promises(name: str, before: list[str], after: list[str],
                                            eof: bool) -> None:
    with tempfile.TemporaryDirectory() as base:
        job = os.path.join(base, "job")
        folder = os.path.join(job, name)
        try:
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, "acc.yaml")
            text = "\n".join([*before, "fp8_format: E4M3", *after]) + ("\n" if eof else "")
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
        except (OSError, ValueError):
            return                      # a name this file system refuses: nothing to check
        if not os.path.isfile(path):
            return                      # e.g. a name with ".." that left the job folder
        facts = Facts({"config.accelerate.fp8_config.fp8_format": "E4M3",
                       "config.files": [{"path": path, "kind": "accelerate"}]},
                      {"config.accelerate.fp8_config.fp8_format": f"{path}:{len(before) + 1}"})
        finding = Finding("X-1", Severity.ERROR, "t", "m", Fix("fix", (), (EditSpec(
            "config.accelerate.fp8_config.fp8_format", "set", "HYBRID"),)))
        t0 = time.process_time()
        result = build([finding], facts, [job], base)
        patch = result.unified(base, redact_text)
        assert time.process_time() - t0 < SECONDS
        try:
            safe = {safety.header_name(path, base, [job], [path])}
        except safety.Refused:
            safe = set()
        names = _check_patch(patch, safe)
        assert TOKEN not in patch
        if names and GIT:
            subprocess.run([GIT, "init", "-q"], cwd=base, check=True)
            proc = subprocess.run([GIT, "apply", "--check", "-"], cwd=base,
                                  input=patch.encode("utf-8", "surrogatepass"),
                                  capture_output=True)
            assert proc.returncode == 0, (patch, proc.stderr)
