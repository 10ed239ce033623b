"""Turn one config file's bytes into plain data plus the line of every key, or a clear problem.

Every reader goes through here, so the robustness contract lives in one place: a size cap checked
before reading (a training config is kilobytes; a 20 MB file is a mistake or an attack), only
regular files (a FIFO or a device would hang a plain ``read``), binary and non-UTF-8 data refused,
YAML through :mod:`preflight.base.yamlsafe` (duplicate keys, alias bombs, language tags refused with
the line), JSON with duplicate keys refused with the line, TOML with ``tomllib``/``tomli``.
Nothing here raises for bad input: it raises :class:`ParseError` (message + line), which the
package turns into a ``ConfigProblem``. The facts of parsed data (flattened, capped) are
:mod:`.parsefacts`'s, importable from here too.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Any

from preflight.base import bounded
from preflight.base.keypaths import Path, nearest_line
from preflight.reading import textcache
from preflight.reading.boundary import refuse
from preflight.reading.parsefacts import (  # noqa: F401 - kept importable from here
    MAX_FACTS_PER_FILE,
    MAX_ITEMS_PER_FACT,
    MAX_ITEMS_PER_FILE,
    fact_value,
    flatten,
    jsonable,
    usable_key,
)


def _tomllib() -> Any:
    """The TOML parser, imported on first use: most checks read no TOML (torchtitan only)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib

MAX_BYTES = 1024 * 1024
"""Files above this size are refused unread (configs are a few KB; a launch script < 100 KB)."""

MAX_YAML_NODES = 10_000
"""Rough YAML size (lines + flow separators) above which parsing is refused before it starts:
safe loading costs ~50 us per line on a busy machine (40k lines took 2.9 s), and the largest
real training configs (NeMo's megatron_gpt_config.yaml) have a few hundred lines."""



