"""``fp8-doctor check --diff``: the fixes of config findings as one unified diff.

A rule whose fix is a change to a config file the job owns says so as data (``fix.edits``: set,
replace, delete or move a ``config.<kind>.<key>`` fact). :mod:`.place` puts each edit where the
fact's provenance says it was read or, for a key the file does not have yet, beside its nearest
sibling; round-trip editors make it (:mod:`.yamledit` on ruamel.yaml, :mod:`.tomledit` on
tomlkit, :mod:`.jsonedit`, :mod:`.shelledit` for launch-line flags), changing only the value,
key or flag concerned, so comments, key order, quoting and continuations stay as written, and
each proves its result by reloading it. Findings whose fix is not a file edit, and edits that
cannot be placed without guessing, are listed beside the diff with the reason. fp8-doctor still writes no
user file: the diff goes to stdout or ``-o``; ``git apply`` / ``patch -p1`` apply it.

The diff names and shows only files this run read inside the job the user named, under safe
names, with context lines redacted (:mod:`.safety`, issue 21).
"""

from __future__ import annotations

import difflib
import os
import textwrap
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.findings import EditSpec, Location
from preflight.fixdiff import safety
from preflight.fixdiff.common import EditError
from preflight.fixdiff.layers import layers_of
from preflight.fixdiff.place import Placed, expand, place

_SHELL_EXT = (".sh", ".bash", ".slurm", ".sbatch", ".txt", ".args")
WIDTH = 100
"""``#`` lines are wrapped at this width (between words: issue 24 found fix texts cut mid-word)."""


@dataclass
class DiffResult:
    """Old and new text per file, and what could not be turned into an edit."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    applied: list[tuple[str, EditSpec]] = field(default_factory=list)
    listed: list[tuple[str, str]] = field(default_factory=list)   # (rule id, why not a diff)
    placed_in: list[tuple[str, EditSpec, str]] = field(default_factory=list)  # (.., file)
    names: dict[str, str] = field(default_factory=dict)            # path -> header name

    def unified(self, cwd: str | None = None,
                redact: Callable[[str], str] | None = None) -> str:
        """The patch. Each file's header name was checked when the file was read
        (:func:`safety.header_name`); with ``redact``, a hunk whose lines the redaction would
        change gets less context, and a file whose edit cannot be shown without such a line is
        left out (listed with the reason), as a patch with masked lines would not apply."""
        out = []
        for path, (old, new) in sorted(self.files.items()):
            if old == new:
                continue
            name = self.names.get(path) or os.path.relpath(path, cwd or os.getcwd())
            chunk = _hunks(old, new, None)
            if chunk is None:
                self.listed.append(("--diff", f"{safety.escape(name)}: the lines of the edit "
                                    "or next to it hold control or bidirectional characters, "
                                    "which a terminal does not show as they are; not shown"))
                continue
            chunk = _hunks(old, new, redact)
            if chunk is None:
                self.listed.append(("--diff", f"{safety.escape(name)}: the lines of the edit "
                                    "or next to it hold what looks like a secret or a personal "
                                    "path; not shown (--no-redact shows it)"))
                continue
            tab = "\t" if " " in name else ""   # as git writes it, so patch -p1 reads the name
            out.append(f"--- a/{name}{tab}\n+++ b/{name}{tab}\n" + "".join(chunk))
        return "".join(out)


def _hunks(old: str, new: str, redact: Callable[[str], str] | None) -> list[str] | None:
    for context in (3, 2, 1):
        chunk = list(difflib.unified_diff(_nl(old), _nl(new), n=context, lineterm="\n"))[2:]
        # a line a terminal would show otherwise than it applies (an escape sequence that
        # hides text or sets the clipboard, a bidi override: redteam2) can be neither escaped
        # nor masked in a patch: less context, else the file is listed
        if all(ln.startswith("@@") or safety.plain(ln) and (redact is None or redact(ln) == ln)
               for ln in chunk):
            return _mark_eof(chunk)
    return None


def _nl(text: str) -> list[str]:
    """Lines as git and patch split them: at ``\\n`` only (``str.splitlines`` also splits at
    ``\\r``, ``\\x0c``, ``\\u2028`` ..., which would put two of git's lines in one hunk line)."""
    lines = text.split("\n")
    out = [ln + "\n" for ln in lines[:-1]]
    return out + [lines[-1]] if lines[-1] else out


def _mark_eof(chunk: list[str]) -> list[str]:
    """A last line without a newline gets git's ``\\ No newline at end of file`` marker."""
    return [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in chunk]


def fmt_of(path: str, text: str) -> str | None:
    low = path.lower()
    if low.endswith((".yaml", ".yml")):
        return "yaml"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".toml"):
        return "toml"
    if low.endswith(_SHELL_EXT) or text.startswith("#!"):
        return "shell"
    return None


