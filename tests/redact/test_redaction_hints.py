"""The redaction hints decide nothing: every text is redacted exactly as when each pattern runs.

Issue 26 item 4: each content, host and path pattern now runs only when the text holds what every
match of it holds (``preflight.redact.content.Needs``). The references below are the passes as
they were before the hints (every pattern over every text, in the same order); hypothesis builds
texts from the pieces the patterns look for (the hint literals, near misses, the characters
Python's case-insensitive matching folds together: ``ſ`` for ``s``, the Kelvin sign for ``k``,
dotless ``ı`` for ``i``) and the committed golden reports add real outputs.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.redact import Redactor, content, hosts

GOLDEN = sorted((Path(__file__).parents[1] / "render" / "golden").glob("*"))

PIECES = (
    # content shapes and their hints
    "hf_", "ghp_", "gho_", "github_pat_", "glpat-", "glagent-", "gl", "npm_", "pypi-AgE", "AIza",
    "AKIA", "ASIA", "sk-", "sk_live_", "rk_test_", "k_live", "xoxb-", "xapp-", "xox", "eyJ",
    "eyJhbGciOiJIUzI1NiJ9", ".", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "GPU-", "MIG-", "GPU-12345678-1234-1234-1234-123456789abc", "Authorization: Bearer ",
    "AUTHORIZATION:", "authoriſation:", "authorızation: token ", "?token=", "&api_key=", "=",
    "://", "https://", "redis://:pw@", "hooks.slack.com/services/T0/B1/x",
    "discord.com/api/webhooks/1/abc", "?AccountKey=", "user:p@ss@", "@", "a@b.co", "git@host:org/repo",
    "password: ", "--token ", "'api_key': ", '"secret" = "', "pw == ", "PWD=",
    # hosts
    "node7:29400", ":29500", "10.1.2.3", "1.2", "fd00::17", "a:b:c", "::", "fe80:0:0:0:0:0:0:1",
    "wandb.internal.corp",
    "github.com", ".com", ".CoM", ".co", ".ſvc", "cuda:0", "run.sh:120",
    # paths, user, this host
    "/home/", "/home/alice/x", "/Users/bob/", "C:\\Users\\carol\\", "c:\\uſers\\d\\", ":\\",
    "/root", "/root/.cache", "/srv/dave/", "dave", "DAVE", "gpuhost-7", "GPUHOST-7", "gpuhoſt-7",
    "gpuhost-7.example.org",
    # filler
    "abcdef0123456789abcdef0123456789", "Xk9pQ2mZ7rT4vW8yB1nC5qA3sD6fG8hJ", "0123abcd" * 3,
    "https://github.com/NVIDIA/TransformerEngine/blob/", "Ab1+/Cd2_-Ef3", "==", "0123456789", " ",
    "\n", "\t", '"', "'", "/", "_", "-", ":", "K", "ſ", "ı", "İ", "x", "ab", "é",
)
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def reference_content(text: str) -> str:
    for pattern, repl, _needs in content._CONTENT:
        text = pattern().sub(repl, text)
    return content.mask_named(text)


def reference_hosts(text: str, key: str | None = None) -> str:
    if "." not in text and ":" not in text:
        return text
    out = hosts._URL_HOST().sub(hosts._url, text)
    if not (key and hosts._VERSION_KEY.search(key.rsplit(".", 1)[-1])):
        out = hosts._IPV4().sub(lambda m: hosts._ip(out, m), out)
        out = hosts._IPV6().sub(hosts.HOST_MASK, out)
    out = hosts._DOTTED().sub(hosts._host, out)
    return hosts._PORTED().sub(hosts._ported, out)


def reference_paths(redactor: Redactor, out: str) -> str:
    home = (redactor.home or "").rstrip("/\\")
    if len(home) > 1:
        out = re.sub(rf"{re.escape(home)}(?=[/\\]|$|[\s\"'`:,;)\]])", "~", out)
    out = re.sub(r"(?<![\w.~])/(?:home|Users)/[^/\s\"'`:]+(?=/|$|[\s\"'`:,;)\]])", "~", out)
    out = re.sub(r"(?i)\b[A-Z]:\\Users\\[^\\\s\"']+", "~", out)
    user = redactor.user or ""
    if len(user) >= 3 and user not in ("root", "user", "home", "admin"):
        out = re.sub(rf"(?<=[/\\]){re.escape(user)}(?=[/\\]|$|[\s\"'`:,;)\]])", "[USER]", out)
    return out


def reference_host_names(redactor: Redactor, out: str) -> str:
    for host in redactor.hostnames:
        out = re.sub(rf"(?i)(?<![\w.\-]){re.escape(host)}(?![\w\-]|\.\w)", hosts.HOST_MASK, out)
    return out


def reference_text(redactor: Redactor, value: str, key: str | None, hex_runs: bool) -> str:
    """Redactor._text as it was: every step on every string."""
    from preflight.redact import _HOST_KEY, HEX_OK_KEY, MASK, REFERENCE_URL, looks_secret
    from preflight.redact.tokens import forge_commit_spans, is_secret_name, looks_random

    if key is not None and value and (
            is_secret_name(key) or (key.startswith("env.") and looks_secret(key[4:], value))):
        return MASK
    if key is not None and value and _HOST_KEY.search(key.rsplit(".", 1)[-1]) \
            and value not in ("localhost", "127.0.0.1", "::1"):
        return hosts.HOST_MASK
    out = reference_content(value)
    if hex_runs and not (key and HEX_OK_KEY.search(key)):
        keep = forge_commit_spans(out, reference=key == REFERENCE_URL) if "://" in out else set()
        out = content.HEX_RUN.sub(lambda m: m.group(0) if m.span() in keep else MASK, out)
    out = content.B64_RUN.sub(lambda m: MASK if looks_random(m.group(0)) else m.group(0), out)
    out = reference_paths(redactor, out)
    return reference_host_names(redactor, reference_hosts(out, key))


REDACTORS = (Redactor(home="/root", user="root"),
             Redactor(home="/srv/dave", user="dave", hostnames=("gpuhost-7.example.org",
                                                                 "gpuhost-7")))


def check(text: str) -> None:
    assert content.mask_content(text) == reference_content(text)
    for key in (None, "config.accelerate.tracker_url", "pkg.torch.version"):
        assert hosts.mask_hosts(text, key) == reference_hosts(text, key)
    for redactor in REDACTORS:
        assert redactor._paths(text) == reference_paths(redactor, text)
        for key in (None, "pkg.torch.git_version", "config.deepspeed.note", "reference.url"):
            for hex_runs in (True, False):
                assert redactor._text(text, key, hex_runs) == \
                    reference_text(redactor, text, key, hex_runs), (key, hex_runs)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_hints_change_nothing(text: str) -> None:
    check(text)


def test_hints_change_nothing_on_each_piece() -> None:
    for piece in PIECES:
        check(piece)
        check(f"x {piece} y")


def test_hints_change_nothing_on_real_reports() -> None:
    assert GOLDEN, "the render goldens moved: point this test at real outputs again"
    for path in GOLDEN:
        check(path.read_text(encoding="utf-8"))


def test_each_hint_is_in_a_match_of_its_pattern() -> None:
    """The cases every shape's own tests mask still carry their hint (a hint that no match
    holds would leave those secrets in place, and the tests above would see it)."""
    samples = {
        0: "GPU-12345678-1234-1234-1234-123456789abc", 1: "https://u:pw@host",
        2: "u:pw@proxy.corp:3128", 3: "?token=abc", 4: "authorization: bearer abc",
        5: "hf_" + "a" * 20, 6: "ghp_" + "a" * 20, 7: "glpat-" + "a" * 10, 8: "npm_" + "a" * 16,
        9: "pypi-AgE" + "a" * 16, 10: "AIza" + "a" * 30,
        11: "https://hooks.slack.com/services/T0/B1/abc", 12: "AKIA" + "A" * 16,
        13: "sk-" + "a" * 16, 14: "sk_live_abcdef", 15: "xoxb-abcd",
        16: "eyJabcdefgh.abcdefgh.abcdefgh",
        17: "-----BEGIN X PRIVATE KEY-----x-----END X PRIVATE KEY-----", 18: "a@b.co",
    }
    assert len(samples) == len(content._CONTENT)
    for i, (pattern, _repl, needs) in enumerate(content._CONTENT):
        assert pattern().search(samples[i]), i
        assert content.may_match(samples[i], needs), i
        assert not content.may_match("nothing to see here", needs), i
