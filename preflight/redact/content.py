"""The content rules of redaction: credentials recognised by their shape, wherever they appear.

Token shapes (``hf_``, ``ghp_``, ``glpat-``, AWS keys, JWTs, private keys ...), credentials in
URLs and ``user:pass@host``, e-mail addresses, ``NAME=VALUE`` pairs whose NAME says credential,
and the long hex / base64 runs :class:`preflight.redact.Redactor` judges. None of them needs to
know this machine (its home, user or host names: :mod:`preflight.redact`).

Each shape comes with what every match of it contains (:data:`Needs`): a literal such as
``hf_``, or a shorter pattern with the same flags. A text without it is left alone without
running the pattern: most strings of a report hold no ``hf_``, and a pass of the whole rendered
report ran ~20 patterns over ~40 KB, each one testing its look-behind at every position (~19 ms
of a 0.13 s check; issue 26 item 4). The hint decides nothing: where it is found, the pattern
runs as before (tests/redact/test_redaction_hints.py compares both ways).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TypeAlias

from preflight.redact.tokens import is_secret_name

MASK = "[REDACTED]"
EMAIL_MASK = "[EMAIL]"

Needs: TypeAlias = "tuple[str, ...] | re.Pattern[str]"
"""What every match of a pattern contains: one of these strings (an empty tuple: no hint, the
pattern always runs), or a match of this pattern."""


def lazy(source: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """``re.compile(source, flags)`` on first use: most texts fail most hints, and compiling the
    ~40 patterns of redaction cost every run ~4 ms, most of them for patterns that never ran."""
    return cache(lambda: re.compile(source, flags))


def may_match(text: str, needs: Needs) -> bool:
    """False only when no match of the pattern ``needs`` belongs to can be in ``text``."""
    if isinstance(needs, tuple):
        for literal in needs:   # a loop, not any(): this runs ~20 times for every string
            if literal in text:
                return True
        return not needs
    return needs.search(text) is not None


# Content-based patterns: (regex, replacement, what each match contains). Order matters:
# specific shapes before the generic high-entropy catch-alls.
GPU_UUID = lazy(
                r"\b(GPU|MIG)-(?:GPU-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                r"[0-9a-fA-F]{12}(?:/\d+/\d+)?")
_URL_STOP = "\\s\"'`<>"   # characters that end a URL in prose, JSON, Markdown or a shell line
_USER, _PASSWORD = 256, 1024   # longest user name / password masked in a URL (a JWT fits)
_CONTENT: tuple[tuple[Callable[[], re.Pattern[str]], str, Needs], ...] = (
    (GPU_UUID, r"\1-" + MASK, ("GPU-", "MIG-")),
    # scheme://user:pass@host -> scheme://[REDACTED]@host. The password runs to the *last* "@"
    # of the URL, so "p@ss" and "pa/ssw0rd" (both seen in proxy URLs) are masked whole; the user
    # may be empty ("redis://:pw@cache"). Cost: "https://host:8080/a@b" is over-masked.
    # User and password are bounded (_USER, _PASSWORD): unbounded, each candidate start scanned
    # to the end of the text, and 48 KB of "a://b:" took 1.4 s.
    # The scheme is bounded and starts where no scheme character precedes it: "\b[a-z][...]*"
    # rescanned "a.b.a.b..." from every label (64 KB took 14 s; issue 13 fuzzing).
    (lazy(rf"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{{0,31}}://)"
          rf"[^/@:{_URL_STOP}]{{0,{_USER}}}:"
          rf"[^{_URL_STOP}]{{0,{_PASSWORD}}}@"), r"\1" + MASK + "@", ("://",)),
    # user:pass@host:port without a scheme (http_proxy values, pip/conda configs).
    (lazy(rf"(?<![\w.:/@\-\[])[A-Za-z0-9._~%+\-]{{1,{_USER}}}:(?!/)"
          rf"[^{_URL_STOP}]{{1,{_PASSWORD}}}?@"
          r"(?=[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)*"
          r"(?::\d{1,5})?(?![\w.\-@]))"), MASK + "@", ("@",)),
    # ?token=..., &api_key=..., sig=...
    (lazy(r"(?i)([?&;](?:access_token|refresh_token|id_token|private_token|token|api_key|"
          r"apikey|key|secret|client_secret|password|passwd|pwd|pass|passphrase|"
          r"sig|signature|auth|x-amz-signature|x-amz-credential|x-amz-security-token|"
          r"accountkey|sharedaccesskey|sharedaccesssignature)=)"
          r"[^&\s#\"']+"), r"\1" + MASK, ("=",)),
    (lazy(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1" + MASK,
     re.compile(r"(?i)authorization:")),
    (lazy(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"), MASK, ("hf_",)),
    (lazy(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
     MASK, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    # GitLab tokens (personal, deploy, runner, trigger, ... prefixes from GitLab's token docs).
    (lazy(r"(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|ffct|oas|agent)-"
          r"[A-Za-z0-9_\-]{10,}"), MASK,
     tuple(f"gl{p}-" for p in ("pat", "dt", "rt", "ptt", "soat", "cbt", "imt", "ft", "ffct",
                                "oas", "agent"))),
    (lazy(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{16,}"), MASK, ("npm_",)),
    (lazy(r"(?<![A-Za-z0-9])pypi-AgE[A-Za-z0-9_\-]{16,}"), MASK, ("pypi-AgE",)),
    (lazy(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}"), MASK, ("AIza",)),
    # A webhook's path is its credential (needs: the look-behind's "://").
    (lazy(r"(?i)(?<=://)(?:hooks\.slack\.com/services|(?:\w+\.)?discord(?:app)?\.com/api/"
          r"webhooks)/[\w/\-]{1,512}"), MASK, ("://",)),
    (lazy(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), MASK,
     ("AKIA", "ASIA")),
    (lazy(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{16,}"), MASK, ("sk-",)),
    # Stripe-style live / test keys (also seen pasted after a vendor prefix: "stripe_sk_live_").
    (lazy(r"(?<![A-Za-z0-9])[rsp]k_(?:live|test)_[A-Za-z0-9]{6,}"), MASK,
     ("k_live_", "k_test_")),
    # Slack: the prefix is distinctive enough that a short body is still a token.
    (lazy(r"(?<![A-Za-z0-9])(?:xox[abeoprs]|xapp)-[A-Za-z0-9\-]{4,}"), MASK,
     ("xox", "xapp-")),
    (lazy(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
     MASK, ("eyJ",)),
    (lazy(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
     MASK, ("-----BEGIN ",)),
    # E-mail addresses (a git author in a config comment, a W&B entity): personal data. The TLD
    # must be letters, so repo@v2.5 and NVIDIA/TransformerEngine@v1.11 stay.
    # (git@host:org/repo is an SSH remote, not a mailbox.)
    (lazy(r"(?<![\w.+\-])(?!git@)[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
          r"\.[A-Za-z]{2,}(?![\w\-])"), EMAIL_MASK, ("@",)),
)


# NAME=VALUE, NAME: VALUE and --name VALUE / --name=VALUE in free text (a pasted command line, an
# exception message, an env dump): the value is masked when NAME says credential. Only NAME and
# the separator are matched here, so a non-secret pair never swallows the secret pair after it
# ("note: password: hunter2"); the value is found from the end of the match. A bare "NAME VALUE"
# without "=" or ":" counts only for --flags, or every pair of words in prose would be a candidate.
# A quoted NAME with a quoted VALUE counts too ('"api_key": "x"', TOML '"secret" = "x"', a quoted
# '--flag' 'x'), the quotes kept ('"[REDACTED]"'): per-line readers (redact.diff) see only a line's
# first key, so a --diff of a one-line JSON printed the value (issue 21, red team). Not a bare
# value after it (null, a number, a brace) nor a dotted name: the pass over a rendered JSON report
# keeps it JSON and its provenance (keyed by fact names). Code in messages compares and subscripts:
# 'password == "x"', 'os.environ["API_KEY"] != "x"' (was 'password =[REDACTED] "x"').
NAMED = re.compile(r"(?<![\w.\-])(?:--?([A-Za-z][A-Za-z0-9_.\-]*)(?:=|[ \t]+)|"
                   r"([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*(?:[=!:]=|[=:])[ \t]*|"
                   r"([\"'])(-{0,2}[A-Za-z_][A-Za-z0-9_\-]*)\3\]?"
                   r"(?:[ \t]*(?:[=!:]=|[=:])[ \t]*|[ \t]+)(?=[\"']))")
NAMED_NEEDS = ("-", "=", ":", '"', "'")
"""Each form of :data:`NAMED` holds one of these: ``-`` (a flag), ``=`` / ``:``, or a quote."""
# A value: quoted, braced (ODBC: Pwd={a;b}), or a bare run to the next separator.
_NAMED_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|\{[^}\n]*\}|[^\s\"'`,;&|)\]}<>]+")
HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{32,}={0,2}(?![A-Za-z0-9+/=_\-])")


def mask_named(text: str) -> str:
    """Mask the VALUE of every ``NAME=VALUE`` / ``NAME: VALUE`` / ``--name VALUE`` whose NAME
    says credential (see :data:`NAMED`)."""
    out: list[str] = []
    pos = 0
    for m in NAMED.finditer(text):
        name = m.group(1) or m.group(2) or (m.group(4) or "").lstrip("-")
        if m.start() < pos or not is_secret_name(name) or text.startswith(MASK, m.end()):
            continue  # not a credential, or already masked (by a shape rule or an earlier pass)
        value = _NAMED_VALUE.match(text, m.end())
        if value is None:
            continue
        if m.group(3):
            if value.group(0)[1:-1] == MASK:
                continue
            # the quotes stay: '"pw": "[REDACTED]"' is still JSON, TOML, Python
            out += [text[pos:value.start() + 1], MASK]
            pos = value.end() - 1
            continue
        out += [text[pos:value.start()], MASK]
        pos = value.end()
    return "".join(out) + text[pos:] if out else text


def mask_content(text: str) -> str:
    """Every content rule that needs no knowledge of this machine (tokens, URLs, NAME=VALUE)."""
    for pattern, repl, needs in _CONTENT:
        if may_match(text, needs):
            text = pattern().sub(repl, text)
    return mask_named(text) if may_match(text, NAMED_NEEDS) else text
