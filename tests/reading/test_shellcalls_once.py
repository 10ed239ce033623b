"""A launch script's called scripts and folders are walked once per check (readfix7 item 3):
:mod:`preflight.jobs.scripts` (the scripts it runs) and ``overridelaunch.find_launch`` (the
folder its launch runs in) both ask :func:`~preflight.reading.shellcalls.walk`, which keeps
the answer per script, text and environment. Before, each read walked it twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.jobs.read import read_paths
from preflight.reading import shellcalls
from preflight.reading.shellcalls import walk

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"


def _count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    runs: dict[str, int] = {}
    real = shellcalls._Walk.run

    def counted(self: shellcalls._Walk) -> shellcalls.Walked:
        runs[self.path] = runs.get(self.path, 0) + 1
        return real(self)

    monkeypatch.setattr(shellcalls._Walk, "run", counted)
    shellcalls._walk.cache_clear()      # what an earlier test read is not this one's
    return runs


def test_each_script_is_walked_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "base.yaml").write_text("trainer:\n  nnodes: 1\n")
    (tmp_path / "inner.sh").write_text(
        "#!/bin/bash\ncd conf\npython3 -m verl.trainer.main_ppo --config-path=. "
        "--config-name=base trainer.nnodes=${NODES:-1}\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\nNODES=4 bash inner.sh\n")
    runs = _count(monkeypatch)
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts["config.verl.trainer.nnodes"] == 4
    assert runs and set(runs.values()) == {1}, runs


@pytest.mark.parametrize("job", ["holdout3-verl-qwen3-30b-trtllm-fp8-rollout",
                                 "holdout3-mbridge-gptoss-20b-sft-fp8cs-recipe"])
def test_real_jobs_walk_each_script_once(monkeypatch: pytest.MonkeyPatch, job: str) -> None:
    runs = _count(monkeypatch)
    read_paths([str(REAL / job / "files")])
    assert runs and set(runs.values()) == {1}, runs


def test_the_walk_kept_depends_on_the_environment() -> None:
    text = "cd ${DIR:-a}\nbash x.sh\n"
    assert walk("/j/run.sh", text).calls[0].folder.path == "a"
    assert walk("/j/run.sh", text, {"DIR": "b"}).calls[0].folder.path == "b"
    assert walk("/j/run.sh", text).calls[0].folder.path == "a"
    exported = walk("/j/run.sh", "export A=1\nbash x.sh\n", {shellcalls.ENVIRON: "B", "B": "2"})
    assert dict(exported.calls[0].env) == {"A": "1", "B": "2"}
