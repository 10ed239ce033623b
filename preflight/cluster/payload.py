"""What one rank sends to rank 0, bounded on both ends (issue 21 item 7).

A rank that floods (a 200 MB payload, a fact of 2,000,000 items) or lies (another rank's number,
values of the wrong type) ended rank 0 with no report: the gather grew every buffer to the
largest payload, the merge raised on a wrong type, and the watchdog gave up (exit 3). Now:

- the sender bounds its own payload (:func:`encode`): a list longer than :data:`MAX_LIST_ITEMS`
  (what a config reader keeps, ``jobs.parse.MAX_ITEMS_PER_FACT``) becomes Unknown with the reason,
  a string is cut at :data:`MAX_TEXT`, and a payload still over :data:`MAX_PAYLOAD_BYTES` loses
  its smoke details, then its facts, keeping an ``error`` that says so;
- rank 0 trusts none of it (:func:`accept`): it reads at most :data:`MAX_PAYLOAD_BYTES` of a rank,
  parses strict JSON, and keeps a payload only when every field has its type and bounds, the
  same caps applied again (a rank may run other code than this). A payload refused is a row of
  the report naming the rank and why, never an exception.
"""

from __future__ import annotations

import json
from typing import Any

MAX_PAYLOAD_BYTES = 1024 * 1024
"""Bytes of JSON one rank may send (a real payload, smoke details included, is tens of KiB)."""
MAX_FACTS = 20_000
"""Facts one rank may report (a check with every probe and a job has about a thousand)."""
MAX_LIST_ITEMS = 2048
"""Items of one list fact (= preflight.reading.parse:MAX_ITEMS_PER_FACT)."""
MAX_TEXT = 16 * 1024
"""Characters of one string value."""
MAX_ENV = 2000
"""Environment variables one rank may report."""
MAX_NESTING = 16
"""Depth of one value (a fact's dict of lists of dicts ...)."""


class Refused(ValueError):
    """Why a rank's payload cannot be used."""


def _unknown(reason: str) -> dict[str, str]:
    return {"$unknown": reason}