class _Files:
    """The files an edit may touch: read once, through :mod:`.safety` (only what this run read
    inside the named job, under a safe name)."""

    def __init__(self, facts: Any, roots: Collection[str], cwd: str | None) -> None:
        read = facts.get("config.files") if roots else None
        self.read = [f["path"] for f in read if isinstance(f, dict)
                     and isinstance(f.get("path"), str)] if isinstance(read, list) else []
        if roots:
            # the files a launch line composed (`@ a.toml @ b.toml`): read with it (.layers)
            given = getattr(facts, "values", {})
            self.read += [name for key, value in given.items()
                          if key.startswith("config.") and key.endswith(".layers")
                          for _, name in layers_of(value) or () if name]
        self.roots = [r if os.path.isdir(r) else os.path.dirname(os.path.abspath(r))
                      for r in roots]
        self.cwd = cwd or os.getcwd()
        self.texts: dict[str, str] = {}
        self.names: dict[str, str] = {}

    def text(self, path: str) -> tuple[str, str]:
        if path not in self.texts:
            if not self.roots:
                raise safety.Refused("no job named on the command line (--diff edits only the "
                                     "files of the job you name: fp8-doctor check job/ --diff)")
            self.names[path] = safety.header_name(path, self.cwd, self.roots, self.read)
            self.texts[path] = safety.read_text(path)
        fmt = fmt_of(path, self.texts[path])
        if fmt is None:
            raise EditError("not a format fp8-doctor edits")
        return self.texts[path], fmt


def build(findings: Sequence[Any], facts: Any, roots: Collection[str] = (),
          cwd: str | None = None) -> DiffResult:
    """The diff for ``findings`` (each with ``fix.edits``) against the facts' provenance.

    ``roots``: the paths the user named (folders, files); only config files this run read
    under them are edited (:mod:`.safety`). Every edit is first placed (file, line,
    operation); then each file's edits are made from its last line up, so an edit never moves
    the line another one was placed at."""
    result = DiffResult()
    placed: list[tuple[Placed, str, EditSpec]] = []
    seen: set[tuple[str, str]] = set()
    files = _Files(facts, roots, cwd)
    for finding in findings:
        specs = getattr(finding.fix, "edits", ()) or ()
        if not specs:
            if finding.fix.text:
                result.listed.append((finding.rule_id, "not a config edit: " + finding.fix.text))
            continue
        # A finding's edits go in together or not at all: half of "delete it from the YAML
        # and pass it on the launch line" would drop the setting.
        mine: list[tuple[Placed, str, EditSpec]] = []
        failed = covered = False
        elsewhere: list[EditSpec] = []
        for spec in (s for given in specs for s in expand(given, facts.values)):
            if (spec.fact, spec.action) in seen:
                covered = True          # another finding's edit makes it already
                continue
            kind = spec.fact.split(".")[1]
            if spec.action == "set" and not any(n.startswith(f"config.{kind}.")
                                                for n in facts.values):
                # A key to add for a framework this job has no file of at all: that edit is
                # for another framework's jobs (FP8D-TAO-0011: accelerate's fsdp_version on a
                # torchtitan job), not half of this job's fix. Said below if nothing else fits.
                elsewhere.append(spec)
                continue
            try:
                op = place(spec, facts, files)
            except (EditError, safety.Refused) as exc:
                where = _where(spec.fact, facts)
                result.listed.append((finding.rule_id, f"{spec.fact}{where}: {exc}"))
                failed = True
                continue
            if op is not None:
                try:
                    op.make(files.texts[op.path])   # each edit is proven on its own first
                except EditError as exc:
                    result.listed.append((finding.rule_id,
                                          f"{spec.fact}{_where(spec.fact, facts)}: {exc}"))
                    failed = True
                    continue
                mine.append((op, finding.rule_id, spec))
        if elsewhere and not mine and not failed and not covered:
            failed = True
            for spec in elsewhere:
                result.listed.append((finding.rule_id, f"{spec.fact}: no "
                                      f"{spec.fact.split('.')[1]} file read that could take it"))
        if failed and mine:
            result.listed.append((finding.rule_id, "its other edits are left out too (they "
                                  "belong together): " + ", ".join(s.fact for _, _, s in mine)))
        elif not failed:
            placed.extend(mine)
            seen.update((s.fact, s.action) for _, _, s in mine)
            if not mine and not covered and finding.fix.text:
                # Every edit had nothing to change in the files read (the setting is made in
                # Python code, or derived): the finding stands, so say it is by hand, never
                # drop it (audit of issue 24 item 3: FP8D-TE-0006 from TERecipeKwargs vanished).
                result.listed.append((finding.rule_id, "nothing to edit in the config files "
                                      "read (the setting is made elsewhere, e.g. in Python "
                                      "code): " + finding.fix.text))
    for op, _, _ in placed:
        result.files.setdefault(op.path, (files.texts[op.path], files.texts[op.path]))
    result.names = dict(files.names)
    for op, rule_id, spec in sorted(placed, key=lambda p: (p[0].path, -p[0].line)):
        old, cur = result.files[op.path]
        try:
            result.files[op.path] = (old, op.make(cur))
        except EditError as exc:
            result.listed.append((rule_id, f"{spec.fact}{_where(spec.fact, facts)}: {exc}"))
            continue
        result.applied.append((rule_id, spec))
        result.placed_in.append((rule_id, spec, op.path))
    return result


