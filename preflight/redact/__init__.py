"""Redaction: keep secrets and personal data out of every report, JSON document and snapshot.

Applied by default to every output format and to snapshots (``--no-redact`` opts out). Two
layers, both needed:

- **by name** (:func:`is_secret_name`): a value whose key or fact name says TOKEN, SECRET,
  PASSWORD, CREDENTIAL, AUTH, API_KEY ... is masked whatever it looks like, even under an
  allow-listed env prefix (reviews of vllm-project/vllm#9293 and NVIDIA/cudnn-frontend#400 found
  tokens under "harmless" prefixes);
- **by content** (:meth:`Redactor.text`): tokens with a known shape (``hf_``, ``ghp_``,
  ``glpat-``, ``npm_``, ``AKIA``, ``sk-``, ``sk_live_``, ``xox?-``, JWTs, long hex / base64
  runs), ``user:pass@`` with or without a scheme (the password may hold ``/`` or ``@``),
  ``token=`` in query strings, ``NAME=VALUE`` / ``NAME: VALUE`` / ``--name VALUE`` where NAME
  says credential, GPU/MIG UUIDs, the home directory (shown as ``~``), other users' home folders,
  the user name as a path segment, this machine's host names, and other machines' names and
  addresses by allow-list (:mod:`preflight.redact.hosts`);
- **single values** (:func:`looks_secret`, used for every ``env.*`` value and ``--assume``
  value): on top of the above, a word of 16+ characters that mixes letters and digits the way
  generated tokens do (see :func:`preflight.redact.tokens.token_like`) masks the whole value. This is stricter than
  free-text redaction on purpose: an allow-listed variable's value is one short datum, where a
  random-looking word is far more likely a credential than in a log line or a message.

``env.*`` facts are also filtered against an allow-list of variable names (an allow-list, not a
block-list: a block-list misses ``AWS_SECRET_ACCESS_KEY``; vllm-project/vllm#9293).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from preflight.redact import machine
from preflight.redact.content import (
    B64_RUN,
    EMAIL_MASK,
    GPU_UUID,
    HEX_RUN,
    MASK,
    mask_content,
)
from preflight.redact.hosts import HOST_MASK, mask_hosts
from preflight.redact.tokens import (
    HEX_OK_KEY,
    forge_commit_spans,
    is_secret_name,
    looks_random,
    value_has_token,
)

__all__ = ["EMAIL_MASK", "ENV_NAMES", "ENV_PREFIXES", "HOST_MASK", "MASK", "REFERENCE_URL",
           "USER_MASK", "Redactor", "default_redactor", "env_allowed", "fingerprint",
           "is_secret_name", "looks_secret", "redact_document", "redact_text"]

REFERENCE_URL = "reference.url"
"""The key a rule reference's URL is judged under: a commit in its path is kept on any host."""
USER_MASK = "[USER]"

# The one environment allow-list: the runtime probe collects only these variables, and reports
# keep only env.* facts that match (then still mask a value whose name or content looks secret).
ENV_PREFIXES: tuple[str, ...] = (
    "NVTE_", "ACCELERATE_", "TORCH_", "PYTORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_",
    "TORCHELASTIC_", "DS_", "DEEPSPEED_", "MEGATRON_", "NEMO_", "COMPOSER_", "FSDP_", "MSAMP_",
    "TORCHAO_", "CUDNN_", "CUBLASLT_", "TRANSFORMERS_",
    "VLLM_USE_",   # vLLM's kernel switches (VLLM_USE_DEEP_GEMM=0: FP8D-RL-0003), never its keys
)
ENV_NAMES: frozenset[str] = frozenset({
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "CUDA_LAUNCH_BLOCKING",
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING", "CUBLAS_WORKSPACE_CONFIG",
    "NVIDIA_TF32_OVERRIDE", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK",
    "NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE",  # TE 2.16.1, 2.17.1, >= 2.18 checkpoints (CKPT-0001)
    "MASTER_PORT", "OMP_NUM_THREADS", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID",
    "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE",
    "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_SIZE", "PMI_RANK", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
    # NCCL settings that change behaviour or are asked for in bug reports (not all of NCCL_*:
    # NCCL_IB_HCA and friends name the host's hardware).
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE",
    "NCCL_SHM_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE", "NCCL_ALGO", "NCCL_PROTO",
    "NCCL_BUFFSIZE", "NCCL_NET_GDR_LEVEL", "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT",
    "NCCL_SOCKET_IFNAME", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
})