def _bound(value: Any, depth: int = 0) -> Any:
    """``value`` with long lists replaced by Unknown and long strings cut; raises Refused for
    what JSON from us never holds (too deep, a non-string key)."""
    if depth > MAX_NESTING:
        raise Refused(f"a value nested more than {MAX_NESTING} levels deep")
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if value is None or isinstance(value, (bool, int, float)):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2 ** 63:
            return _unknown("an integer too large to be a setting")
        return value
    if isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            return _unknown(f"a list of {len(value):,} items, over the cap of "
                            f"{MAX_LIST_ITEMS:,} (not compared)")
        return [_bound(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if len(value) > MAX_LIST_ITEMS:
            return _unknown(f"a mapping of {len(value):,} keys, over the cap of "
                            f"{MAX_LIST_ITEMS:,} (not compared)")
        if not all(isinstance(k, str) for k in value):
            raise Refused("a mapping with a key that is not a string")
        return {k[:MAX_TEXT]: _bound(v, depth + 1) for k, v in value.items()}
    raise Refused(f"a value of type {type(value).__name__}")


def _text(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise Refused(f"{what} is {type(value).__name__}, not text")
    return value[:MAX_TEXT]


def _mapping(value: Any, what: str, limit: int, *, optional: bool = False) -> dict[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"{what} is {type(value).__name__}, not a mapping")
    if len(value) > limit:
        raise Refused(f"{what} has {len(value):,} entries, over the cap of {limit:,}")
    return value


def _clean(payload: Any, rank: int) -> dict[str, Any]:
    """The payload with every field checked and bounded; raises :class:`Refused`."""
    if not isinstance(payload, dict):
        raise Refused(f"not a mapping but {type(payload).__name__}")
    claimed = payload.get("rank")
    if claimed != rank or isinstance(claimed, bool):
        said = claimed if isinstance(claimed, int) else repr(claimed)[:40]
        raise Refused(f"it said it was rank {said}")
    out: dict[str, Any] = {"rank": rank}
    local = payload.get("local_rank", 0)
    if not isinstance(local, int) or isinstance(local, bool) or not 0 <= local < 1 << 20:
        raise Refused(f"local_rank is {str(local)[:40]!r}")
    out["local_rank"] = local
    for key in ("host", "node_id", "launcher"):
        out[key] = _text(payload.get(key, "?"), key)
    out["pid"] = payload.get("pid") if isinstance(payload.get("pid"), int) else None
    facts = _mapping(payload.get("facts"), "facts", MAX_FACTS, optional=True)
    if not all(isinstance(k, str) for k in facts):
        raise Refused("a fact name that is not text")
    out["facts"] = {k[:200]: _bound(v) for k, v in facts.items()}
    env = _mapping(payload.get("env"), "env", MAX_ENV, optional=True)
    out["env"] = {str(k)[:200]: _text(v, f"env {str(k)[:40]}") for k, v in env.items()}
    out["device"] = _bound(_mapping(payload.get("device"), "device", 16, optional=True))
    for key in ("smoke", "collectives"):
        value = payload.get(key)
        out[key] = _bound(_mapping(value, key, MAX_FACTS)) if value is not None else None
    _collectives(out["collectives"])
    out["error"] = _text(payload.get("error"), "error", optional=True)
    problems = payload.get("problems", [])
    out["problems"] = [str(p)[:MAX_TEXT] for p in problems[:MAX_LIST_ITEMS]] \
        if isinstance(problems, list) else []
    seconds = payload.get("seconds")
    out["seconds"] = seconds if isinstance(seconds, (int, float)) else None
    return out


_OPS = ("all_reduce", "all_gather_uint8")
"""The operations of a collectives result (:func:`preflight.cluster.collectives.merge_results`)."""


def _collectives(value: dict[str, Any] | None) -> None:
    """A collectives result has the shape :func:`.collectives.merge_results` reads: a text status
    and a mapping per operation. Raises :class:`Refused` otherwise (redteam15: a list as the
    status or as an operation's result ended rank 0 with exit 3 and no report)."""
    if value is None or set(value) == {"$unknown"}:
        return
    if not isinstance(value.get("status"), (str, type(None))):
        raise Refused(f"collectives status is {type(value['status']).__name__}, not text")
    for op in _OPS:
        if not isinstance(value.get(op, {}), dict):
            raise Refused(f"collectives {op} is {type(value[op]).__name__}, not a mapping")


def encode(payload: dict[str, Any]) -> bytes:
    """This rank's payload as JSON bytes, within :data:`MAX_PAYLOAD_BYTES`."""
    rank = payload.get("rank")
    rank = rank if isinstance(rank, int) else -1
    try:
        data = json.dumps(_clean(payload, rank), separators=(",", ":")).encode()
    except (Refused, TypeError, ValueError) as exc:   # our own payload: a bug, reported as such
        data = json.dumps({"rank": rank, "error": f"payload not sendable: {exc}"}).encode()
    if len(data) <= MAX_PAYLOAD_BYTES:
        return data
    size = len(data)
    slim = dict(payload, smoke=None, facts={}, env={},
                error=(payload.get("error") or "") + f" (payload of {size:,} bytes, over the cap "
                      f"of {MAX_PAYLOAD_BYTES:,}: its facts were not sent)")
    return json.dumps(_clean(slim, rank), separators=(",", ":")).encode()[:MAX_PAYLOAD_BYTES]


def accept(raw: bytes, rank: int, announced: int) -> dict[str, Any]:
    """What rank 0 keeps of ``raw`` received from ``rank``; raises :class:`Refused` saying why.

    ``announced``: the size the rank said it would send (over the cap, nothing was received).
    """
    if announced > MAX_PAYLOAD_BYTES or announced < 0:
        raise Refused(f"it announced {announced:,} bytes, over the cap of {MAX_PAYLOAD_BYTES:,}")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Refused(f"unreadable JSON ({type(exc).__name__})") from None
    return _clean(doc, rank)
