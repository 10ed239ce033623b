"""Other machines out of reports: host names and IP addresses, by allow-list (issue 13, item 5).

:mod:`preflight.redact` masks this machine's own names and values under host-meaning keys
(``main_process_ip``, ``MASTER_ADDR`` ...). That missed other hosts written anywhere else: in a
URL value (``tracker_url: http://wandb.internal.corp/api``), in free text (a finding message
quoting a URL, ``nvidia-smi``'s stderr, a smoke child's exception ``connect to
node-17.cluster.internal:29500 failed``), in ``rdzv_conf: node7:29400``, and IP addresses in
free text and environment values. :func:`mask_hosts` replaces, with ``[HOST]``:

- the host of every URL, unless it is a public upstream documentation domain
  (:data:`PUBLIC_DOMAINS`, subdomains included): rule references must stay clickable;
- a dotted name ending in a top-level or site-internal suffix (:data:`_SUFFIXES`: ``com``,
  ``org``, ``internal``, ``corp``, ``local`` ...), same allow-list. Fact names
  (``pkg.torch.version``) and file names (``ds.json``) do not end in one;
- ``name:port`` (port of 3 to 5 digits), the way launchers and stores name a peer
  (``node7:29400``); device names and file lines (``cuda:0``, ``run.sh:120``) are not hosts;
- IPv4 addresses other than loopback and ``0.0.0.0`` (and IPv6 ones written with ``::``), except
  where they are versions: under a version/build key, or after a word such as ``version``,
  ``cudnn`` or ``driver`` (``cuDNN 8.9.7.29`` has the shape of an address).

An allow-list, not a block-list: a name we do not recognise as public is masked; the cost is an
occasional masked public site, which ``--no-redact`` shows.
"""

from __future__ import annotations

import re

from preflight.base.digits import ascii_digits
from preflight.redact.content import lazy

HOST_MASK = "[HOST]"

# Public upstream documentation and source hosts that rules cite and reports may show.
PUBLIC_DOMAINS: frozenset[str] = frozenset({
    "github.com", "githubusercontent.com", "github.io", "gitlab.com", "nvidia.com",
    "pytorch.org", "huggingface.co", "hf.co", "python.org", "pypi.org", "readthedocs.io",
    "readthedocs.org", "deepspeed.ai", "lightning.ai", "mosaicml.com", "databricks.com",
    "microsoft.com", "pydantic.dev", "json-schema.org", "oasis-open.org", "owasp.org",
    "schemastore.org", "anaconda.org", "conda-forge.org", "nccl.dev", "mlcommons.org",
})
_LOCAL = frozenset({"localhost", "localhost.localdomain", "127.0.0.1", "0.0.0.0", "::1"})
# Last labels that make a dotted word a host name: common TLDs and site-internal suffixes.
_SUFFIXES = ("com|net|org|edu|gov|mil|int|io|ai|co|dev|app|cloud|info|biz|xyz|me|us|uk|de|fr|"
             "nl|eu|ch|se|jp|cn|kr|in|ru|br|ca|au|internal|intranet|local|localdomain|lan|corp|"
             "cluster|svc|intra|private|home|arpa|example|test|invalid")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
_URL_HOST = lazy(r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{0,31}://(?:[^/@\s\"'`<>]*@)?)"
                 r"(\[[0-9a-f:.]+\]|[^/:?#\s\"'`<>\[\]]+)")
_DOTTED = lazy(rf"(?<![\w.\-/]){_LABEL}(?:\.{_LABEL})*\.(?:{_SUFFIXES})(?![\w\-]|\.\w)",
               re.IGNORECASE)
_PORTED = lazy(rf"(?<![\w.\-/:]){_LABEL}(?:\.{_LABEL})*(?=:\d{{3,5}}(?![\w.:]))")
_NOT_HOST = frozenset({"cuda", "cpu", "gpu", "mps", "xla", "meta", "hpu", "npu", "xpu", "line",
                       "port", "rank", "step", "epoch", "size", "seed", "device", "http", "https",
                       "tcp", "env", "file", "static", "c10d", "etcd", "sm"})
_FILE_EXT = lazy(r"(?i)\.(?:json|ya?ml|toml|py|sh|bash|txt|cfg|ini|conf|md|log|out|err|"
                 r"slurm|sbatch|ipynb)$")
_IPV4 = lazy(r"(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}"
             r"(?![\w]|\.\d)")
_IPV6 = lazy(r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){1,7}:(?:[0-9a-fA-F]{1,4}"
             r"(?::[0-9a-fA-F]{1,4})*)?|(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4})(?![\w:])")
# (The patterns above compile on first use: content.lazy.)
# What every match of the patterns above holds (preflight.redact.content.Needs): a text without
# it skips the pattern, which would test its look-behind at every position of the text.
_DOTTED_HINT = re.compile(rf"\.(?:{_SUFFIXES})(?![\w\-]|\.\w)", re.IGNORECASE)
_PORTED_HINT = re.compile(r":\d{3,5}(?![\w.:])")
_IPV4_HINT = re.compile(r"\d\.\d")
_IPV6_HINT = re.compile(r"[0-9a-fA-F]:[0-9a-fA-F:]")
_VERSIONISH = lazy(r"(?i)(?:version|ver|v|cudnn|cublas|nccl|driver|tensorrt|trt|cuda|"
                   r"build|release|rev)[\s:=]*$")
_VERSION_KEY = re.compile(r"(?i)(?:version|commit|git|sha|hash|digest|build)")


def is_public(host: str) -> bool:
    """True for a public upstream documentation domain or one of its subdomains, or loopback."""
    host = host.lower().rstrip(".")
    if host in _LOCAL:
        return True
    return any(host == d or host.endswith("." + d) for d in PUBLIC_DOMAINS)


def _host(m: re.Match[str]) -> str:
    name = m.group(0)
    return name if is_public(name) or _FILE_EXT().search(name) else HOST_MASK


def _url(m: re.Match[str]) -> str:
    host = m.group(2)
    if host == HOST_MASK or is_public(host.strip("[]")):   # "[::1]" is loopback
        return m.group(0)
    return m.group(1) + HOST_MASK


def _ported(m: re.Match[str]) -> str:
    name = m.group(0)
    if name.lower() in _NOT_HOST or ascii_digits(name) or _FILE_EXT().search(name) or is_public(name):
        return name
    return HOST_MASK


def _ip(text: str, m: re.Match[str]) -> str:
    if m.group(0) in _LOCAL or _VERSIONISH().search(text[max(0, m.start() - 24):m.start()]):
        return m.group(0)
    return HOST_MASK


def mask_hosts(text: str, key: str | None = None) -> str:
    """``text`` with other machines' names and addresses replaced by ``[HOST]`` (see above).

    ``key`` is the fact or config key the value sits under, if any: under a version or commit
    key a dotted quad is a version and is kept.
    """
    if "." not in text and ":" not in text:
        return text   # the common case, and the cheap one
    out = _URL_HOST().sub(_url, text) if "://" in text else text
    if not (key and _VERSION_KEY.search(key.rsplit(".", 1)[-1])):
        if _IPV4_HINT.search(out):
            out = _IPV4().sub(lambda m: _ip(out, m), out)
        if _IPV6_HINT.search(out):
            out = _IPV6().sub(HOST_MASK, out)
    if _DOTTED_HINT.search(out):
        out = _DOTTED().sub(_host, out)
    return _PORTED().sub(_ported, out) if _PORTED_HINT.search(out) else out