# Settings whose value names another machine (accelerate's main_process_ip, torchrun's
# rdzv_endpoint, DeepSpeed's hostfile, MASTER_ADDR): "no hostnames" covers the cluster's
# other hosts too, not only this one.
_HOST_KEY = re.compile(r"(?i)(?:^|_)(?:ip|ips|host|hosts|hostname|hostfile|addr|address|"
                       r"endpoint|nodelist|node_list|nodes)$")


def env_allowed(var: str) -> bool:
    """True when an environment variable may be collected and appear in a report at all."""
    return var in ENV_NAMES or var.startswith(ENV_PREFIXES)


def looks_secret(name: str, value: str) -> bool:
    """True when one variable's value should be masked whole: its name says credential, or its
    content holds a token, a URL credential, a secret ``NAME=VALUE``, a long random run, or a
    word that reads like a generated token (:func:`preflight.redact.tokens.token_like`).

    For single values (``env.*``, ``--assume``), not for free text: see the module docstring.
    """
    if is_secret_name(name):
        return True
    # GPU / MIG UUIDs are identifiers (renderers mask them in place); long hex runs are mostly
    # commit hashes in paths. Neither makes the whole value a secret.
    value = GPU_UUID().sub(" ", value)
    if mask_content(value) != value:
        return True
    if any(looks_random(m.group(0)) for m in B64_RUN.finditer(value)):
        return True
    return value_has_token(name, value)


def fingerprint(value: str, key: bytes | None = None) -> str:
    """``<masked:0123456789ab>``: a keyed fingerprint of a secret, so two values can be told
    apart (rank 3 has another NVTE_* token than rank 0) without showing either.

    HMAC-SHA256 under ``key``, not a plain hash: a plain ``sha256(value)[:8]`` in a report lets
    anyone confirm a guess offline ("is it hunter2?") and brute-force short secrets. Without the
    key the fingerprint confirms nothing. ``key`` defaults to random bytes made once per process,
    which is right when nothing outside this process compares the fingerprints; processes that
    must compare (the ranks of one job) pass a key they share and that no report contains.
    """
    import hashlib  # only dist fingerprints need these (~4 ms of import on every check)
    import hmac

    digest = hmac.new(key or _process_key(), value.encode("utf-8", "surrogatepass"),
                      hashlib.sha256).hexdigest()
    return f"<masked:{digest[:12]}>"


@lru_cache(maxsize=1)
def _process_key() -> bytes:
    import secrets

    return secrets.token_bytes(32)


