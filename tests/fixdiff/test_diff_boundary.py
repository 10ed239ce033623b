"""``check --diff`` never names or shows a file outside the job, nor under an unsafe name
(issue 21, item 3: a newline in a folder name put headers of the attacker's choosing into the
patch; a tab sent ``patch -p1`` to another file; a snapshot's provenance made ``--diff`` print
lines of ``~/.docker/config.json``). Each case runs the real CLI and applies its output with
real ``git apply`` and ``patch -p1`` in a temporary repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from preflight import api
from preflight.cli import main
from preflight.facts import Facts
from preflight.findings import EditSpec, Finding, Fix, Severity
from preflight.fixdiff import build, diff_output, safety

GIT = shutil.which("git")
PATCH = shutil.which("patch")
DS = '{\n  "bf16": {"enabled": true},\n  "fp16": {\n    "enabled": true\n  },\n' \
     '  "zero_optimization": {"stage": 2}\n}\n'
H100 = ["--assume", "gpu=H100", "--assume", "pkg.deepspeed=0.15.4"]
HEADER = re.compile(r"^(?:---|\+\+\+) [ab]/(?P<name>[^\t\n]*)\t?$")


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` with its bytes and mode (to see what a patch changed)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        if ".git" in Path(dirpath).parts:
            continue
        for name in names:
            p = Path(dirpath, name)
            out[str(p.relative_to(root))] = (p.read_bytes(), p.stat().st_mode)
    return out


def _diff(cwd: Path, argv: list[str], capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    rc = main(["check", *argv, "--diff", *H100])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _headers(patch: str) -> list[str]:
    return [m.group("name") for ln in patch.split("\n") if (m := HEADER.match(ln))]


def _apply_both(repo: Path, patch: str) -> None:
    """Apply ``patch`` with git apply and, on a fresh copy, patch -p1 (where installed)."""
    if GIT:
        subprocess.run([GIT, "init", "-q"], cwd=repo, check=True)
        subprocess.run([GIT, "apply", "--allow-empty", "-"], cwd=repo, input=patch.encode(),
                       capture_output=True)
    if PATCH:
        subprocess.run([PATCH, "-p1", "--batch", "--forward", "-s"], cwd=repo,
                       input=patch.encode(), capture_output=True)


def _assert_only_job_files(patch: str, job_files: set[str]) -> None:
    names = _headers(patch)
    for line in patch.split("\n"):
        if line.startswith(("---", "+++")):
            assert HEADER.match(line), line
    assert set(names) <= job_files, names
    for name in names:
        assert not name.startswith("/") and ".." not in name.split("/"), name
        assert all(ch.isprintable() for ch in name), name
    assert not re.search(r"^(?:old|new) mode|^diff --git|^rename|^copy", patch, re.M), patch


@pytest.mark.skipif(GIT is None and PATCH is None, reason="needs git or patch")
def test_a_newline_in_a_folder_name_is_refused_not_written_into_the_patch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The old header "--- a/job/x<NL>new mode 100755<NL>+++ b/ds.json" named ./ds.json, a file
    # outside the job folder, and asked for its mode to change.
    repo = tmp_path / "repo"
    folder = repo / "job" / "x\nnew mode 100755\n+++ b"
    folder.mkdir(parents=True)
    (folder / "ds.json").write_text(DS)
    (repo / "ds.json").write_text(DS)           # outside the job: must stay as it is
    before = _tree(repo)
    rc, patch, err = _diff(repo, ["job"], capsys, monkeypatch)
    assert rc == 1
    _assert_only_job_files(patch, set())
    assert "U+000A" in err and "never written into a patch" in err
    _apply_both(repo, patch)
    assert _tree(repo) == before


@pytest.mark.skipif(PATCH is None, reason="needs patch")
def test_a_tab_in_a_name_cannot_send_patch_to_another_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # patch -p1 ends a name at a tab: "job/run\tx/ds.json" was read as "job/run".
    repo = tmp_path / "repo"
    (repo / "job" / "run\tx").mkdir(parents=True)
    (repo / "job" / "run\tx" / "ds.json").write_text(DS)
    (repo / "job" / "run").write_text(DS)        # same text: the hunk would apply to it
    before = _tree(repo)
    rc, patch, err = _diff(repo, ["job"], capsys, monkeypatch)
    _assert_only_job_files(patch, {"job/run"})
    assert "U+0009" in err + patch
    _apply_both(repo, patch)
    assert _tree(repo)["job/run"] == before["job/run"]


def test_a_hostile_snapshot_cannot_make_diff_show_a_file_never_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "home" / ".docker" / "config.json"
    secret.parent.mkdir(parents=True)
    secret.write_text('{\n  "auths": {"r": {"auth": "c2VjcmV0OnBhc3N3b3Jk"}},\n'
                      '  "fp16": {"enabled": true}\n}\n')
    outside = tmp_path / "outside" / "ds.json"
    outside.parent.mkdir()
    outside.write_text(DS)
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({
        "schema_version": "1",
        "facts": {"config.deepspeed.fp16.enabled": True, "config.deepspeed.bf16.enabled": True,
                  "config.files": [{"path": str(secret), "kind": "deepspeed"},
                                   {"path": "../outside/ds.json", "kind": "deepspeed"}],
                  "config.kinds": ["deepspeed"]},
        "provenance": {"config.deepspeed.fp16.enabled": f"{secret}:3",
                       "config.deepspeed.bf16.enabled": "../outside/ds.json:2"}}))
    job = tmp_path / "job"
    job.mkdir()
    for argv in (["--snapshot", str(snap)], ["--snapshot", str(snap), str(job)]):
        rc, patch, err = _diff(job, argv, capsys, monkeypatch)
        assert "c2VjcmV0" not in patch + err and "auths" not in patch + err
        assert _headers(patch) == [], patch
        assert "../outside" not in patch


def test_a_symlink_out_of_the_job_and_a_file_outside_cwd_are_refused(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    target = tmp_path / "elsewhere.json"
    target.write_text(DS)
    (job / "ds.json").symlink_to(target)
    read = [str(job / "ds.json")]
    with pytest.raises(safety.Refused, match="outside the job"):
        safety.header_name(str(job / "ds.json"), str(tmp_path), [str(job)], read)
    (job / "real.json").write_text(DS)
    with pytest.raises(safety.Refused, match="outside the current folder"):
        safety.header_name(str(job / "real.json"), str(job / "sub"), [str(job)],
                           [str(job / "real.json")])
    assert safety.header_name(str(job / "real.json"), str(tmp_path), [str(job)],
                              [str(job / "real.json")]) == "job/real.json"
    with pytest.raises(safety.Refused, match="not a file this run read"):
        safety.header_name(str(job / "real.json"), str(tmp_path), [str(job)], [])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_text_refuses_what_is_no_small_regular_text_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(safety.Refused, match="not a regular file"):
        safety.read_text(str(fifo))            # returns at once: opened without blocking
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "x")
    with pytest.raises(safety.Refused, match="symbolic link"):
        safety.read_text(str(link))
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * (safety.MAX_BYTES // 4))
    with pytest.raises(safety.Refused, match="larger than"):
        safety.read_text(str(big))
    for data, why in ((b"a: 1\x00\n", "NUL"), (b"a: \xff\n", "not UTF-8")):
        (tmp_path / "t.yaml").write_bytes(data)
        with pytest.raises(safety.Refused, match=why):
            safety.read_text(str(tmp_path / "t.yaml"))


def _finding(rule_id: str, edit: EditSpec, text: str = "fix it") -> Finding:
    return Finding(rule_id, Severity.ERROR, "t", "m", Fix(text, (), (edit,)))


def test_a_name_with_a_space_gets_gits_trailing_tab_and_applies_both_ways(
        tmp_path: Path) -> None:
    job = tmp_path / "my job"
    job.mkdir()
    (job / "ds.json").write_text(DS)
    path = str(job / "ds.json")
    facts = Facts({"config.deepspeed.fp16.enabled": True,
                   "config.files": [{"path": path, "kind": "deepspeed"}]},
                  {"config.deepspeed.fp16.enabled": f"{path}:4"})
    finding = _finding("X-1", EditSpec("config.deepspeed.fp16.enabled", "set", False))
    result = build([finding], facts, [str(job)], str(tmp_path))
    patch = result.unified(str(tmp_path))
    assert "--- a/my job/ds.json\t\n" in patch
    for tool in ([GIT, "apply", "-"] if GIT else None, [PATCH, "-p1", "-s"] if PATCH else None):
        if tool is None:
            continue
        repo = tmp_path / f"repo-{Path(tool[0]).name}"
        shutil.copytree(job, repo / "my job")
        if tool[0] == GIT:
            subprocess.run([GIT, "init", "-q"], cwd=repo, check=True)
        proc = subprocess.run(tool, cwd=repo, input=patch.encode(), capture_output=True)
        assert proc.returncode == 0, proc.stderr
        assert json.loads((repo / "my job" / "ds.json").read_text())["fp16"] == {"enabled": False}


def test_context_lines_pass_the_redaction(tmp_path: Path) -> None:
    """A token next to the edited line is not shown: the hunk narrows to lines without one,
    and a file whose edit cannot be shown without it is listed, never printed masked (a
    patch with masked lines would not apply) - until --no-redact."""
    job = tmp_path / "job"
    job.mkdir()
    token = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ"
    text = (f"hub_token: {token}\nx: 1\ny: 2\nmixed_precision: fp8\ndistributed_type: "
            f"MULTI_GPU\nfp8_config:\n  backend: TE\n  fp8_format: E4M3\n")
    (job / "acc.yaml").write_text(text)
    path = str(job / "acc.yaml")
    facts = Facts({"config.accelerate.fp8_config.fp8_format": "E4M3",
                   "config.files": [{"path": path, "kind": "accelerate"}]},
                  {"config.accelerate.fp8_config.fp8_format": f"{path}:8"})
    report = api.Report(facts=facts, findings=(_finding("X-1", EditSpec(
        "config.accelerate.fp8_config.fp8_format", "set", "HYBRID")),))
    out = diff_output(report, [str(job)], str(tmp_path))
    assert token not in out.patch and "+  fp8_format: HYBRID" in out.patch
    assert " hub_token" not in out.patch                 # the context narrowed past it
    (job / "acc.yaml").write_text(f"mixed_precision: fp8\nfp8_config:\n  hub_token: {token}\n"
                                  "  fp8_format: E4M3\n")
    facts = Facts(dict(facts.values), {"config.accelerate.fp8_config.fp8_format": f"{path}:4"})
    out = diff_output(api.Report(facts=facts, findings=report.findings), [str(job)],
                      str(tmp_path))
    assert token not in out.patch + out.notes and out.patch == ""
    assert "looks like a secret" in out.notes
    raw = diff_output(api.Report(facts=facts, findings=report.findings), [str(job)],
                      str(tmp_path), redact=False)
    assert "+  fp8_format: HYBRID" in raw.patch


def test_notes_stay_comments_whatever_a_fix_text_holds(tmp_path: Path) -> None:
    """A rule pack's fix text with newlines and escapes cannot break out of its ``#`` lines,
    and long texts wrap between words instead of being cut."""
    evil = ("line one\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\x1b[2J\ttab " +
            "word " * 60 + "https://github.com/NVIDIA/TransformerEngine/tree/main/" + "docs/" * 20)
    report = api.Report(facts=Facts({}), findings=(
        Finding("PACK-1", Severity.ERROR, "t", "m", Fix(evil)),))
    out = diff_output(report, [str(tmp_path)], str(tmp_path))
    assert out.patch == ""
    for line in out.notes.rstrip("\n").split("\n"):
        assert line.startswith("#") and "\x1b" not in line and "\t" not in line
        assert len(line) <= 100 or " " not in line.split(" ", 2)[-1].strip(), line
    words = " ".join(ln.lstrip("# ") for ln in out.notes.split("\n"))
    assert "word word" in words and "https://github.com/NVIDIA/TransformerEngine/tree/main/" + "docs/" * 20 in words


def test_editors_are_bounded_on_huge_lines(tmp_path: Path) -> None:
    """100 KB of spaces on the edited line took the old line regexes 20-120 s (issue 21, item
    6): the structured editors scan linearly, and a launch line over safety.MAX_LINE is not
    scanned at all."""
    from preflight.fixdiff import jsonedit, shelledit, tomledit, yamledit
    from preflight.fixdiff.common import EditError, Op

    pad = " " * 100_000
    cases = ((jsonedit, '{"fp16": {"enabled":' + pad + "true}}\n"),
             (yamledit, "fp16:\n  enabled:" + pad + "true\n"),
             (tomledit, "[fp16]\nenabled =" + pad + "true\n"))
    for editor, text in cases:
        t0 = time.process_time()
        try:
            out = editor.apply(text, Op("set", ("fp16", "enabled"), False))
            assert "false" in out
        except EditError:
            pass
        assert time.process_time() - t0 < 5, editor.__name__   # generous: it is linear
    t0 = time.process_time()
    with pytest.raises(EditError, match="longer than"):
        shelledit.set_flag("torchrun" + pad + "--fp8-format x\n", "fp8-format", 1, "hybrid")
    assert time.process_time() - t0 < 5


def test_empty_diff_applies_with_the_readme_pipeline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to apply: stdout is empty (the notes go to stderr), the exit code is the
    findings', and both documented pipelines succeed on it."""
    job = tmp_path / "job"
    job.mkdir()
    (job / "acc.yaml").write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: no\n")
    rc, patch, err = _diff(tmp_path, ["job"], capsys, monkeypatch)
    assert patch == "" and "no config edit to make" in err
    assert rc in (0, 1)
    if GIT:
        subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
        assert subprocess.run([GIT, "apply", "--allow-empty"], cwd=tmp_path, input=b"",
                              capture_output=True).returncode == 0
    if PATCH:
        assert subprocess.run([PATCH, "-p1"], cwd=tmp_path, input=b"",
                              capture_output=True).returncode == 0
