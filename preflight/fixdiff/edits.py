"""Line edits of config text that keep everything else as written (comments, key order,
quoting, indentation): set a value, delete a key or flag, add a key or flag next to a sibling.

Each function takes the file's text and returns the new text, or raises :class:`EditError` with
the reason when the edit cannot be made safely (then the fix is listed, not guessed at). Formats:
YAML and TOML (``key: value`` / ``key = value`` lines), JSON (``"key": value`` lines), and shell
launch lines or argument files (``--flag value`` tokens).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from preflight.fixdiff.safety import MAX_LINE


class EditError(ValueError):
    """The edit cannot be made on this text without guessing."""


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _line(lines: list[str], number: int) -> str:
    """Line ``number``; one longer than ``MAX_LINE`` is not edited (every line regex here runs
    on a line that went through this check: issue 21, 100 KB of spaces took them 20-120 s)."""
    if not 1 <= number <= len(lines):
        raise EditError(f"line {number} is not in the file ({len(lines)} lines)")
    if len(lines[number - 1]) > MAX_LINE:
        raise EditError(f"line {number} is longer than {MAX_LINE} characters: not edited")
    return lines[number - 1]


def scalar(value: Any, fmt: str) -> str:
    """``value`` as the format writes a scalar."""
    if isinstance(value, bool):
        return ("true" if value else "false")
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if fmt == "yaml":
        plain = re.fullmatch(r"[A-Za-z_][\w.\-/]*", text) and text.lower() not in (
            "true", "false", "yes", "no", "on", "off", "null", "none", "~")
        return text if plain else json.dumps(text, ensure_ascii=False)
    if fmt == "shell":
        return shlex.quote(text)
    return json.dumps(text, ensure_ascii=False)   # json and toml basic strings


_KEY_LINE = {
    "yaml": r"^(?P<lead>\s*(?:-\s+)?)(?P<key>['\"]?{key}['\"]?)(?P<sep>\s*:\s*)(?P<value>[^#\n]*?)"
            r"(?P<tail>\s+#.*)?(?P<nl>\n?)$",
    "toml": r"^(?P<lead>\s*)(?P<key>['\"]?{key}['\"]?)(?P<sep>\s*=\s*)(?P<value>[^#\n]*?)"
            r"(?P<tail>\s+#.*)?(?P<nl>\n?)$",
    "json": r"^(?P<lead>\s*)(?P<key>\"{key}\")(?P<sep>\s*:\s*)(?P<value>.*?)(?P<tail>,?\s*)"
            r"(?P<nl>\n?)$",
}


def _match_key(fmt: str, key: str, line: str) -> re.Match[str]:
    m = re.match(_KEY_LINE[fmt].format(key=re.escape(key)), line)
    if not m:
        raise EditError(f"the line does not set {key!r} the plain way: {line.strip()[:80]!r}")
    return m


_INLINE = {
    "json": r'(?P<pre>"{key}"\s*:\s*)(?P<value>true|false|null|-?[\d.eE+-]+|"(?:[^"\\]|\\.)*")',
    "yaml": r"(?P<pre>(?<=[{{,\s])['\"]?{key}['\"]?\s*:\s+)(?P<value>[^,}}\]\s#]+)",
}


def _set_inline(lines: list[str], fmt: str, key: str, line: int, value: Any) -> bool:
    """``{"enabled": true}`` on one line: replace the one scalar value of ``key`` in it."""
    if fmt not in _INLINE:
        return False
    cur = lines[line - 1]
    hits = list(re.finditer(_INLINE[fmt].format(key=re.escape(key)), cur))
    if len(hits) != 1:
        return False
    m = hits[0]
    lines[line - 1] = cur[:m.start("value")] + scalar(value, fmt) + cur[m.end("value"):]
    return True


def set_value(text: str, fmt: str, key: str, line: int, value: Any) -> str:
    """Replace the value of ``key`` on ``line`` (a scalar on its own line, or the one scalar of
    that key in a flow / inline mapping on the line)."""
    lines = lines_of(text)
    cur = _line(lines, line)
    if not re.match(_KEY_LINE[fmt].format(key=re.escape(key)), cur) and _set_inline(
            lines, fmt, key, line, value):
        return "".join(lines)
    m = _match_key(fmt, key, cur)
    old = m.group("value").strip()
    if fmt in ("yaml", "toml") and old in ("", "|", ">", "|-", ">-") or old.startswith(("{", "[")) \
            and fmt != "yaml":
        raise EditError(f"{key!r} holds a block or collection on line {line}, not a scalar")
    tail = m.group("tail") or ""
    if fmt == "json":
        tail = ("," if tail.strip().startswith(",") else "") + tail.lstrip().lstrip(",")
    lines[line - 1] = (m.group("lead") + m.group("key") + m.group("sep") + scalar(value, fmt)
                       + tail + m.group("nl"))
    return "".join(lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t-"))


def delete_key(text: str, fmt: str, key: str, line: int) -> str:
    """Remove ``key`` on ``line`` and, in YAML, the block indented under it."""
    lines = lines_of(text)
    m = _match_key(fmt, key, _line(lines, line))
    if m.group("lead").lstrip().startswith("-"):
        raise EditError(f"{key!r} on line {line} starts a list item: removing it is not a "
                        "plain key deletion")
    end = line
    if fmt == "yaml":
        base = _indent(lines[line - 1])
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base
                                    or lines[end].lstrip().startswith("#") and
                                    _indent(lines[end]) > base):
            end += 1
        while end > line and not lines[end - 1].strip():
            end -= 1              # keep blank lines after the block
    del lines[line - 1:end]
    if fmt == "json":
        _fix_json_commas(lines, line - 1)
    return "".join(lines)


def _fix_json_commas(lines: list[str], at: int) -> None:
    """After removing a member before index ``at``: drop a trailing comma that now precedes a
    closing brace."""
    nxt = next((i for i in range(at, len(lines)) if lines[i].strip()), None)
    prev = next((i for i in range(at - 1, -1, -1) if lines[i].strip()), None)
    if nxt is None or prev is None:
        return
    if lines[nxt].lstrip().startswith(("}", "]")) and lines[prev].rstrip().endswith(","):
        stripped = lines[prev].rstrip()
        lines[prev] = stripped[:-1] + lines[prev][len(stripped):]


def add_key_before(text: str, fmt: str, path: tuple[str, ...], sibling_line: int,
                   value: Any) -> str:
    """Insert ``path`` (keys below the sibling's mapping) with ``value`` just before the
    sibling's line, at the sibling's indentation (so it joins the same mapping)."""
    lines = lines_of(text)
    sib = _line(lines, sibling_line)
    lead = sib[: len(sib) - len(sib.lstrip(" \t"))]
    if sib.lstrip().startswith("-"):
        raise EditError(f"the line {sibling_line} next to which {path[0]!r} would go is a list "
                        "item")
    step = "  " if "\t" not in lead else "\t"
    new: list[str] = []
    for depth, key in enumerate(path):
        pad = lead + step * depth
        last = depth == len(path) - 1
        if fmt == "yaml":
            new.append(f"{pad}{key}: {scalar(value, fmt)}\n" if last else f"{pad}{key}:\n")
        elif fmt == "json":
            if not last:
                raise EditError("adding a nested JSON object is not a one-line edit")
            new.append(f'{pad}{json.dumps(key)}: {scalar(value, fmt)},\n')
        elif fmt == "toml":
            if not last:
                raise EditError("adding a TOML table is not a one-line edit")
            new.append(f"{pad}{key} = {scalar(value, fmt)}\n")
    lines[sibling_line - 1:sibling_line - 1] = new
    return "".join(lines)


def _flag_re(flag: str) -> re.Pattern[str]:
    names = {flag, flag.replace("_", "-"), flag.replace("-", "_")}
    alt = "|".join(re.escape(n) for n in sorted(names))
    # --flag, --flag value, --flag=value (value: a quoted string or one word)
    return re.compile(rf"(?P<sp>\s*)--(?:{alt})(?:(?P<eq>=)|\s+(?!-))?(?P<val>(?(eq)|"
                      rf"(?<=\s))(?:\"[^\"]*\"|'[^']*'|[^\s\\]+))?(?=\s|$)")


def set_flag(text: str, flag: str, line: int, value: Any) -> str:
    """Set ``--flag``'s value on ``line`` (True: the bare flag; False: remove it)."""
    if value is False:
        return delete_flag(text, flag, line)
    lines = lines_of(text)
    cur = _line(lines, line)
    m = _flag_re(flag).search(cur)
    if not m:
        raise EditError(f"line {line} does not pass --{flag}")
    word = f"--{_as_written(cur, flag)}" + ("" if value is True else f" {scalar(value, 'shell')}")
    lines[line - 1] = cur[:m.start()] + m.group("sp") + word + cur[m.end():]
    return "".join(lines)


def _as_written(line: str, flag: str) -> str:
    for name in (flag, flag.replace("_", "-"), flag.replace("-", "_")):
        if f"--{name}" in line:
            return name
    return flag


def delete_flag(text: str, flag: str, line: int) -> str:
    """Remove ``--flag [value]`` from ``line``; a line left with nothing but ``\\`` goes too."""
    lines = lines_of(text)
    cur = _line(lines, line)
    m = _flag_re(flag).search(cur)
    if not m:
        raise EditError(f"line {line} does not pass --{flag}")
    rest = cur[:m.start()] + cur[m.end():]
    if rest.strip() in ("", "\\"):
        del lines[line - 1]
    else:
        lines[line - 1] = rest
    return "".join(lines)


def add_flag_after(text: str, flag: str, line: int, value: Any) -> str:
    """Add ``--flag value`` on the line that passes a sibling flag (after that flag's word)."""
    if value is False:
        raise EditError(f"--{flag} is not passed: nothing to remove")
    lines = lines_of(text)
    cur = _line(lines, line)
    body = cur.rstrip("\n")
    cont = body.rstrip().endswith("\\")
    core = body.rstrip()[:-1].rstrip() if cont else body.rstrip()
    word = f"--{flag}" + ("" if value is True else f" {scalar(value, 'shell')}")
    lines[line - 1] = f"{core} {word}" + (" \\" if cont else "") + cur[len(body):]
    return "".join(lines)
