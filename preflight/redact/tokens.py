"""Whether a value reads like a generated credential: the token heuristics of
:mod:`preflight.redact` (mixed-case-and-digit words, random-looking base64 runs), and where a
long hex run is an identifier instead (a commit in a public forge's URL)."""

from __future__ import annotations

import re

from preflight.base.digits import ascii_digits

# Name-based: a key segment that says "this is a credential". Matched per word part so that
# "monkey" or "author" do not match, while "wandb_api_key" and "AWS_SECRET_ACCESS_KEY" do.
# "token" is judged apart (_credential_token).
_SECRET_WORDS = re.compile(
    r"(?:^|[_.\-\s])(?:secret|secrets|password|passwd|passphrase|credential|"
    r"credentials|auth|authorization|apikey|api_key|key|private|privkey|cookie|"
    r"signature|bearer|pat|pw|pwd|pass|passcode|creds|cred|webhook|webhooks|dsn|sas|sig|jwt)"
    r"(?:$|[_.\-\s])",
    re.IGNORECASE,
)
# The same words run together ("HFTOKEN", "wandbApiKey"); "token" only at the end, so that
# "tokenizer_name" and "tokens" stay readable; "pwd" only at the end too ("dbpwd", "MYSQL_PWD"),
# "passwd" through "passw".
_SECRET_COMPACT = re.compile(r"(?:secret|passw|credential|apikey|accesskey|privatekey|authtoken|"
                             r"webhook|connstr|connectionstring|token$|pwd$)", re.IGNORECASE)
_WORDS = re.compile(r"[_.\-\s]+")
# A model's vocabulary, not a credential: pad_token, eos_token, image_token ...
_VOCAB = frozenset({"pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "start", "end",
                    "image", "video", "audio", "vision", "chat", "default"})


def _credential_token(words: list[str]) -> bool:
    """The word "token" names a credential when it ends the name (hub_token, HF_TOKEN) or is
    followed by "value" / "secret" / "key", and not after a vocabulary word (pad_token); so
    Megatron's --moe-token-dispatcher-type, token_dropping or eos_token stay readable."""
    for i, word in enumerate(words):
        if word != "token" or (i and words[i - 1] in _VOCAB):
            continue
        if i == len(words) - 1 or words[i + 1] in ("value", "secret", "key", "str", "string"):
            return True
    return False


def is_secret_name(name: str) -> bool:
    """True when a key / fact / env-var name says its value is a credential."""
    last = name.rsplit(".", 1)[-1]
    if _SECRET_WORDS.search(last):
        return True
    words = [w for w in _WORDS.split(last.lower()) if w]
    if "token" in words:
        return _credential_token(words)
    return bool(_SECRET_COMPACT.search(last.replace("_", "").replace("-", "")))


# Keys whose values are commit hashes or versions: long hex there is an identifier, not a secret.
HEX_OK_KEY = re.compile(r"(?i)(?:version|commit|git|sha|hash|digest|build)")

# Public forges whose URLs name a commit in the path (issue 24 item 6: the 40-hex commit of
# FP8D-HF-0001's SOURCE link was masked as a secret in every format, so the link was dead).
FORGES = ("github.com", "gitlab.com", "huggingface.co", "hf.co", "bitbucket.org", "codeberg.org",
          "sourceware.org", "git.kernel.org", "gitee.com")
# .../<owner>/<repo>/{blob,tree,commit,commits,raw,blame,resolve}/<hex>/... (GitLab: /-/blob/...),
# raw.githubusercontent.com/<owner>/<repo>/<hex>/..., and /pull/N/commits/<hex>. The path may
# hold no "?" or "#": a hex run in a query string or a fragment is never exempt, nor one in a URL
# with credentials (they are masked first, and the host no longer follows the scheme).
_FORGE_HEX = re.compile(
    r"(?i)(?<![\w.+\-])https?://(?:www\.)?(?:" + "|".join(re.escape(f) for f in FORGES) + r")"
    r"/[^\s?#\"'`<>@]{1,512}?/(?:-/)?(?:blob|tree|commit|commits|raw|blame|resolve)/"
    r"([0-9a-f]{7,64})(?=[/#?\s\"'`<>)\]]|$)"
    r"|(?<![\w.+\-])https?://raw\.githubusercontent\.com/[^/\s?#\"'`<>@]{1,100}/"
    r"[^/\s?#\"'`<>@]{1,100}/([0-9a-f]{40})(?=/)")


