"""Real Transformer Engine on the GPU (issue 15): the TE smoke path, its recompute check's negative
control, the resume check, preflight.inspect on TE modules, --deep's TE import classification,
a TE without its torch extension, and where the TE stage's seconds go.

    python3 benchmarks/te_gpu.py OUT_DIR        (TE importable: benchmarks/te_device.sh sets it up)

Writes OUT_DIR/te_gpu.json. Each part is guarded: one failing part is recorded, the rest runs.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "smoke")]
OUT: dict[str, Any] = {"errors": {}, "part_seconds": {}}
VAR = "NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE"


def part(name: str):  # noqa: ANN201
    def wrap(fn):  # noqa: ANN001, ANN202
        t0 = time.perf_counter()
        try:
            OUT[name] = fn()
        except Exception as exc:  # noqa: BLE001 - record and go on
            OUT["errors"][name] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-2500:]}"
        OUT["part_seconds"][name] = round(time.perf_counter() - t0, 2)
        print(f"[{name}] {OUT['part_seconds'][name]}s", flush=True)
        return fn
    return wrap


def cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> dict[str, Any]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "preflight", *args], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})
    out: dict[str, Any] = {"args": args, "env": env or {}, "rc": p.returncode,
                           "wall_s": round(time.perf_counter() - t0, 2),
                           "stderr_tail": p.stderr[-1500:]}
    try:
        out["json"] = json.loads(p.stdout)
    except ValueError:
        out["stdout_tail"] = p.stdout[-3000:]
    return out


def smoke_summary(doc: dict[str, Any]) -> dict[str, Any]:
    j = doc.get("json") or {}
    facts = j.get("facts", {})
    te = (j.get("smoke") or {}).get("backends", {}).get("te", {})
    return {"rc": doc["rc"], "wall_s": doc["wall_s"],
            "facts": {k: v for k, v in facts.items() if k.startswith("smoke.")},
            "te_timings": te.get("timings"), "te_seconds": te.get("seconds"),
            "te_resume": te.get("resume"), "torch_import_s": (j.get("smoke") or {}).get("torch_import_s"),
            "findings": [(f.get("rule_id") or f.get("id"), f.get("severity")) for f in j.get("findings", [])],
            "stderr_tail": doc.get("stderr_tail", "")[-600:]}


@part("env")
def _env() -> Any:
    import torch
    import transformer_engine

    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "transformer_engine": transformer_engine.__version__,
           "device": torch.cuda.get_device_name(0), "cc": torch.cuda.get_device_capability(0),
           "nvidia_smi": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                         "--format=csv,noheader"], capture_output=True,
                                        text=True).stdout.strip()}
    try:
        import torchao

        out["torchao"] = torchao.__version__
    except ImportError as exc:
        out["torchao"] = f"not importable: {exc}"
    return out


@part("smoke_te_cold")
def _smoke_te_cold() -> Any:
    return smoke_summary(cli(["smoke", "--backend", "te", "--format", "json"]))


@part("smoke_te_warm")
def _smoke_te_warm() -> Any:
    return smoke_summary(cli(["smoke", "--backend", "te", "--format", "json"]))


@part("smoke_te_warm2")
def _smoke_te_warm2() -> Any:
    return smoke_summary(cli(["smoke", "--backend", "te", "--format", "json"]))


@part("smoke_te_unsafe_env")
def _smoke_te_env() -> Any:
    return smoke_summary(cli(["smoke", "--backend", "te", "--format", "json"], {VAR: "1"}))


@part("smoke_auto")
def _smoke_auto() -> Any:
    doc = cli(["smoke", "--format", "json"])
    s = smoke_summary(doc)
    s["torchao_resume"] = ((doc.get("json") or {}).get("smoke") or {}).get(
        "backends", {}).get("torchao", {}).get("resume")
    return s


@part("negative_control_1190")
def _negative() -> Any:
    import transformer_engine.pytorch as te_pt
    from te_prefix import pre_1254_recompute

    from preflight.smoke import te_check

    fixed = te_check.drift(te_pt, "cuda:0")
    with pre_1254_recompute():
        emulated = te_check.drift(te_pt, "cuda:0")
    after = te_check.drift(te_pt, "cuda:0")   # the patch is gone again
    return {"fixed": fixed, "pre_1254_emulated": emulated, "after_unpatch": after}


@part("profile_te_stage")
def _profile() -> Any:
    """Where the TE stage's seconds go, in-process (TE already imported by the parts above)."""
    import cProfile
    import io
    import pstats

    from preflight.smoke import te_check

    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    res = te_check.run_all("cuda:0", (9, 0))
    prof.disable()
    wall = round(time.perf_counter() - t0, 2)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(45)
    return {"wall_s": wall, "timings": res.get("timings"), "top": buf.getvalue()[-9000:]}