@dataclass(frozen=True)
class Redactor:
    """Masks secrets and personal data in strings and JSON-like documents.

    ``home``, ``user`` and ``hostnames`` describe this machine; :func:`default_redactor` reads them
    from the running process. Tests build their own to plant values.
    """

    home: str | None = None
    user: str | None = None
    hostnames: tuple[str, ...] = ()

    def text(self, value: str, *, key: str | None = None, hex_runs: bool = True) -> str:
        """Redact one string by content (and by ``key``, when it names a credential).

        ``hex_runs=False`` leaves long hex runs alone: the post-render pass over a whole output
        uses it, because only the key-aware pass can tell a commit hash (``cuda.torch_git``)
        from a hex API key, and that pass has already run on the document.

        Memoised: a report repeats most strings (a fact name is a key under facts, provenance
        and evidence), ~860 calls for ~200 distinct strings; the redactor is immutable.
        """
        return _text(self, value, key, hex_runs)

    def _text(self, value: str, key: str | None, hex_runs: bool) -> str:
        if key is not None and value and (
                is_secret_name(key) or (key.startswith("env.") and looks_secret(key[4:], value))):
            # An env.* value is one datum of an allow-listed variable: judged whole, with the
            # stricter single-value test (also for snapshots written before that test existed).
            return MASK
        if key is not None and value and _HOST_KEY.search(key.rsplit(".", 1)[-1]) \
                and value not in ("localhost", "127.0.0.1", "::1"):
            return HOST_MASK
        out = mask_content(value)
        # HEX_RUN and B64_RUN match 32 characters or more: most strings are shorter
        if hex_runs and len(out) >= 32 and not (key and HEX_OK_KEY.search(key)):
            # A commit in a public forge's URL is an identifier: masked, the link is dead.
            keep = forge_commit_spans(out, reference=key == REFERENCE_URL) \
                if "://" in out else set()
            out = HEX_RUN.sub(lambda m: m.group(0) if m.span() in keep else MASK, out)
        if len(out) >= 32:
            out = B64_RUN.sub(lambda m: MASK if looks_random(m.group(0)) else m.group(0), out)
        out = self._paths(out)
        out = mask_hosts(out, key)   # other machines, by allow-list (issue 13, item 5)
        for host in self.hostnames:
            # Not before ".word": a host called "gpu" must not turn fact names like gpu.count.
            if _spelled(host).search(out):   # each match holds it (content.Needs)
                out = re.sub(rf"(?i)(?<![\w.\-]){re.escape(host)}(?![\w\-]|\.\w)", HOST_MASK,
                             out)
        return out

    def _paths(self, out: str) -> str:
        # Each pattern runs only where the text holds what every match of it holds
        # (preflight.redact.content: most strings name no folder at all).
        home = (self.home or "").rstrip("/\\")
        if len(home) > 1 and home in out:
            out = re.sub(rf"{re.escape(home)}(?=[/\\]|$|[\s\"'`:,;)\]])", "~", out)
        # Other users' home folders: /home/<u>/..., /Users/<u>/..., C:\Users\<u>\...
        if "/home/" in out or "/Users/" in out:
            out = re.sub(r"(?<![\w.~])/(?:home|Users)/[^/\s\"'`:]+(?=/|$|[\s\"'`:,;)\]])", "~",
                         out)
        if ":\\" in out:
            out = re.sub(r"(?i)\b[A-Z]:\\Users\\[^\\\s\"']+", "~", out)
        user = self.user or ""
        if len(user) >= 3 and user not in ("root", "user", "home", "admin") and user in out:
            out = re.sub(rf"(?<=[/\\]){re.escape(user)}(?=[/\\]|$|[\s\"'`:,;)\]])", USER_MASK, out)
        return out

    def document(self, doc: Any, *, key: str | None = None, secret: bool = False) -> Any:
        """Redact a JSON-like value recursively; see :func:`redact_document`.

        ``secret`` is set below a key that names a credential, so every scalar under it is masked.
        """
        secret = secret or (key is not None and is_secret_name(key))
        if isinstance(doc, dict):
            return self._dict(doc, key, secret)
        if isinstance(doc, (list, tuple)):
            return [self.document(v, key=key, secret=secret) for v in doc]
        if secret and doc not in (None, False, True, ""):
            return MASK  # a numeric secret is still a secret
        if isinstance(doc, str):
            return self.text(doc, key=key)
        return doc

    def _dict(self, doc: dict[Any, Any], parent: str | None, secret: bool) -> dict[Any, Any]:
        # Evidence entries are {"fact": NAME, "value": V}: the value is judged by NAME.
        named = doc.get("fact") if isinstance(doc.get("fact"), str) else None
        # A rule's reference is {"type": T, "url": U}: a commit in its path is its pin.
        if set(doc) == {"type", "url"} and isinstance(doc["url"], str) and not secret:
            return {self.text(k): self.text(v, key=REFERENCE_URL) if k == "url"
                    else self.document(v, key=k) for k, v in doc.items()}
        out: dict[Any, Any] = {}
        for k, v in doc.items():
            if isinstance(k, str) and k.startswith("env.") and not env_allowed(k[4:]):
                continue  # not on the allow-list: drop the variable entirely
            if parent == "provenance":
                # {fact name: "file:line" / probe name}: where a value came from is not the
                # value, so a secret-named fact keeps its location (redacted by content: ~, a
                # token in the path); only the value itself, under "facts", is masked.
                child_key, child_secret = None, False
            elif k == "value" and named is not None:
                if named.startswith("env.") and not env_allowed(named[4:]):
                    out[k] = MASK
                    continue
                child_key, child_secret = named, secret
            elif k == "$unknown":
                # {"$unknown": reason} stands for the parent's value; the reason is prose, but
                # it may quote the value (a replayed snapshot's "the snapshot's value 'hunter2'
                # is not of type int"): masked under a secret name, judged as the value itself
                # under an env.* name.
                env = parent is not None and parent.startswith("env.")
                child_key, child_secret = (parent if env else None), secret
            else:
                child_key, child_secret = str(k), secret
            new_key = self.text(k) if isinstance(k, str) else k
            out[new_key] = self.document(v, key=child_key, secret=child_secret)
        return out


