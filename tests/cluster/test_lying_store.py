"""A rank that writes the job's store keys cannot make another rank fail with an internal
error (issue 21 item 7; red team, this round).

Any rank of a job can write its store (torch's TCPStore has no owner per key). A rank that
wrote the roster before rank 0 (``x``, ``[5, 0, 1]`` in a world of 3) made an honest rank fail
with "internal error: JSONDecodeError", or wait 45 s for a rank 5 and then fail the same way; one
that emptied the ready list could leave rank 0 off its own roster. The store here is torch's own
in-process HashStore, the same interface as the job's TCPStore.
"""

from __future__ import annotations

import json
import time

import pytest

torch_dist = pytest.importorskip("torch.distributed")

from preflight.cluster.gather import RankZeroSilent, _roll_call, exchange  # noqa: E402
from preflight.cluster.launch import rank_info  # noqa: E402


def _info(rank: int, world: int):
    return rank_info({"RANK": str(rank), "WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1",
                      "MASTER_PORT": "29400", "TORCHELASTIC_RUN_ID": "rt"})


@pytest.mark.parametrize("forged", ["x", "[5, 0, 1]", "{}", "[1, 2]", "[0, 0, 1]", "[]",
                                    "[0, true]", "[" * 5000])
def test_a_forged_roster_is_one_line_not_an_internal_error(forged: str) -> None:
    store = torch_dist.HashStore()
    info = _info(1, 3)
    store.set("fp8d/rt/roster", forged)
    with pytest.raises(RankZeroSilent) as exc:
        exchange(store, info, {"rank": 1, "facts": {}}, time.monotonic() + 5)
    assert "another rank wrote it" in str(exc.value)


def test_rank_0_is_on_its_own_roster_whatever_the_ready_list_says() -> None:
    store = torch_dist.HashStore()
    info = _info(0, 2)
    store.set("fp8d/rt/ready_list", "1,")            # a rank rewrote the list without rank 0
    store.set("fp8d/rt/ready/1", "1")
    store.add("fp8d/rt/ready_count", 2)
    present, missing = _roll_call(store, info, time.monotonic() + 5)
    assert present[0] == 0 and 0 not in missing
    assert json.loads(store.get("fp8d/rt/roster"))[0] == 0