class ParseError(ValueError):
    """A file that cannot be used as a config; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None, *, code: str = "unreadable",
                 level: str = "error", fix: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.code, self.level, self.fix = message, line, code, level, fix


@dataclass(frozen=True)
class Parsed:
    """A parsed file: its data and the 1-based line of each key path (nearest ancestor wins)."""

    data: Any
    lines: dict[Path, int]
    text: str
    duplicates: tuple[tuple[Path, int, int], ...] = ()
    """YAML keys given twice in one mapping: (key path, first line, later line); the later
    value is the one in ``data``, as PyYAML keeps it."""

    def line_of(self, path: Path) -> int | None:
        return nearest_line(self.lines, path)


def read_text(path: str) -> str:
    """The file's text, refusing non-regular, oversized, binary and non-UTF-8 files, and a file
    outside the job being read (:mod:`.boundary`).

    The file is opened non-blocking and checked again on the open descriptor
    (:func:`preflight.base.bounded.read_bytes`): a FIFO swapped in for a config between the
    ``stat`` and the ``open`` used to hang the run (issue 21 item 4)."""
    why = refuse(path)
    if why is not None:
        raise ParseError(why, code="outside_job", level="warning")
    if (kept := textcache.get(path)) is not None:    # one text per file per check
        return kept
    try:
        st = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            what = "a loop of symbolic links" if exc.errno == errno.ELOOP else \
                "a broken symbolic link"
            raise ParseError(f"{what} (to {os.readlink(path)!r})") from None
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    except ValueError:      # a NUL byte in the path
        raise ParseError("cannot read: the path holds a NUL byte") from None
    if not stat.S_ISREG(st.st_mode):
        raise ParseError(f"not a regular file ({bounded.kind_of(st.st_mode)})")
    if st.st_size > MAX_BYTES:
        raise ParseError(f"file is {st.st_size:,} bytes, over the {MAX_BYTES:,}-byte limit for a "
                         "config file; refusing to read it (is this really a training config?)")
    try:
        raw = bounded.read_bytes(path, MAX_BYTES)
    except bounded.NotRegularFile as exc:     # replaced between the stat and the open
        raise ParseError(f"not a regular file ({exc.kind})") from None
    except bounded.TooLarge:                  # grew between stat and read
        raise ParseError(f"file is over the {MAX_BYTES:,}-byte limit for a config file") from None
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or (b"\x00" in raw[:64] and _utf16_like(raw)):
        # Windows editors and PowerShell's `>` write UTF-16; every reader here wants UTF-8
        raise ParseError("UTF-16 text (as PowerShell and some Windows editors write it), not "
                         "UTF-8; save it as UTF-8", 1)
    if b"\x00" in raw:
        raise ParseError("binary data (NUL bytes), not a text config file",
                         raw[:raw.index(b"\x00")].count(b"\n") + 1)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text (invalid byte at offset {exc.start})",
                         raw[:exc.start].count(b"\n") + 1) from None
    return textcache.put(path, text)


def _utf16_like(raw: bytes) -> bool:
    """ASCII text in UTF-16 without a BOM: every other byte of the start is NUL."""
    head = raw[:64]
    return len(head) >= 8 and (head[1::2].count(0) == len(head[1::2]) or
                               head[0::2].count(0) == len(head[0::2]))


def _yaml_precheck(text: str) -> None:
    """Refuse YAML whose size would make parsing slow. (Nesting deep enough to crash libyaml is
    refused by yamlsafe.load itself, for every caller.)"""
    lines = text.count("\n") + 1
    if lines + text.count(",") > MAX_YAML_NODES:
        raise ParseError(f"{lines:,} lines / {text.count(','):,} separators: far larger than a "
                         "training config; refusing to parse it")


_HUGE_NUMBER = re.compile(r"\d{4000,}")


def _huge_number(text: str) -> ParseError | None:
    """Python's ``int()`` refuses more than 4,300 digits (CVE-2020-10735), so every parser raises
    a bare ValueError on such a number; say so, with the line."""
    match = _HUGE_NUMBER.search(text)
    if match is None:
        return None
    return ParseError(f"a number with {len(match.group(0)):,} digits; no setting is that large",
                      text.count("\n", 0, match.start()) + 1)


def parse_yaml(text: str) -> Parsed:
    from preflight.base import yamlsafe  # imported on first use: PyYAML costs ~11 ms to import

    _yaml_precheck(text)
    try:
        loaded = yamlsafe.load(text, keep_last=True)
    except yamlsafe.YamlError as exc:
        if "digits" in exc.message and (huge := _huge_number(text)) is not None:
            raise huge from None
        raise ParseError(f"invalid YAML: {exc.message}", exc.line) from None
    return Parsed(loaded.data, dict(loaded.lines), text, loaded.duplicates)


def parse_json(text: str) -> Parsed:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise ParseError("invalid JSON: nested too deeply") from None
    except ValueError:
        raise _huge_number(text) or ParseError("invalid JSON: a value cannot be read") from None
    return Parsed(data, _json_key_lines(text), text)


MAX_TOML_BYTES = 256 * 1024
"""TOML files above this are refused unparsed. ``tomllib`` is pure Python: about 0.6 MB/s on a
busy machine for plain tables, and slower per dotted-key segment (a 1 MB file of ``[t1]`` ...
``[t55902]`` tables took 2.2 s). torchtitan's own TOMLs are a few KB."""

MAX_TOML_KEY_PARTS = 64
"""More dotted parts in one key (``a.b.c`` has 3) are refused before parsing: tomllib's time
grows with the square of the parts (20 KB of ``a.a.a...`` took 2.3 s, 80 KB 47 s and 6 GB).
torchtitan's deepest key has 4 parts."""

_TOML_TOKEN = r"""[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*'"""
_TOML_RUN = re.compile(rf"(?:{_TOML_TOKEN})(?:[ \t]*\.[ \t]*(?:{_TOML_TOKEN}))*")


