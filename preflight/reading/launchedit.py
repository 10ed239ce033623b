"""Commands that edit, copy, print or read files but never run a program: none of them is a
launch line, whatever file they name.

Why (shell16, holdout23): Google's gpu-recipes A4 launchers patch the checkout before they run
it (training/a4/deepseek_v3/megatron-bridge-gke/nemo2602/.../launcher.sh l.83 @ 1f338bb4:
``sed -i -e '/pretrain(config=recipe/i ...' scripts/performance/run_script.py``), and that
``sed`` line, the first to name ``run_script.py``, was read as the Megatron-Bridge launch: the
job was unread. ``sed -i``, ``perl -pi -e``, ``ed``, ``ex``, ``awk -i inplace``, ``cat > f``,
``tee f``, ``patch``, ``cp`` / ``mv`` / ``install``, ``git apply``: a program they name is text
to them, never run (sed(1), perl(1) ``-i``, gawk(1) ``-i inplace``, patch(1), git-apply(1)).

One list for the text-level finders (:func:`.launch.find`, :func:`.launch.launcher_commands`,
through :func:`.launch.in_message`) and for the launch walk of :mod:`.shellexpand`
(:func:`passive`, on a command's words). A command that runs its argument (``find -exec``,
``xargs``, ``watch``, ``gcloud ... ssh --command``, ``docker run``) is not in it.
"""

from __future__ import annotations

import os
import re

PASSIVE = frozenset({
    # print, read, look up
    "echo", "printf", "cat", "grep", "egrep", "fgrep", "rg", "ls", "head", "tail", "wc", "less",
    "more", "diff", "cmp", "sort", "uniq", "cut", "tr", "jq", "yq", "file", "stat", "du",
    "md5sum", "sha1sum", "sha256sum", "readlink", "realpath", "dirname", "basename", "which",
    "type", "test", "[", "[[", "cd", "sleep", "kill", "pkill", "wget", "curl", "pip", "pip3",
    "find", "tar", "unzip", "zip", "gzip", "gunzip",
    # edit, copy, move, write (sed -i, perl -pi -e, awk -i inplace, ed, ex, patch, git apply)
    "sed", "gsed", "perl", "awk", "gawk", "mawk", "nawk", "ed", "ex", "patch", "git", "cp",
    "mv", "rm", "ln", "install", "rsync", "scp", "dd", "sponge", "truncate", "tee", "touch",
    "mkdir", "chmod", "chown", "gsutil",
})
"""Commands that never run a program named in their arguments (``find`` and ``curl`` only
with options that do not: ``-exec`` is left to the walk, as before)."""

_PREFIX = frozenset({"sudo", "nohup", "time", "exec", "builtin", "!"})
_KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "{", "!"})
_ASSIGN = re.compile(r"[A-Za-z_]\w*\+?=")
_SEPARATORS = (";", "&", "|", "(", "`")
WINDOW = 4096
"""Characters before a match looked at for its command's start (a real command line is far
shorter; past it the command is not judged passive: read as before)."""


def passive(words: list[str]) -> bool:
    """Whether the simple command of ``words`` (quotes removed; up to the word asked about) is
    one of :data:`PASSIVE` (after ``NAME=value`` prefixes, ``sudo`` / ``nohup`` / ``time`` /
    ``exec``, ``env`` with its assignments, ``command -v``): it runs no program it names."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGN.match(word) or word in _PREFIX or word in _KEYWORDS or \
                (word.startswith("-") and i and words[i - 1] in ("sudo", "env", "time")):
            i += 1
            continue
        if word == "env":
            i += 1
            continue
        if word == "command":
            return i + 1 < len(words) and words[i + 1] in ("-v", "-V")
        return os.path.basename(word) in PASSIVE and not _runs(os.path.basename(word),
                                                                words[i + 1:])
    return False


# redteam17: options with which a listed command runs a program it names (find(1) -exec,
# git-bisect(1) run, tar(1) --to-command); ``words`` end at the word looked at (the entry), so a
# file named before the option (`find -name train.py -exec rm {} \;`) stays passive
_RUNS = {"find": ("-exec", "-execdir", "-ok", "-okdir"), "tar": ("--to-command",)}


def _runs(name: str, rest: list[str]) -> bool:
    if name == "git":
        return "bisect" in rest and "run" in rest
    flags = _RUNS.get(name, ())
    return any(w == f or w.startswith(f + "=") for w in rest for f in flags)


def command_words(text: str, pos: int) -> list[str] | None:
    """The words (quotes removed, roughly) of the simple command that holds ``pos``, up to
    ``pos``: from the last ``;`` ``&`` ``|`` ``(`` ``$(`` or backquote before it on its
    ``\\``-continued line, or, when ``pos`` is inside a quoted string, from its opening quote
    or the last separator inside it (``CMD="cd x; sed -i ... x.py"``: the command the string
    holds). None: not known here (the line is longer than :data:`WINDOW`)."""
    floor = max(0, pos - WINDOW)
    start = text.rfind("\n", floor, pos) + 1
    while start > 1 and text[start - 2] == "\\":
        start = text.rfind("\n", floor, start - 1) + 1
    if start == 0 and floor > 0:
        return None
    begin = inner = start
    quote = ""
    i = start
    while i < pos:
        c = text[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        cut = _separator(text, i)
        if quote and c == quote:
            quote = ""
        elif not quote and c in "'\"":
            quote, inner = c, i + 1
        elif cut and quote:
            inner = i + cut
        elif cut:
            begin = i + cut
        i += 1
    got = text[inner if quote else begin:pos]
    return re.sub(r"\\\n", " ", got).replace("'", " ").replace('"', " ").split()


def _separator(text: str, i: int) -> int:
    """How many characters of a command separator start at ``i`` (0: none; ``>&`` / ``&>``
    are redirections)."""
    c = text[i]
    if text.startswith("$(", i):
        return 2
    if c == "&" and (text[i - 1:i] == ">" or text[i + 1:i + 2] == ">"):
        return 0
    return 1 if c in _SEPARATORS else 0


def not_run(text: str, pos: int) -> bool:
    """Whether the command holding ``pos`` edits, copies, prints or reads files and runs no
    program (:func:`passive`): ``sed -i '...' run_script.py`` is no launch of run_script.py."""
    words = command_words(text, pos)
    return words is not None and passive(words)
