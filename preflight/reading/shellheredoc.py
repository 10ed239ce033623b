"""Here-documents a variable takes: ``read -r -d '' CMD <<EOF ... EOF`` and ``CMD=$(cat <<EOF
... EOF)``. Their text is the variable's value, and the command that expands it runs it.

OpenRLHF's example scripts build the whole training command so (examples/scripts/train_sft.sh
l.3-30 @ v0.11.0: ``read -r -d '' training_commands <<EOF`` / ``openrlhf.cli.train_sft \\`` ...
/ ``deepspeed --module $training_commands``), and so do argument lists of other trainers
(``read -r -d '' MODEL_ARGS <<EOF``). Read as a body bash never runs, the launch expanded to
nothing and the job was unread.

What bash does (bash manual, "Here Documents" and the ``read`` builtin; POSIX.1-2017 XCU 2.7.4):
the body, when no part of the delimiter is quoted, undergoes parameter expansion, command
substitution and arithmetic, ``\\``-newline is removed and ``\\`` escapes only ``$``, `````
and ``\\`` (double quotes are literal); with a quoted delimiter it is taken as written; ``<<-``
removes leading tabs. ``read`` then reads up to its delimiter (``-d ''``: the NUL that never
comes, so the whole body; no ``-d``: the first line), removes backslashes unless ``-r``, and
trims blanks and newlines at both ends for one name. ``$(cat <<EOF ...)`` is the body less its
trailing newlines. :func:`taken` says whether a here-document is one of those; :func:`kept_text`
keeps their bodies for the readers that expand variables (every other body blanked, every
closing line kept, so the script still splits as bash splits it); :func:`values` gives their
values as text (``NAME=value`` of :func:`~.shellvars.collect_variables`); the parts with their
offsets are built by :mod:`.shellwords` (:meth:`.shellquote.QuoteScanner.here_body`).

A here-document a shell reads as its script (``sbatch <<EOF`` with no script named: "sbatch
reads the script from standard input", man sbatch; ``bash -s <<EOF``) holds commands that run:
:func:`runs` says so, and the lexer reads it as ``bash -c BODY``.

What is not followed stays unknown with the reason: ``read`` with several names or ``-a``
(split at run time), ``-n``/``-N``/``-u``, or arguments built from variables (the ``read``
builtin's options and value: :mod:`.shellread`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from preflight.reading.shell import HereDoc, heredocs, operator_end
from preflight.reading.shellfiles import written_script
from preflight.reading.shellquote import QuoteScanner, here_chars
from preflight.reading.shellread import ReadSpec, read_spec, read_value
from preflight.reading.shellread import read_words as _words
from preflight.reading.shellread import trimmed as _trim
from preflight.reading.shellread import value_parts as _read_value
from preflight.reading.shelltypes import Part, Split, Statement, Word

# (each matched from the start of the last command on the operator's line, never searched:
# a search from every position of a long line took minutes)
_READ = re.compile(
    r"[ \t]*(?:(?:then|do|else)[ \t]+)?(?:[A-Za-z_]\w*=\S*[ \t]+)*(?:builtin[ \t]+)?"
    r"read((?:[ \t]+(?:'[^'\n]*'|\"[^\"\n]*\"|\$'[^'\n]*'|[^\s'\"<>;&|()]+))*)[ \t]*")
_CAT = re.compile(r"\$\([ \t]*cat[ \t]*\Z")
_CAT_NAME = re.compile(r"(?:^|[\s;&|(])(?:(?:local|export|declare)[ \t]+)?([A-Za-z_]\w*)=\"?\Z")
_RUN = re.compile(r"[ \t]*(?:(?:then|do|else)[ \t]+)?(?:[A-Za-z_]\w*=\S*[ \t]+)*"
                  r"(?:(?:nohup|exec|time)[ \t]+)*(bash|sh|zsh|dash|ksh|sbatch)"
                  r"((?:[ \t]+(?:-[^\s<>;&|]*|\$\{?[A-Za-z_]\w*\}?))*)[ \t]*")
# (`sbatch ${SBATCH_ARG} <<EOF`, Megatron-MoE-ModelZoo's sbatch_benchmarking.sh: a variable's
# words are its options or a script named; the walk expands them and decides which)
_LAST = re.compile(r"[;&|(]|(?<!\$)\{")     # (a `${NAME}` ends no command)
WINDOW = 1024
"""Characters before a ``<<`` looked at (a real command's start is well within)."""
MAX_TAKEN = 64
"""Here-documents of one script looked at as values (a real one has a handful)."""
_CLOSE = re.compile(r"[ \t\n]*\)")
SHELLS = ("bash", "sh", "zsh", "dash", "ksh")
_CAT_AT = re.compile(r"\$\([ \t]*cat[ \t]*(?=<<)")
_ASSIGN = re.compile(r"([A-Za-z_]\w*)(\+?)=")


@dataclass(frozen=True)
class Taken:
    """A here-document whose text is used: a variable takes it, by ``read`` (``spec``) or
    ``$(cat <<EOF ...)`` (``close``: offset just past the ``)``; ``name``: the variable when
    the text says), or a shell runs it as its script (``sbatch <<EOF``, ``bash -s <<EOF``;
    ``name``: the command)."""

    doc: HereDoc
    how: str                      # read | cat | run
    spec: ReadSpec | None = None
    close: int = -1
    name: str | None = None


def taken(text: str, doc: HereDoc) -> Taken | None:
    """Whether a variable takes ``doc``'s text (``read ... <<EOF`` on the line of its
    operator, or ``$(cat <<EOF`` closed by a ``)`` right after the body), and how."""
    if doc.at < 0:
        return None
    start = max(text.rfind("\n", 0, doc.at) + 1, doc.at - WINDOW)
    before = text[start:doc.at]
    # the last command on the line: after its last ; & | ( { (a quoted one ends it too early:
    # then it is not taken, as before)
    cut = max((m.end() for m in _LAST.finditer(before)), default=0)
    last = before[cut:]
    m = _READ.fullmatch(last)
    if m is not None:
        words = _words(m.group(1))
        spec = read_spec(words) if words is not None else \
            ReadSpec((), why="read's arguments are not followed here")
        return Taken(doc, "read", spec=spec)
    after = text[operator_end(text, doc.at) or doc.at:text.find("\n", doc.at) % (len(text) + 1)]
    file = written_script(last, after, text, doc.end) if doc.closed else None
    if file is not None:
        return Taken(doc, "file", name=file)     # `cat > f.sh <<EOF` ... `bash f.sh`
    m = _RUN.fullmatch(last)
    if m is not None and not (m.group(1) in SHELLS and ("$" in m.group(2) or any(
            "c" in opt[1:] for opt in m.group(2).split() if not opt.startswith("--")))):
        return Taken(doc, "run", name=m.group(1))     # its stdin is the script it runs
    cat = _CAT.search(before[-64:])
    if cat is None or not doc.closed:
        return None
    head = before[:len(before) - len(before[-64:]) + cat.start()]
    m = _CAT_NAME.search(head[-256:])
    word_end = operator_end(text, doc.at)
    if word_end is None:
        return None
    line_end = text.find("\n", word_end)
    if line_end < 0 or text[word_end:line_end].strip():
        return None               # `$(cat <<EOF | tr ...)`: more runs on the text
    close = _CLOSE.match(text, doc.end)
    if close is None:
        return None
    return Taken(doc, "cat", close=close.end(), name=m.group(1) if m is not None else None)


def takes(text: str, docs: list[HereDoc]) -> list[Taken | None]:
    """:func:`taken` for each of the first :data:`MAX_TAKEN` of ``docs`` (the here-documents of
    ``text``), worked out once for :func:`kept_text`, :func:`runs` and
    :func:`.shellstops.read_stops`. The same on :func:`kept_text`'s result: what it blanks are
    whole body lines, never the operator's line nor what follows a ``$(cat <<EOF`` body."""
    return [taken(text, doc) for doc in docs[:MAX_TAKEN]]


def runs(text: str, doc: HereDoc) -> bool:
    """Whether a shell runs ``doc``'s text as its script (``sbatch <<EOF``): its commands run."""
    return is_run(taken(text, doc))


def is_run(got: Taken | None) -> bool:
    """:func:`runs` of a here-document whose :func:`taken` is known (:func:`takes`)."""
    return got is not None and got.how == "run"


def kept_text(text: str, docs: list[HereDoc] | None = None,
              took: list[Taken | None] | None = None) -> str:
    """``text`` for the readers that expand variables: the bodies a variable takes kept,
    every other body blanked (newlines kept), every closing line kept. ``took``: :func:`takes`
    of ``docs`` when already known."""
    docs = heredocs(text) if docs is None else docs
    took = takes(text, docs) if took is None else took
    out: list[str] = []
    at = 0
    for n, doc in enumerate(docs):
        if (n < MAX_TAKEN and took[n] is not None) or doc.start < at:
            continue
        end = doc.body_end if doc.body_end >= 0 else doc.end
        out += [text[at:doc.start], re.sub(r"[^\n]", " ", text[doc.start:end])]
        at = end
    out.append(text[at:])
    return "".join(out)


def body(text: str, doc: HereDoc) -> str:
    """The body as the command reading it gets it, expansions left as written (the tab and
    backslash rules of :func:`.shellquote.here_chars`, as the lexer's parts have them)."""
    out: list[str] = []

    def expansion(at: int) -> int:         # `$` / backquote: a character like any other
        out.append(text[at])
        return at + 1

    here_chars(text, doc, lambda chars, _: out.append(chars), lambda: None, expansion)
    return "".join(out)


def values(text: str) -> dict[str, str]:
    """``NAME: value`` of each here-document a variable takes in ``text`` (the first one of
    a name wins, as :func:`~.shellvars.collect_variables` keeps the first assignment)."""
    out: dict[str, str] = {}
    if "<<" not in text:
        return out
    for doc in heredocs(text)[:MAX_TAKEN]:
        got = taken(text, doc)
        if got is None:
            continue
        if got.how == "read" and got.spec is not None and got.spec.why is None and \
                got.spec.names:
            out.setdefault(got.spec.names[0], read_value(body(text, doc), got.spec))
        elif got.how == "cat" and got.name is not None:
            out.setdefault(got.name, body(text, doc).rstrip("\n"))
    return out


class HereValues(QuoteScanner):
    """Base of the lexer (:mod:`.shellwords`): the statements and parts a here-document a
    variable takes gives."""

    parts: int
    cur: list[Part]
    lit: list[str]
    docs: dict[int, HereDoc]
    subshell: list[int]
    out: Split

    def nested(self) -> HereValues:
        """A lexer of the same text one level down (no here-documents of its own)."""
        raise NotImplementedError

    def here_parts(self, doc: HereDoc) -> list[Part]:
        """The parts of ``doc``'s body, with their offsets (:meth:`QuoteScanner.here_body`)."""
        sub = self.nested()
        sub.here_body(doc)
        self.parts += sub.parts
        return sub.cur

    reading: Taken | None
    targets: list[tuple[Word, bool | None]]

    def take(self, words: list[Word], branch: tuple[int, ...]) -> bool:
        """The statement ``words`` whose here-document is used (:attr:`reading`): made into
        the assignment or the command it stands for. False: not one."""
        doc = self.reading
        first = [_plain(w) for w in words[:3]]
        if doc is not None and doc.how == "read" and first[0] == "read":
            self.read_into(doc, words[0][0].offset, branch)
        elif doc is not None and doc.how == "run" and doc.name in first:   # (nohup / exec)
            self.run_into(doc, words, branch)
        elif doc is not None and doc.how == "file" and first[0] in ("cat", "tee"):
            self.file_into(doc, words, branch)
        else:
            return False
        return True

    def run_into(self, got: Taken, words: list[Word], branch: tuple[int, ...]) -> None:
        """``sbatch <<EOF`` / ``bash -s <<EOF``: the body, expanded as the script expands it,
        is the script the command runs: read as ``bash -c BODY`` (:mod:`.shellexpand` splits
        it again, each word keeping its offset in the body)."""
        at = words[0][0].offset
        body = tuple(self.here_parts(got.doc)) or (Part("", at, quoted=True),)
        shell = (Part("bash", at),) if got.name == "sbatch" else ()
        run = [*words, *((shell,) if shell else ()), (Part("-c", at),), body]
        self.out.statements.append(Statement(tuple(run), at, branch,
                                             subshell=tuple(self.subshell)))

    def file_into(self, got: Taken, words: list[Word], branch: tuple[int, ...]) -> None:
        """``cat > F <<EOF`` / ``tee [-a] F <<EOF`` of a script the job runs later: written as
        ``printf '%s' BODY > F`` writes it, the body expanded as the here-document expands it
        (:mod:`.shellfiles` follows the run)."""
        at = words[0][0].offset
        body = tuple(self.here_parts(got.doc)) or (Part("", at, quoted=True),)
        tee = [w for w in words[1:] if _plain(w) != "-a"] if _plain(words[0]) == "tee" else []
        writes = tuple((w, any(_plain(o) == "-a" for o in words[1:])) for w in tee) \
            if tee else tuple(self.targets)
        self.out.statements.append(Statement(
            ((Part("printf", at),), (Part("%s", at, quoted=True),), body), at, branch,
            subshell=tuple(self.subshell), writes=writes))

    def read_into(self, got: Taken, at: int, branch: tuple[int, ...]) -> None:
        """``read [-r] [-d ''] NAME <<EOF``: NAME is set to the body as ``read`` takes it."""
        spec = got.spec or ReadSpec((), why="read is not followed here")
        if spec.why is not None:
            for name in spec.names:
                self.out.statements.append(Statement(((Part(
                    "$(read)", at, var=True, quoted=True, opaque=spec.why),),), at, branch,
                    name, subshell=tuple(self.subshell)))
            return
        parts = _read_value(self.here_parts(got.doc), spec)
        self.out.statements.append(Statement((tuple(parts),) if parts else (), at, branch,
                                             spec.names[0], subshell=tuple(self.subshell)))

    def cat_here(self, quoted: bool) -> bool:
        """``$(cat <<EOF ... EOF)`` at ``self.i``: the body less its trailing newlines, where
        the value is not split again (an assignment or inside ``"..."``). True if read."""
        m = _CAT_AT.match(self.text, self.i)
        doc = self.docs.get(m.end()) if m is not None else None
        got = taken(self.text, doc) if doc is not None else None
        if got is None or got.how != "cat":
            return False
        assigning = not self.cur and bool(_ASSIGN.fullmatch("".join(self.lit)))
        self.flush_lit()
        if quoted or assigning:
            parts = _trim(self.here_parts(got.doc), "\n", left=False)
            for part in parts or [Part("", self.i, quoted=True)]:
                self.add_part(part)
        else:
            self.add_part(Part("$(...)", self.i, var=True, quoted=quoted, opaque=(
                "the output of `cat <<EOF ...` is split into words at run time")))
        self.i = got.close
        return True


def _plain(word: Word) -> str | None:
    """The word's text when it is all literal and unquoted (a command name)."""
    return "".join(p.text for p in word) if all(not p.var and not p.quoted for p in word) \
        else None