def _toml_precheck(text: str) -> None:
    """Refuse TOML that ``tomllib`` would take seconds on, with the line; linear time."""
    if len(text) > MAX_TOML_BYTES:
        raise ParseError(f"{len(text):,} characters of TOML, over the {MAX_TOML_BYTES:,} limit for "
                         "a TOML config (torchtitan's are a few KB); refusing to parse it")
    for m in _TOML_RUN.finditer(text):
        # a run of dotted tokens anywhere (a key, a table header, a bare line): counting them
        # outside keys too only over-counts text that is no valid TOML value anyway
        if m.group(0).count(".") >= MAX_TOML_KEY_PARTS and \
                len(re.findall(_TOML_TOKEN, m.group(0))) > MAX_TOML_KEY_PARTS:
            raise ParseError(f"a dotted key of more than {MAX_TOML_KEY_PARTS} parts; no config has "
                             "one, and TOML parsers take quadratic time on them", text.count(
                                 "\n", 0, m.start()) + 1)


def parse_toml(text: str) -> Parsed:
    _toml_precheck(text)
    tomllib = _tomllib()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ParseError(f"invalid TOML: {exc}", int(match.group(1)) if match else None) from None
    except RecursionError:
        raise ParseError("invalid TOML: nested too deeply") from None
    except ValueError:
        raise _huge_number(text) or ParseError("invalid TOML: a value cannot be read") from None
    return Parsed(data, _toml_key_lines(text), text)


# One token per match: a string, a bracket, a comma, a newline run, or a scalar (anything else up
# to the next structural character). Skipping whitespace and scalars in C rather than one
# character at a time in Python made a 1 MB JSON file's scan about three times faster.
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\],]|\n+|[^\s{}\[\],:"]+')


def _json_key_lines(text: str) -> dict[Path, int]:
    """Line of every key / array item of an already-valid JSON text; duplicate keys refused.

    ``json`` gives no positions and keeps the last of two equal keys silently (DeepSpeed would
    too), so one linear scan records lines and catches the duplicate with both lines.
    """
    lines: dict[Path, int] = {(): 1}
    # stack entries: [bracket, path, current key, array index, item started, seen keys]
    stack: list[list[Any]] = []
    line = 1
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group(0)
        c = tok[0]
        if c == "\n":
            line += len(tok)
            continue
        top = stack[-1] if stack else None
        if c == '"' and top is not None and top[0] == "{" and top[2] is None:
            key = json.loads(tok) if "\\" in tok else tok[1:-1]
            if key in top[5]:
                raise ParseError(f"duplicate key {key!r} (first at line {top[5][key]}); JSON "
                                 "readers silently keep only the last one", line)
            top[5][key] = line
            top[2] = key
            lines.setdefault((*top[1], key), line)
            continue
        if c in "}]":
            stack.pop()
            continue
        if c == "," and top is not None:     # valid JSON: a comma is always in a container
            if top[0] == "{":
                top[2] = None
            else:
                top[3] += 1
                top[4] = False
            continue
        # a value starts: a string, a scalar or a nested container
        if top is not None and top[0] == "[" and not top[4]:
            top[4] = True
            lines.setdefault((*top[1], top[3]), line)
        if c in "{[":
            path: Path = () if top is None else (*top[1], top[2] if top[0] == "{" else top[3])
            stack.append([c, path, None, 0, False, {}])
    return lines


_TOML_KEY = r'(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')'
_TOML_DOTTED = rf"{_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*"
_TOML_TABLE = re.compile(rf"^\[\[?\s*({_TOML_DOTTED})\s*\]\]?")
_TOML_ASSIGN = re.compile(rf"^({_TOML_DOTTED})\s*=")


def _split_dotted(dotted: str) -> Path:
    parts = re.findall(_TOML_KEY, dotted)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _toml_key_lines(text: str) -> dict[Path, int]:
    """Line of each table header and ``key =`` assignment (tomllib keeps no positions)."""
    lines: dict[Path, int] = {(): 1}
    table: Path = ()
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = _TOML_TABLE.match(s)
        if m:
            table = _split_dotted(m.group(1))
            lines.setdefault(table, lineno)
            continue
        m = _TOML_ASSIGN.match(s)
        if m:
            lines.setdefault((*table, *_split_dotted(m.group(1))), lineno)
    return lines