def _where(fact: str, facts: Any) -> str:
    """`` (in NAME)`` for a listed edit: the file's name as the user named it, escaped."""
    loc = Location.from_source(facts.source(fact)) if fact in facts.values else None
    return f" (in {safety.escape(loc.path)})" if loc is not None else ""


@dataclass(frozen=True)
class DiffOutput:
    """What ``check --diff`` prints: ``patch`` on stdout (or ``-o``): the ``#`` notes, then the
    diff; empty when there is nothing to apply, so ``git apply --allow-empty`` and ``patch -p1``
    take it. ``notes`` alone go to stderr when the patch is empty."""

    patch: str
    notes: str
    edits: int


def diff_output(report: Any, roots: Collection[str], cwd: str | None = None, *,
                redact: bool = True) -> DiffOutput:
    """The ``--diff`` of ``report`` for the job the user named (``roots``: the paths given on
    the command line); ``redact``: the context lines and notes pass the report's redaction
    (a hunk that would show a masked line is narrowed, else left out and listed)."""
    from preflight.redact.diff import redact_diff  # key-aware, per diff line (issue 21.5)

    mask = redact_diff if redact else None
    result = build(report.sorted_findings(), report.facts, roots, cwd)
    diff = result.unified(cwd, mask)
    shown = {path for path, (old, new) in result.files.items() if old != new}
    applied = [(rid, spec) for rid, spec, path in result.placed_in if path in shown]
    ids = sorted({rid for rid, _ in applied})
    head = _wrap(f"fp8-doctor check --diff: {len(applied)} edit(s) for {len(ids)} finding(s) "
                 f"({', '.join(ids)}); apply with `git apply` or `patch -p1` from this folder, "
                 "then check again." if diff else
                 "fp8-doctor check --diff: no config edit to make (the patch is empty).")
    if result.listed:
        head.append("# Not turned into an edit (do these by hand):")
        for rid, why in result.listed:
            head += _wrap(f"{rid}: {why}", "#   ", "#       ")
    notes = "\n".join(head) + "\n"
    if mask is not None:
        notes = "\n".join(mask(line) for line in notes.split("\n"))
    return DiffOutput(notes + diff if diff else "", notes, len(applied))


def _wrap(text: str, first: str = "# ", rest: str = "#   ") -> list[str]:
    """``#`` lines of at most :data:`WIDTH` columns, broken between words (a word longer than
    the width, such as a URL, stays whole on its own line)."""
    return textwrap.wrap(safety.comment(text), WIDTH, initial_indent=first,
                         subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def render_diff(report: Any, roots: Collection[str], cwd: str | None = None, *,
                redact: bool = True) -> str:
    """The patch text of :func:`diff_output` (notes and diff; empty when nothing to apply)."""
    return diff_output(report, roots, cwd, redact=redact).patch
