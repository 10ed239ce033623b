"""``CUDA_VISIBLE_DEVICES`` values no GPU matches (redteam4, issue 21): in the GPU probe
(probes/gpu.py ``resolve_visible``) a 5,000-digit index raised Python's ValueError (past its
4,300-digit integer limit), and a non-ASCII digit (``٣``, ARABIC-INDIC DIGIT THREE) was read as
GPU 3, where the driver's C parsing of the list reads ASCII ``0``-``9`` only; in the multi-rank
mode's device slot (cluster/launch.py ``device_slot``) ``²`` and 5,000 digits raised ValueError,
an internal error on every rank. Each is an entry that matches no device: CUDA ignores it and
every entry after it."""

from __future__ import annotations

import pytest

from preflight.probes.gpu import HostGPU, resolve_visible

HOST = [HostGPU(i, f"GPU{i}", "9.0", f"GPU-{i:08x}-0000-0000-0000-000000000000")
        for i in range(4)]


@pytest.mark.parametrize("spec, expected", [
    ("0" + "1" * 5000, []), ("9" * 5000, []), ("1,0" + "7" * 4400, [1]),
    ("\u0663", []), ("2,\u0663", [2]), ("\uff11", []),
])
def test_an_index_no_gpu_can_have_is_no_device_not_an_error(spec: str,
                                                            expected: list[int]) -> None:
    visible, note = resolve_visible(spec, HOST)
    assert [v.gpu.index for v in visible] == expected
    assert "matches no unique device" in note


def test_plain_indices_still_resolve() -> None:
    visible, note = resolve_visible("3,01,0", HOST)
    assert [v.gpu.index for v in visible] == [3, 1, 0] and note == ""


@pytest.mark.parametrize("entry", ["\u00b2", "\u0663", "1" * 5000])
def test_the_multi_rank_slot_of_such_an_entry_is_no_index(entry: str) -> None:
    # the multi-rank mode's device slot (cluster/launch.py): '²' passed str.isdigit and int()
    # raised, an internal error on every rank before any report
    from preflight.cluster.launch import device_slot

    slot = device_slot(0, {"CUDA_VISIBLE_DEVICES": entry})
    assert slot.index is None and slot.entry == entry
