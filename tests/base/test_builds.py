"""base/builds.py: which torch a nightly / source build pairs with (pytorch/ao issue 2904's pair)."""

from __future__ import annotations

import pytest

from preflight.base.builds import build_kind, nightly_date, pairing_facts
from preflight.facts import Unknown


@pytest.mark.parametrize(("version", "kind"), [
    ("0.13.0", "release"), ("0.13.0+cu128", "release"), ("2.9.0rc1", "release"),
    ("0.13.0.post1", "release"), ("0.13.0.dev20250827", "nightly"),
    ("0.13.0.dev20250827+cu128", "nightly"), ("2.9.0.dev20250827+rocm6.4", "nightly"),
    ("0.13.0+git1a2b3c4", "source"), ("0.13.0.dev0", "source"), ("2.4.0a0+3bcc3cd.nv24.07", "source"),
    ("0.13.0.dev20250827+git1a2b3c4", "source"),  # a dated dev part, built from a commit
    ("0.13.0.dev99999999", "source"),  # eight digits that are no date
    ("not a version", None), (None, None), (3, None), ("1" * 5000, None),
])
def test_build_kind(version: object, kind: str | None) -> None:
    assert build_kind(version) == kind


def test_nightly_date() -> None:
    assert nightly_date("0.13.0.dev20250827+cu128") == "20250827"
    assert nightly_date("0.13.0") is None and nightly_date("0.13.0.dev0") is None


def _pkgs(**versions: str) -> dict[str, object]:
    return {f"pkg.{d.replace('_', '-')}.version": v for d, v in versions.items()}


def test_same_day_nightlies_are_a_matched_pair() -> None:
    f = pairing_facts(_pkgs(torch="2.9.0.dev20250827+cu128", torchao="0.13.0.dev20250827+cu128"))
    assert f == {"pkg.torchao.built_with_torch": True}


@pytest.mark.parametrize("torch", ["2.9.0", "2.9.0.dev20250826+cu128", "2.9.0a0+git5e1b1a2",
                                   "2.10.0"])
def test_a_nightly_with_another_torch_is_unknown(torch: str) -> None:
    got = pairing_facts(_pkgs(torch=torch, torchao="0.13.0.dev20250827"))["pkg.torchao.built_with_torch"]
    assert isinstance(got, Unknown) and "nightly" in got.reason


@pytest.mark.parametrize("torchao", ["0.13.0+git1a2b3c4", "0.13.0.dev0", "0.14.0a0+abc.nv25.09"])
def test_a_source_build_is_unknown_even_beside_a_same_day_torch(torchao: str) -> None:
    got = pairing_facts(_pkgs(torch="2.9.0.dev20250827", torchao=torchao))
    assert isinstance(got["pkg.torchao.built_with_torch"], Unknown)


def test_releases_torch_itself_and_no_torch_give_no_fact() -> None:
    assert pairing_facts(_pkgs(torch="2.9.0.dev20250827", torchao="0.12.0")) == {}
    assert pairing_facts(_pkgs(torch="2.9.0a0+git1", accelerate="1.10.1")) == {}
    assert pairing_facts(_pkgs(torchao="0.13.0.dev20250827")) == {}
    assert pairing_facts(_pkgs(torch="garbage", torchao="0.13.0.dev20250827")) == {}


def test_hostile_values_never_raise() -> None:
    values: dict[str, object] = {"pkg.torch.version": "2.9.0.dev20250827", "pkg.x.version": 7,
                                 "pkg.y.version": Unknown("unreadable"), "pkg.z.version": "\x00",
                                 "pkg.a.b.version": "1.0.dev0", "pkg..version": "1.0.dev0",
                                 "pkg.w.version": "9" * 5000 + ".dev0"}
    assert pairing_facts(values) == {}