# A rule's own reference (a typed link the rule file cites, on any host): a hex run that is a
# whole segment of the URL's path, never in its query, fragment or credentials.
_URL_PATH = re.compile(r"(?i)^https?://[^/\s?#\"'`<>@]+(?P<path>/[^\s?#\"'`<>]*)")
_SEGMENT_HEX = re.compile(r"(?<=/)[0-9a-fA-F]{7,64}(?=/|$)")


def forge_commit_spans(text: str, *, reference: bool = False) -> set[tuple[int, int]]:
    """The (start, end) of every commit hash that is a path segment of a public forge's URL in
    ``text``: an identifier that keeps the link working, not a secret. ``reference``: ``text``
    is a rule's reference URL, whose path segments are kept on any host."""
    spans = {m.span(1 if m.group(1) else 2) for m in _FORGE_HEX.finditer(text)}
    url = _URL_PATH.match(text) if reference else None
    if url:
        base = url.start("path")
        spans |= {(base + m.start(), base + m.end())
                  for m in _SEGMENT_HEX.finditer(url.group("path"))}
    return spans


def looks_random(run: str) -> bool:
    """A 32+ character run with upper, lower and digits that is not a path: likely a key."""
    if run.startswith("/") or run.count("/") > 2:
        return False
    return (any(c.isupper() for c in run) and any(c.islower() for c in run)
            and any(ascii_digits(c) for c in run))


# Words of a single value judged by token_like: runs of token characters. "." ":" "/" "," "="
# "@" and spaces split them, so versions (2.4.0a0+3bcc3cd.nv24.07), paths, lists and
# KEY=VALUE parts are judged piece by piece.
_WORD = re.compile(r"[A-Za-z0-9_+\-]+")
_HEX_WORD = re.compile(r"[0-9a-fA-F]+")


def _char_class(c: str) -> str:
    return "u" if c.isupper() else "l" if c.islower() else "d" if ascii_digits(c) else ""


def token_like(word: str) -> bool:
    """True for a 16+ character word that mixes letters and digits like a generated token.

    The decision, and why: a generated credential (base62 / base64 / hex) switches between
    upper case, lower case and digits every two or three characters; names, versions and
    temporary folders do not ("TransformerEngine2": 4 switches in 18 characters,
    "torchelastic_8ulkm2dz": 4 in 20; "Xk9pQ2mZ7rT4vW8yB1nC5q": 20 in 22). So: at least 16
    letters-or-digits (16 base62 characters are ~95 bits), at least two letters and two digits,
    and a class switch for at least every third character. "_" "-" "+" are skipped when
    counting, so "Xk9p_Q2mZ-7rT4..." is judged like "Xk9pQ2mZ7rT4...". Shorter or more regular
    secrets are caught by name (HF_TOKEN ...) or by a known shape (hf_, glpat-, ...), not here.
    """
    classes = [k for k in map(_char_class, word) if k]
    if len(classes) < 16 or classes.count("d") < 2 or len(classes) - classes.count("d") < 2:
        return False
    switches = sum(a != b for a, b in zip(classes, classes[1:]))
    return switches * 3 >= len(classes)


def value_has_token(name: str, value: str) -> bool:
    """Some word of ``value`` is :func:`token_like`.

    Hex words are exempt under a commit / version name, and at 32+ characters everywhere: those
    are the long-hex rule's (masked in place by :meth:`Redactor.text` unless the key says commit
    or version), because a commit hash inside a cache path must not hide the whole path.
    """
    hex_ok = bool(HEX_OK_KEY.search(name))
    return any(token_like(w) and not (_HEX_WORD.fullmatch(w) and (hex_ok or len(w) >= 32))
               for w in _WORD.findall(value))
