"""Launch-line flag edits for ``check --diff`` (issue 24, item 3): change, remove or add a
``--flag [value]`` in a shell script or argument file, keeping quoting and ``\\`` line
continuations.

Each physical line is split into words the way the shell quotes them (single and double quotes,
backslash escapes, a ``#`` comment, and the operators ``| & ; < >`` that end a command). A flag
is ``--name``, ``--name=value`` or ``--name value ...`` (values up to the next word that starts
with ``-``, an operator or the continuation); ``name`` matches with ``-`` or ``_``. An edit
replaces or removes exactly those words; a new flag goes right after a sibling flag of the same
command (never after a pipe or a comment). A line left with only ``\\`` goes, and a command's
last line going takes the ``\\`` of the line before it with it. The result is proven by splitting
the edited line again: every other word is as it was, and the flag says what was asked.
Lines are bounded by :data:`preflight.fixdiff.safety.MAX_LINE` before anything is scanned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from preflight.fixdiff.common import EditError, scalar
from preflight.fixdiff.safety import MAX_LINE

_OPS = "|&;<>()"


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str          # as written (quotes kept)
    op: bool = False   # an operator (| && ; > ...) or the continuation backslash


def words(line: str) -> list[Word]:
    """The words of one physical line (without its newline); a comment ends it."""
    out: list[Word] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in " \t\r":
            i += 1
            continue
        if ch == "#":
            break
        if ch == "\\" and line[i + 1:].strip() == "":
            out.append(Word(i, i + 1, "\\", True))
            break
        if ch in _OPS:
            j = i
            while j < n and line[j] in _OPS:
                j += 1
            out.append(Word(i, j, line[i:j], True))
            i = j
            continue
        j = i
        while j < n and line[j] not in " \t\r" and line[j] not in _OPS:
            c = line[j]
            if c == "\\":
                j += 2
            elif c in "'\"":
                close = j + 1
                while close < n and line[close] != c:
                    close += 2 if c == '"' and line[close] == "\\" else 1
                if close >= n:
                    raise EditError("an open quote runs past the line")
                j = close + 1
            else:
                j += 1
        out.append(Word(i, min(j, n), line[i:min(j, n)]))
        i = j
    return out


def _names(flag: str) -> set[str]:
    return {f"--{flag}", f"--{flag.replace('_', '-')}", f"--{flag.replace('-', '_')}"}


_BOOLS = {"true", "false", "1", "0", "yes", "no"}


def _count(current: Any) -> int | None:
    """How many value words a flag holding ``current`` has (None: a bool, which may be bare
    or followed by ``True``)."""
    if isinstance(current, bool) or current is None:
        return None
    return len(current) if isinstance(current, list) else 1


def _find(ws: list[Word], flag: str, current: Any = "") -> tuple[int, int] | None:
    """(index of the flag's word, index after its last value word) in ``ws``; ``current``
    (the value the reader saw) says how many words are its values (a flag's values are never
    guessed past that: ``--mixed_precision fp8 train.py`` holds one)."""
    names = _names(flag)
    hits = [i for i, w in enumerate(ws) if not w.op and (
        w.text in names or w.text.split("=", 1)[0] in names and "=" in w.text)]
    if len(hits) > 1:
        raise EditError(f"--{flag} is passed {len(hits)} times on the line")
    if not hits:
        return None
    i = hits[0]
    j = i + 1
    if "=" in ws[i].text:
        return i, j
    want = _count(current)

    def usable(k: int) -> bool:
        return k < len(ws) and not ws[k].op and not ws[k].text.startswith("-")

    if want is None:
        return (i, j + 1) if usable(j) and ws[j].text.strip("'\"").lower() in _BOOLS else (i, j)
    while j < i + 1 + want and usable(j):
        j += 1
    return i, j


def _line(text: str, number: int) -> tuple[list[str], str]:
    lines = text.split("\n")
    if not 1 <= number <= len(lines) or number == len(lines) and lines[-1] == "":
        raise EditError(f"line {number} is not in the file")
    cur = lines[number - 1]
    if len(cur) > MAX_LINE:
        raise EditError(f"line {number} is longer than {MAX_LINE} characters: not edited")
    return lines, cur


def passes(text: str, number: int, flag: str) -> bool:
    """Whether line ``number`` passes ``--flag`` (as a word of its own)."""
    try:
        return _find(words(_line(text, number)[1]), flag) is not None
    except EditError:
        return False


def _word(flag: str, value: Any, as_written: str | None) -> str:
    name = as_written or f"--{flag}"
    return name if value is True else f"{name} {scalar(value, 'shell')}"


_FALSE = {"true": "false", "1": "0", "yes": "no", "false": "false", "0": "0", "no": "no"}


def _false(word: str) -> str | None:
    """``word`` (a bool value as written: ``True``, ``'true'``, ``1``) turned false in the same
    spelling, None for a word that is no bool."""
    bare = word.strip("'\"")
    got = _FALSE.get(bare.lower())
    if got is None:
        return None
    got = got.upper() if bare.isupper() and len(bare) > 1 else \
        got.capitalize() if bare[:1].isupper() else got
    return word[:len(word) - len(word.lstrip("'\""))] + got + word[len(word.rstrip("'\"")):]


def set_flag(text: str, flag: str, number: int, value: Any, current: Any = "") -> str:
    """Give ``--flag`` on line ``number`` the value ``value`` (True: the bare flag; a list:
    several words; False: the flag's value word made false where it takes one -- ``--bf16
    True``, ``--merge_lora=true``: removing it would bring back the framework's default, true
    for ms-swift's ``--merge_lora`` -- and a bare ``store_true`` flag removed)."""
    lines, cur = _line(text, number)
    ws = words(cur)
    hit = _find(ws, flag, current)
    if hit is None:
        raise EditError(f"line {number} does not pass --{flag}")
    i, j = hit
    if ws[i].text.endswith("=") and value is not None:
        # `--merge_lora= true`: argparse reads an empty value (a bool flag then stops the job:
        # HfArgumentParser's string_to_bool refuses '') and `true` as a word of its own; an edit
        # to `--merge_lora false true` would start a job the file never described (redteam2)
        raise EditError(f"{ws[i].text} passes an empty value (the word after it is not its "
                        f"value: the framework's parser reads ''): not edited, write --{flag} "
                        "and its value by hand")
    if value is False:
        written = ws[i].text.split("=", 1)[1] if "=" in ws[i].text else \
            ws[j - 1].text if j > i + 1 else None
        if written is None:
            return delete_flag(text, flag, number, current)
        word = _false(written)
        if word is None:
            raise EditError(f"--{flag} holds {written!r}, not a true/false value: not edited")
        at = ws[i] if "=" in ws[i].text else ws[j - 1]
        lines[number - 1] = cur[:at.end - len(written)] + word + cur[at.end:]
        # proven: the line splits into the same words but that one, now false
        if [w.text for w in words(lines[number - 1])] != [
                w.text if w is not at else w.text[:len(w.text) - len(written)] + word
                for w in ws]:
            raise EditError(f"the edit of --{flag} would change other words of the line")
        return "\n".join(lines)
    if j == i + 1 and value is not True and i + 1 < len(ws) and ws[i + 1].text == "\\":
        raise EditError(f"--{flag}'s value is on the next line: not edited")
    written = ws[i].text.split("=", 1)[0]
    lines[number - 1] = cur[:ws[i].start] + _word(flag, value, written) + cur[ws[j - 1].end:]
    _prove(cur, lines[number - 1], flag, value, current)
    return "\n".join(lines)


def delete_flag(text: str, flag: str, number: int, current: Any = "") -> str:
    """Remove ``--flag`` and its values from line ``number``."""
    lines, cur = _line(text, number)
    ws = words(cur)
    hit = _find(ws, flag, current)
    if hit is None:
        raise EditError(f"line {number} does not pass --{flag}")
    i, j = hit
    start = ws[i].start
    while start > 0 and cur[start - 1] in " \t":
        start -= 1
    rest = cur[:start] + cur[ws[j - 1].end:]
    if not [w for w in words(rest) if w.text != "\\"]:
        del lines[number - 1]
        continued = any(w.text == "\\" for w in ws)
        prev = number - 2
        if not continued and prev >= 0 and lines[prev].rstrip().endswith("\\"):
            # the command's last line went: its previous line no longer continues
            lines[prev] = lines[prev].rstrip()[:-1].rstrip()
    else:
        lines[number - 1] = rest
        _prove(cur, rest, flag, None, current)
    return "\n".join(lines)


def add_flag(text: str, flag: str, number: int, sibling: str, value: Any,
             sibling_value: Any = "") -> str:
    """Add ``--flag value`` right after the sibling flag ``--sibling`` on line ``number``."""
    if value is False:
        return text                    # not passed is already false
    lines, cur = _line(text, number)
    ws = words(cur)
    hit = _find(ws, sibling, sibling_value)
    if hit is None:
        raise EditError(f"line {number} does not pass --{sibling}")
    if _find(ws, flag) is not None:
        raise EditError(f"line {number} already passes --{flag}")
    end = ws[hit[1] - 1].end
    style = "_" if "_" in ws[hit[0]].text.split("=", 1)[0][2:] else "-"
    name = "--" + (flag.replace("-", "_") if style == "_" else flag.replace("_", "-"))
    lines[number - 1] = cur[:end] + " " + _word(flag, value, name) + cur[end:]
    _prove(cur, lines[number - 1], flag, value)
    return "\n".join(lines)


def add_after_command(text: str, flag: str, number: int,
                      commands: tuple[tuple[str, ...], ...], value: Any) -> str:
    """Add ``--flag value`` right after the command words on line ``number`` (``accelerate
    launch``, one of ``commands``): a launch line that passes no flag of its own yet, only
    ``--config_file`` or nothing at all."""
    if value is False:
        return text                    # not passed is already false
    lines, cur = _line(text, number)
    ws = words(cur)
    if _find(ws, flag) is not None:
        raise EditError(f"line {number} already passes --{flag}")
    end = None
    for k, w in enumerate(ws):
        for cmd in commands:
            got = [x.text for x in ws[k:k + len(cmd)]]
            if got and got[0].rsplit("/", 1)[-1] == cmd[0] and got[1:] == list(cmd[1:]):
                end = ws[k + len(cmd) - 1].end
                break
        if end is not None:
            break
    if end is None:
        raise EditError(f"line {number} does not run {' '.join(commands[0])}")
    lines[number - 1] = cur[:end] + " " + _word(flag, value, "--" + flag) + cur[end:]
    _prove(cur, lines[number - 1], flag, value)
    return "\n".join(lines)


def _prove(old: str, new: str, flag: str, value: Any, current: Any = "") -> None:
    """Every word but the flag's is unchanged, and the flag is there with ``value`` (None:
    gone)."""
    def others(line: str, held: Any) -> list[str]:
        ws = words(line)
        hit = _find(ws, flag, held)
        return [w.text for k, w in enumerate(ws) if hit is None or not hit[0] <= k < hit[1]]

    if others(old, current) != others(new, value):
        raise EditError(f"the edit of --{flag} would change other words of the line")
    ws = words(new)
    hit = _find(ws, flag, value)
    if value is None:
        if hit is not None:
            raise EditError(f"--{flag} is still passed")
        return
    if hit is None:
        raise EditError(f"--{flag} did not land on the line")
    got = [w.text for w in ws[hit[0] + 1:hit[1]]]
    if "=" in ws[hit[0]].text:
        got = [ws[hit[0]].text.split("=", 1)[1]]
    want = [] if value is True else scalar(value, "shell").split(" ") if isinstance(
        value, list) else [scalar(value, "shell")]
    if got != want:
        raise EditError(f"--{flag} would read {' '.join(got)!r}, not {' '.join(want)!r}")