@part("inspect_te")
def _inspect() -> Any:
    import torch
    import transformer_engine.pytorch as te_pt

    from preflight import inspect
    from preflight.smoke.te_check import autocast, delayed_recipe

    def build() -> Any:
        torch.manual_seed(0)
        return torch.nn.Sequential(te_pt.LayerNormMLP(256, 1024, params_dtype=torch.bfloat16),
                                   te_pt.Linear(256, 256, params_dtype=torch.bfloat16)).cuda()

    def train(m: Any, opt: Any, steps: int) -> None:
        for _ in range(steps):
            with autocast(te_pt, delayed_recipe()):
                y = m(torch.randn(128, 256, device="cuda", dtype=torch.bfloat16))
            y.float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad()

    def report(m: Any, opt: Any, **kw: Any) -> dict[str, Any]:
        r = inspect(m, opt, **kw)
        facts = {k: v for k, v in r.to_dict().get("facts", {}).items() if "te_" in k or "steps" in k
                 or k in ("runtime.fp8.converted", "runtime.fp8.module_types", "runtime.resumed")}
        return {"facts": json.loads(json.dumps(facts, default=str)),
                "findings": [(f.rule_id, str(f.severity)) for f in r.findings],
                "undetermined": [str(getattr(u, "rule_id", u)) for u in r.undetermined]}

    out: dict[str, Any] = {}
    m = build()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    out["before_training"] = report(m, opt)
    train(m, opt, 6)
    out["trained"] = report(m, opt)
    sd, osd = m.state_dict(), opt.state_dict()
    for mode in ("dropped", "unsafe_env"):
        fresh = build()
        fopt = torch.optim.AdamW(fresh.parameters(), lr=1e-3)
        fopt.load_state_dict(osd)
        if mode == "dropped":
            fresh.load_state_dict({k: v for k, v in sd.items() if not k.endswith("_extra_state")},
                                  strict=False)
        else:
            os.environ[VAR] = "1"
            try:
                fresh.load_state_dict(sd)
            finally:
                os.environ.pop(VAR, None)
        out[f"{mode}_after_load"] = report(fresh, fopt, extra_facts={"runtime.resumed": True})
        train(fresh, fopt, 2)
        out[f"{mode}_after_2_steps"] = report(fresh, fopt)
    return out


@part("deep_import")
def _deep() -> Any:
    doc = cli(["check", "--deep", "--no-smoke", "--format", "json", "--fail-on", "never"])
    facts = (doc.get("json") or {}).get("facts", {})
    return {"rc": doc["rc"], "wall_s": doc["wall_s"],
            "facts": {k: v for k, v in facts.items() if k.startswith("import.")},
            "stderr_tail": doc["stderr_tail"][-600:]}


@part("te_without_torch_extension")
def _broken() -> Any:
    import transformer_engine

    src = os.path.dirname(transformer_engine.__file__)
    tmp = tempfile.mkdtemp(prefix="te-broken-")
    try:
        shutil.copytree(src, os.path.join(tmp, "transformer_engine"),
                        ignore=shutil.ignore_patterns("transformer_engine_torch*"))
        env = {"PYTHONPATH": os.pathsep.join([tmp, os.environ.get("PYTHONPATH", "")])}
        smoke = cli(["smoke", "--backend", "te", "--format", "json"], env)
        deep = cli(["check", "--deep", "--no-smoke", "--format", "json", "--fail-on", "never"], env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    s = smoke_summary(smoke)
    dfacts = (deep.get("json") or {}).get("facts", {})
    return {"smoke": {k: s[k] for k in ("rc", "wall_s", "findings", "stderr_tail")},
            "smoke_facts": {k: v for k, v in s["facts"].items() if "te" in k or "status" in k},
            "deep": {k: v for k, v in dfacts.items() if "transformer_engine" in k},
            "deep_rc": deep["rc"]}


if __name__ == "__main__":
    dest = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "te_gpu.json"), "w", encoding="utf-8") as fh:
        json.dump(OUT, fh, indent=1, default=str)
    print(json.dumps({"errors": OUT["errors"], "part_seconds": OUT["part_seconds"]}, indent=1)[:4000])
