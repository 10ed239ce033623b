"""preflight/cluster/payload.py: what a rank sends is bounded, what rank 0 keeps is checked.

The jobs that exercise it end to end are tests/cluster/test_always_reports.py; here each cap and
each kind of lie on its own (issue 21 item 7).
"""

from __future__ import annotations

import json

import pytest

from preflight.cluster.payload import (
    MAX_LIST_ITEMS,
    MAX_PAYLOAD_BYTES,
    MAX_TEXT,
    Refused,
    accept,
    encode,
)


def _payload(**facts: object) -> dict[str, object]:
    return {"rank": 3, "local_rank": 1, "host": "n1", "node_id": "ab", "launcher": "torchrun",
            "pid": 7, "device": {"entry": "1", "key": "index:1", "problem": None, "index": 1},
            "env": {"NCCL_ALGO": "Ring"}, "facts": dict(facts), "smoke": None, "error": None,
            "collectives": None, "problems": [], "seconds": 1.5}


def test_an_honest_payload_goes_through_unchanged() -> None:
    sent = _payload(**{"pkg.torch.version": "2.13.0", "gpu.names": ["H100", "H100"]})
    assert accept(encode(sent), 3, 0) == sent


def test_a_list_of_two_million_items_becomes_unknown_on_the_sender() -> None:
    data = encode(_payload(**{"pkg.transformer-engine.version": list(range(2_000_000))}))
    assert len(data) < 10_000
    value = accept(data, 3, len(data))["facts"]["pkg.transformer-engine.version"]
    assert "2,000,000 items" in value["$unknown"] and f"{MAX_LIST_ITEMS:,}" in value["$unknown"]


def test_a_payload_over_the_cap_is_cut_to_it_and_says_so() -> None:
    # (the 200 MB one of the issue takes the same path; 2 MB keeps the test light)
    huge = _payload(**{f"x.{i}": "a" * (MAX_TEXT - 1) for i in range(128)})
    data = encode(huge)
    assert len(data) <= MAX_PAYLOAD_BYTES
    got = accept(data, 3, len(data))
    assert got["facts"] == {} and "over the cap" in got["error"]
    assert len(encode(_payload(big="a" * 20_000_000))) < 100_000   # one long string: cut


@pytest.mark.parametrize("doc, says", [
    ({"rank": 0}, "said it was rank 0"),
    ({"rank": "3"}, "said it was rank '3'"),
    ({"rank": True}, "said it was rank True"),
    ({"rank": 3, "facts": "x"}, "facts is str"),
    ({"rank": 3, "env": {"A": 1}}, "not text"),
    ({"rank": 3, "local_rank": -1}, "local_rank"),
    ({"rank": 3, "host": ["a"]}, "host"),
    ({"rank": 3, "facts": {str(i): 1 for i in range(20_001)}}, "over the cap"),
    ([1, 2], "not a mapping"),
])
def test_a_lying_payload_is_refused_with_the_reason(doc: object, says: str) -> None:
    with pytest.raises(Refused, match=says.replace("(", r"\(")):
        accept(json.dumps(doc).encode(), 3, 10)


@pytest.mark.parametrize("raw, says", [
    (b"\xff\xfe", "unreadable JSON"),
    (b"[" * 100_000, "unreadable JSON"),
    (b'{"rank": 3, "facts": {"a": ' + b"9" * 5000 + b"}}", "unreadable JSON"),
    (b'{"rank": 3, "facts": {"a": ' + b"[" * 40 + b"]" * 40 + b"}}", "nested"),
])
def test_malformed_bytes_are_refused_not_raised(raw: bytes, says: str) -> None:
    with pytest.raises(Refused, match=says):
        accept(raw, 3, len(raw))


def test_a_size_announced_past_the_cap_is_refused_before_reading() -> None:
    with pytest.raises(Refused, match="announced 209,715,200 bytes"):
        accept(b"", 3, 200 * 1024 * 1024)