@lru_cache(maxsize=64)
def _spelled(host: str) -> re.Pattern[str]:
    """``host`` as the host-name pattern matches it (any case), without its boundaries."""
    return re.compile(rf"(?i){re.escape(host)}")


@lru_cache(maxsize=16384)
def _text(redactor: Redactor, value: str, key: str | None, hex_runs: bool) -> str:
    return redactor._text(value, key, hex_runs)


def _hostnames() -> tuple[str, ...]:
    names: set[str] = set()
    for getter in (machine.gethostname, machine.getfqdn):
        try:
            name = getter()
        except OSError:  # pragma: no cover - no resolver at all
            continue
        if name:
            names.add(name)
            names.add(name.split(".", 1)[0])
    names.discard("localhost")
    names.discard("localhost.localdomain")
    # A machine named like the tool (a project's own CI runner): its name is in every report's
    # header and in JSON tool.name, a const of the report schema; masking it hid nothing and
    # broke the document. The machine's other names (its FQDN) are still masked.
    names.discard("fp8-doctor")
    # Longest first, so an FQDN is replaced whole before its short form.
    return tuple(sorted((n for n in names if len(n) >= 3), key=len, reverse=True))


@lru_cache(maxsize=1)
def default_redactor() -> Redactor:
    """A redactor for this machine and user (cached; the facts do not change in a process)."""
    user: str | None
    try:
        user = machine.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        user = os.environ.get("USER") or None
    home = os.path.expanduser("~")
    return Redactor(home=home if home not in ("~", "/") else None, user=user,
                    hostnames=_hostnames())


def redact_text(value: str, *, key: str | None = None, redactor: Redactor | None = None,
                hex_runs: bool = True) -> str:
    """Redact one string with the default (or given) redactor (see :meth:`Redactor.text`)."""
    return (redactor or default_redactor()).text(value, key=key, hex_runs=hex_runs)


def redact_document(doc: dict[str, Any], *, redactor: Redactor | None = None) -> dict[str, Any]:
    """A redacted deep copy of a JSON document (report, snapshot); the input is not changed.

    Secret-named keys are masked, every string is redacted by content, ``env.*`` entries off the
    allow-list are dropped (their provenance too, as the same key is used there).
    """
    result = (redactor or default_redactor()).document(doc)
    assert isinstance(result, dict)
    return result

