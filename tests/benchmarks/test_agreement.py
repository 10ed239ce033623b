"""benchmarks/agreement.py: the real-job agreement benchmark and its jobs.

Every job.yaml is well-formed, cites a public source, and names only rule ids that exist; every
job file says where it comes from; the scoring follows its documented definition (fakes of the
report, which is our own interface); and the benchmark runs fp8-doctor for real on two jobs.
No network, no GPU.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_agreement() -> Any:
    spec = importlib.util.spec_from_file_location("agreement", REPO / "benchmarks" / "agreement.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agreement"] = module       # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


ag = _load_agreement()
JOBS = ag.load_jobs()
RULE_IDS = set(re.findall(r"^\| \[(FP8D-[A-Z0-9-]+)\]", (REPO / "docs" / "rules.md")
                          .read_text(encoding="utf-8"), re.M))


TUNING = [j for j in JOBS if j.set == "tuning"]
HOLDOUT = [j for j in JOBS if j.set == "holdout"]
HOLDOUT2 = [j for j in JOBS if j.set == "holdout2"]
HOLDOUT3 = [j for j in JOBS if j.set == "holdout3"]
HOLDOUT4 = [j for j in JOBS if j.set == "holdout4"]
HOLDOUT5 = [j for j in JOBS if j.set == "holdout5"]
HOLDOUT6 = [j for j in JOBS if j.set == "holdout6"]
HOLDOUT7 = [j for j in JOBS if j.set == "holdout7"]
HOLDOUT8 = [j for j in JOBS if j.set == "holdout8"]
HOLDOUT9 = [j for j in JOBS if j.set == "holdout9"]
HOLDOUT10 = [j for j in JOBS if j.set == "holdout10"]
HOLDOUT11 = [j for j in JOBS if j.set == "holdout11"]
HOLDOUT12 = [j for j in JOBS if j.set == "holdout12"]
HOLDOUT13 = [j for j in JOBS if j.set == "holdout13"]
HOLDOUT14 = [j for j in JOBS if j.set == "holdout14"]
HOLDOUT15 = [j for j in JOBS if j.set == "holdout15"]
HOLDOUT16 = [j for j in JOBS if j.set == "holdout16"]
HOLDOUT17 = [j for j in JOBS if j.set == "holdout17"]
HOLDOUT18 = [j for j in JOBS if j.set == "holdout18"]
HOLDOUT19 = [j for j in JOBS if j.set == "holdout19"]
HOLDOUT20 = [j for j in JOBS if j.set == "holdout20"]
HOLDOUT21 = [j for j in JOBS if j.set == "holdout21"]
HOLDOUT22 = [j for j in JOBS if j.set == "holdout22"]
HOLDOUT23 = [j for j in JOBS if j.set == "holdout23"]
HOLDOUT24 = [j for j in JOBS if j.set == "holdout24"]
HOLDOUT25 = [j for j in JOBS if j.set == "holdout25"]


def test_each_set_has_enough_jobs_from_several_sources() -> None:
    assert (len(TUNING) + len(HOLDOUT) + len(HOLDOUT2) + len(HOLDOUT3) + len(HOLDOUT4)
            + len(HOLDOUT5) + len(HOLDOUT6) + len(HOLDOUT7) + len(HOLDOUT8) + len(HOLDOUT9)
            + len(HOLDOUT10) + len(HOLDOUT11) + len(HOLDOUT12) + len(HOLDOUT13)
            + len(HOLDOUT14) + len(HOLDOUT15) + len(HOLDOUT16) + len(HOLDOUT17)
            + len(HOLDOUT18) + len(HOLDOUT19) + len(HOLDOUT20) + len(HOLDOUT21)
            + len(HOLDOUT22) + len(HOLDOUT23) + len(HOLDOUT24)
            + len(HOLDOUT25)) == len(JOBS)
    assert 24 <= len(TUNING) <= 32
    assert 20 <= len(HOLDOUT) <= 25
    assert 15 <= len(HOLDOUT2) <= 20
    assert 15 <= len(HOLDOUT3) <= 20
    assert 15 <= len(HOLDOUT4) <= 20
    assert 15 <= len(HOLDOUT5) <= 20
    assert 15 <= len(HOLDOUT6) <= 20
    assert 15 <= len(HOLDOUT7) <= 20
    assert 15 <= len(HOLDOUT8) <= 20
    assert 15 <= len(HOLDOUT9) <= 20
    assert 15 <= len(HOLDOUT10) <= 20
    assert 15 <= len(HOLDOUT11) <= 20
    assert 15 <= len(HOLDOUT12) <= 20
    assert 15 <= len(HOLDOUT13) <= 20
    assert 15 <= len(HOLDOUT14) <= 20
    assert 15 <= len(HOLDOUT15) <= 20
    assert 15 <= len(HOLDOUT16) <= 20
    assert 15 <= len(HOLDOUT17) <= 20
    assert 15 <= len(HOLDOUT18) <= 20
    assert 15 <= len(HOLDOUT19) <= 20
    assert 15 <= len(HOLDOUT20) <= 20
    assert 15 <= len(HOLDOUT21) <= 20
    assert 15 <= len(HOLDOUT22) <= 20
    assert 15 <= len(HOLDOUT23) <= 20
    assert 15 <= len(HOLDOUT24) <= 20
    assert 15 <= len(HOLDOUT25) <= 20
    for jobs, repos in ((TUNING, 12), (HOLDOUT, 10), (HOLDOUT2, 8), (HOLDOUT3, 10), (HOLDOUT4, 10),
                        (HOLDOUT5, 10), (HOLDOUT6, 10), (HOLDOUT7, 10), (HOLDOUT8, 10), (HOLDOUT9, 10),
                        (HOLDOUT10, 10), (HOLDOUT11, 10), (HOLDOUT12, 10),
                        (HOLDOUT13, 10), (HOLDOUT14, 10), (HOLDOUT15, 8), (HOLDOUT16, 8),
                        (HOLDOUT17, 8), (HOLDOUT18, 8), (HOLDOUT19, 8),
                        (HOLDOUT20, 8), (HOLDOUT21, 8), (HOLDOUT22, 8), (HOLDOUT23, 8),
                        (HOLDOUT24, 8), (HOLDOUT25, 8)):
        assert len({j.source["repo"] for j in jobs}) >= repos
        assert {j.source["type"] for j in jobs} >= {"example"}
    assert {j.source["type"] for j in TUNING} >= {"issue", "example"}


def test_the_later_holdout_sets_have_controls_where_any_error_is_a_false_alarm() -> None:
    for jobs, least in ((HOLDOUT2, 3), (HOLDOUT3, 4), (HOLDOUT4, 4), (HOLDOUT5, 4), (HOLDOUT6, 4),
                        (HOLDOUT7, 4), (HOLDOUT8, 4), (HOLDOUT9, 3), (HOLDOUT10, 3),
                        (HOLDOUT11, 3), (HOLDOUT12, 3), (HOLDOUT13, 3), (HOLDOUT14, 3),
                        (HOLDOUT15, 3), (HOLDOUT16, 3), (HOLDOUT17, 3),
                        (HOLDOUT18, 3), (HOLDOUT19, 3), (HOLDOUT20, 3), (HOLDOUT21, 3),
                        (HOLDOUT22, 3), (HOLDOUT23, 3), (HOLDOUT24, 3),
                        (HOLDOUT25, 3)):
        controls = [j for j in jobs if j.expected.asks_fp8 is False and not j.expected.fire
                    and j.expected.rollout_fp8 is not True]
        assert len(controls) >= least


def _cited(job: Any) -> set[tuple[str, str]]:
    """(repo, path or issue url) pairs a job was taken from."""
    url = str(job.source["url"])
    if "/issues/" in url or "/pull/" in url:
        return {(job.source["repo"], url)}
    return {(job.source["repo"], str(p).split(" @ ")[0]) for p in job.source.get("paths") or []}


def _reusing(jobs: list[Any], earlier: list[Any]) -> list[str]:
    """Slugs of ``jobs`` that cite a source one of ``earlier`` cites."""
    seen = set().union(*(_cited(j) for j in earlier))
    return [j.slug for j in jobs if _cited(j) & seen]


BY_SET = {name: [j for j in JOBS if j.set == name] for name in ag.SETS}


@pytest.mark.parametrize("index", range(1, len(ag.SETS)), ids=lambda i: ag.SETS[i])
def test_each_holdout_set_shares_no_source_with_the_earlier_sets(index: int) -> None:
    # SETS is in the order the sets were collected: each held-out set is new to every earlier one
    earlier = [j for name in ag.SETS[:index] for j in BY_SET[name]]
    assert _reusing(BY_SET[ag.SETS[index]], earlier) == []


@pytest.mark.parametrize("index", range(ag.SETS.index("holdout9"), len(ag.SETS)),
                         ids=lambda i: ag.SETS[i])
def test_each_later_holdout_set_is_its_own_set(index: int) -> None:
    # `set: holdoutN` is a schema value of its own (benchmarks/agreement.py SETS): --set holdoutN
    # selects exactly those jobs, and none of them comes with the run of the set before it.
    name, jobs = ag.SETS[index], BY_SET[ag.SETS[index]]
    assert jobs and ag.load_jobs(job_set=name) == jobs
    assert all(j.slug.startswith(f"{name}-") for j in jobs)
    assert not any(j.slug.startswith(f"{name}-")
                   for j in ag.load_jobs(job_set=ag.SETS[index - 1]))


def test_a_job_reusing_an_earlier_sets_source_is_caught() -> None:
    earlier = HOLDOUT[0]
    reused = ag.Job(slug="copy", title="", root=earlier.root, source=dict(earlier.source),
                    assume={}, paths=earlier.paths, kind=None, reader_needed="",
                    expected=earlier.expected, set="holdout2")
    assert _reusing([reused, *HOLDOUT2], TUNING + HOLDOUT) == ["copy"]
    assert _reusing([reused, *HOLDOUT3], TUNING + HOLDOUT + HOLDOUT2) == ["copy"]
    assert _reusing([reused, *HOLDOUT5], TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4) == ["copy"]
    assert _reusing([reused, *HOLDOUT6],
                    TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4 + HOLDOUT5) == ["copy"]
    assert _reusing([reused, *HOLDOUT7],
                    TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4 + HOLDOUT5 + HOLDOUT6) == ["copy"]
    assert _reusing([reused, *HOLDOUT8], TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4
                    + HOLDOUT5 + HOLDOUT6 + HOLDOUT7) == ["copy"]
    assert _reusing([reused, *HOLDOUT9], TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4
                    + HOLDOUT5 + HOLDOUT6 + HOLDOUT7 + HOLDOUT8) == ["copy"]
    assert _reusing([reused, *HOLDOUT10], TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4
                    + HOLDOUT5 + HOLDOUT6 + HOLDOUT7 + HOLDOUT8 + HOLDOUT9) == ["copy"]
    assert _reusing([reused, *HOLDOUT12], TUNING + HOLDOUT + HOLDOUT2 + HOLDOUT3 + HOLDOUT4
                    + HOLDOUT5 + HOLDOUT6 + HOLDOUT7 + HOLDOUT8 + HOLDOUT9 + HOLDOUT10
                    + HOLDOUT11) == ["copy"]


@pytest.mark.parametrize("job", JOBS, ids=lambda j: j.slug)
def test_job_names_only_existing_rules(job: Any) -> None:
    exp = job.expected
    named = set(exp.fire) | set(exp.must_not_fire) | set(exp.tolerated) | set(job.accepted)
    unknown = {r for r in named if r not in RULE_IDS and not r.startswith("FP8D-CFG-")}
    assert not unknown, f"{job.slug}: not in docs/rules.md: {sorted(unknown)}"


@pytest.mark.parametrize("job", JOBS, ids=lambda j: j.slug)
def test_every_job_file_says_where_it_comes_from(job: Any) -> None:
    owner_repo = job.source["repo"]
    readme = job.root / "README.md"
    for path in sorted((job.root / "files").rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".json", ".txt"):     # no comment syntax: a README beside job.yaml
            assert readme.is_file() and path.name in readme.read_text(encoding="utf-8"), path
            continue
        head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:12])
        assert owner_repo in head or "RECONSTRUCTION" in head, f"{path}: no citation at the top"


@pytest.mark.parametrize("raw, field", [
    ({"source": None}, "source"),
    ({"source": {"type": "example", "repo": "a/b", "url": "https://example.org/x"}}, "source.url"),
    ({"source": {"type": "example", "repo": "a/b", "url": "https://github.com/a/b"}},
     "source.commit"),
    ({"expected": {"written": "x", "verdict": "x", "fire": ["HW-0001"], "must_not_fire": []}},
     "expected.fire"),
    ({"expected": {"written": "x", "verdict": "x", "fire": ["FP8D-HW-0001"],
                   "must_not_fire": ["FP8D-HW-0001"]}}, "two of"),
    ({"check": {"paths": ["../../etc/passwd"]}}, "check.paths"),
    ({"slug": "other"}, "slug"),
    ({"set": "training"}, "set must be one of"),
])
def test_a_malformed_job_yaml_is_refused_naming_the_field(tmp_path: Path, raw: dict[str, Any],
                                                          field: str) -> None:
    good = {"schema": 1, "slug": "j", "title": "t", "assume": {"gpu": "H100"},
            "source": {"type": "issue", "repo": "a/b", "url": "https://github.com/a/b/issues/1"},
            "check": {"paths": ["run.sh"]},
            "expected": {"written": "x", "verdict": "x", "fire": [], "must_not_fire": []}}
    (tmp_path / "j" / "files").mkdir(parents=True)
    (tmp_path / "j" / "files" / "run.sh").write_text("true\n", encoding="utf-8")
    (tmp_path / "j" / "job.yaml").write_text(json.dumps({**good, **raw}), encoding="utf-8")
    with pytest.raises(ag.JobError, match=re.escape(field)):
        ag.load_job(tmp_path / "j" / "job.yaml")


def _write_job(root: Path, slug: str, **extra: Any) -> None:
    doc = {"schema": 1, "slug": slug, "title": "t", "assume": {"gpu": "H100"},
           "source": {"type": "issue", "repo": "a/b", "url": "https://github.com/a/b/issues/1"},
           "check": {"paths": ["run.sh"]},
           "expected": {"written": "x", "verdict": "x", "fire": [], "must_not_fire": []}, **extra}
    (root / slug / "files").mkdir(parents=True)
    (root / slug / "files" / "run.sh").write_text("true\n", encoding="utf-8")
    (root / slug / "job.yaml").write_text(json.dumps(doc), encoding="utf-8")


def test_a_job_is_in_the_tuning_set_unless_it_says_holdout(tmp_path: Path) -> None:
    _write_job(tmp_path, "old")
    _write_job(tmp_path, "new", set="holdout")
    _write_job(tmp_path, "newer", set="holdout2")
    _write_job(tmp_path, "newest", set="holdout3")
    _write_job(tmp_path, "fifth", set="holdout4")
    _write_job(tmp_path, "sixth", set="holdout5")
    _write_job(tmp_path, "seventh", set="holdout6")
    _write_job(tmp_path, "eighth", set="holdout7")
    _write_job(tmp_path, "ninth", set="holdout8")
    assert [(j.slug, j.set) for j in ag.load_jobs(tmp_path)] == [("eighth", "holdout7"),
                                                                 ("fifth", "holdout4"),
                                                                 ("new", "holdout"),
                                                                 ("newer", "holdout2"),
                                                                 ("newest", "holdout3"),
                                                                 ("ninth", "holdout8"),
                                                                 ("old", "tuning"),
                                                                 ("seventh", "holdout6"),
                                                                 ("sixth", "holdout5")]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout")] == ["new"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout2")] == ["newer"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout3")] == ["newest"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout4")] == ["fifth"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout5")] == ["sixth"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout6")] == ["seventh"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout7")] == ["eighth"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="holdout8")] == ["ninth"]
    assert [j.slug for j in ag.load_jobs(tmp_path, job_set="tuning")] == ["old"]
    with pytest.raises(ag.JobError, match="no such job"):       # --only outside the chosen set
        ag.load_jobs(tmp_path, only=["old"], job_set="holdout")
    with pytest.raises(ag.JobError, match="no such set"):
        ag.load_jobs(tmp_path, job_set="blind")


def test_the_set_flag_runs_one_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_job(tmp_path, "old")
    assert ag.main(["--jobs", str(tmp_path), "--set", "holdout", "--only", "old"]) == 2
    assert "no such job: old" in capsys.readouterr().err
    with pytest.raises(SystemExit):                             # argparse: not a known set
        ag.main(["--jobs", str(tmp_path), "--set", "blind"])


def _exp(**kw: Any) -> Any:
    base: dict[str, Any] = dict(asks_fp8=True, rollout_fp8=None, fire=("FP8D-HW-0004",),
                                must_not_fire=("FP8D-TE-0050",), tolerated=("FP8D-MEG-0029",),
                                scored_gaps=(), determined=True)
    return ag.Expected(**{**base, **kw})


def _report(fired: dict[str, str], facts: dict[str, Any] | None = None,
            undetermined: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"facts": {"config.megatron.fp8_format": "e4m3", "intent.fp8": True,
                      **(facts or {})},
            "findings": [{"id": i, "severity": s} for i, s in fired.items()],
            "undetermined": [{"id": i} for i in undetermined]}


def test_scoring_follows_the_documented_definition() -> None:
    assert ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-MEG-0029": "info"})
                    ).outcome == "agree"
    assert ag.score(_exp(), _report({})).outcome == "missed"
    assert ag.score(_exp(), _report({}, undetermined=("FP8D-HW-0004",))).outcome == "undetermined"
    forbidden = ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-TE-0050": "info"}))
    assert (forbidden.outcome, forbidden.false_alarms) == ("false alarm", ["FP8D-TE-0050"])
    unlisted = ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-TE-0012": "error"}))
    assert unlisted.false_alarms == ["FP8D-TE-0012"]
    warning = ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-TE-0012": "warning"}))
    assert warning.outcome == "agree"                  # only unlisted *errors* are false alarms
    both = ag.score(_exp(), _report({"FP8D-TE-0050": "info"}))
    assert both.outcome == "missed + false alarm"
    wrong_intent = ag.score(_exp(fire=()), _report({}, {"intent.fp8": False}))
    assert wrong_intent.outcome == "missed" and wrong_intent.intent_wrong
    overridden = ag.score(_exp(fire=()), _report({}, {"intent.fp8": False,
                                                      "intent.fp8_source": "a.yaml:3"}))
    assert overridden.outcome == "agree"               # asked for, then overridden: asked
    gap = ag.score(_exp(fire=(), scored_gaps=("no rule for X",)), _report({}))
    assert gap.outcome == "missed"
    assert ag.score(_exp(determined=False), _report({})).outcome == "n/a"


def test_a_rollout_the_tool_states_nothing_of_meets_no_fp8_rollout_only() -> None:
    hit = {"FP8D-HW-0004": "error"}
    assert ag.score(_exp(rollout_fp8=False), _report(hit)).outcome == "agree"
    assert ag.score(_exp(rollout_fp8=True), _report(hit)).outcome == "missed"
    unknown = _report(hit, {"intent.rollout.fp8": {"$unknown": "rollout file not read"}})
    assert ag.score(_exp(rollout_fp8=False), unknown).outcome == "missed"
    stated = _report(hit, {"intent.rollout.fp8": True})
    assert ag.score(_exp(rollout_fp8=False), stated).intent_wrong
    assert ag.score(_exp(rollout_fp8=True), stated).outcome == "agree"


def test_unread_and_reading_findings() -> None:
    nothing = {"facts": {"intent.fp8": {"$unknown": "no job config given"}},
               "findings": [{"id": "FP8D-CFG-NO-JOB", "severity": "error"}], "undetermined": []}
    assert ag.score(_exp(), nothing).outcome == "unread"
    no_intent = _report({}, {"intent.fp8": {"$unknown": "x"}})
    assert ag.score(_exp(fire=()), no_intent).outcome == "unread"
    # A reading error on a valid file of a job that was otherwise read is a false alarm ...
    stray = ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-CFG-UNREADABLE": "error"}))
    assert stray.false_alarms == ["FP8D-CFG-UNREADABLE"]
    # ... other built-ins about reading or the environment are not.
    env = ag.score(_exp(), _report({"FP8D-HW-0004": "error", "FP8D-ENV-NOT-TRAINING": "error",
                                    "FP8D-CFG-REFERENCE": "warning"}))
    assert env.outcome == "agree"


def test_review_accepts_a_finding_without_changing_the_blind_score() -> None:
    report = _report({"FP8D-HW-0004": "error", "FP8D-TT-0002": "error"})
    assert ag.score(_exp(), report).outcome == "false alarm"
    assert ag.score(_exp(), report, accepted=("FP8D-TT-0002",)).outcome == "agree"


def test_a_rule_written_after_the_run_fills_its_gap_only_after_review() -> None:
    exp = _exp(fire=(), scored_gaps=("no rule for X",))
    report = _report({"FP8D-TAO-0013": "error"})
    fills = (("FP8D-TAO-0013", "no rule for X"),)
    assert ag.score(exp, report).outcome == "missed + false alarm"          # blind: unchanged
    assert ag.score(exp, report, ("FP8D-TAO-0013",), fills).outcome == "agree"
    # the rule must fire, and be accepted, for the gap to count as filled
    assert ag.score(exp, _report({}), ("FP8D-TAO-0013",), fills).outcome == "missed"
    assert ag.score(exp, report, (), fills).outcome == "missed + false alarm"


def test_a_review_may_fill_only_a_gap_the_expectation_lists(tmp_path: Path) -> None:
    src = next(p for p in sorted(ag.JOBS_DIR.iterdir()) if p.name.startswith("holdout6-ao-3982"))
    job = tmp_path / src.name
    shutil.copytree(src, job)
    text = (job / "job.yaml").read_text()
    assert len(ag.load_jobs(tmp_path)[0].fills) == 1
    (job / "job.yaml").write_text(text.replace("      gap: >-\n        ", "      gap: >-\n        x "))
    with pytest.raises(ag.JobError, match="gap"):
        ag.load_jobs(tmp_path)


def test_the_benchmark_runs_fp8_doctor_on_two_jobs(tmp_path: Path) -> None:
    slugs = ["megatron-llama3-8b-h200-mxfp8", "torchtitan-llama3-8b-toml-stock"]
    out = tmp_path / "agree.json"
    table = tmp_path / "agree.md"
    assert ag.main(["--only", *slugs, "--json", str(out), "-o", str(table),
                    "--timeout", "120"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [j["slug"] for j in data["jobs"]] == sorted(slugs)
    for job in data["jobs"]:
        assert job["error"] is None and job["outcome"] in ag.OUTCOMES
        assert job["read"] is True                     # both are configs fp8-doctor knows
    assert data["scored"] == 2 and 0 <= data["agree"] <= 2
    assert all(s in table.read_text(encoding="utf-8") for s in slugs)
