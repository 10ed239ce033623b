"""The speed-up prediction: shapes from real config facts, the GEMM list, the arithmetic, the
child on this machine's real torch (CPU: undetermined, said), and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import api
from preflight.cli import main
from preflight.facts import Unknown
from preflight.speedup import ModelShape, Timing, gemm_table, linears, predict
from preflight.speedup.render import render_markdown, render_text
from preflight.speedup.run import SpeedupReport, speedup, timings_from
from preflight.speedup.shapes import model_shape, read_hf_config

LLAMA8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256,
           "hidden_act": "silu"}
SHAPE = ModelShape(hidden=4096, ffn=14336, heads=32, kv_heads=8, layers=32, vocab=128256,
                   seq=4096, micro_batch=1)


def test_modelled_cast_time_counts_the_bytes_of_x_w_and_dy() -> None:
    from preflight.speedup.child import CAST_BYTES_PER_ELEMENT, cast_seconds

    # X [8192, 2048], W [2048, 2048], dY [8192, 2048] at 1 TB/s
    got = cast_seconds(8192, 2048, 2048, 1e12)
    assert got == pytest.approx(CAST_BYTES_PER_ELEMENT * (2 * 8192 * 2048 + 2048 * 2048) / 1e12)


def test_gemms_of_a_llama_block_with_gqa_and_swiglu() -> None:
    lins = {lin.name: lin for lin in linears(SHAPE)}
    assert (lins["qkv"].d_in, lins["qkv"].d_out) == (4096, 4096 + 2 * 1024)
    assert (lins["fc1"].d_out, lins["fc2"].d_in) == (2 * 14336, 14336)
    rows = gemm_table(SHAPE)
    assert len(rows) == 12 and all(r["count"] == 32 for r in rows)
    wgrad = next(r for r in rows if r["linear"] == "fc2" and r["gemm"] == "wgrad")
    assert (wgrad["m"], wgrad["k"], wgrad["n"]) == (4096, 4096, 14336)   # dW = dY^T X


def test_tensor_parallel_splits_column_and_row_parallel_linears() -> None:
    tp = ModelShape(**{**SHAPE.__dict__, "tp": 4})
    lins = {lin.name: lin for lin in linears(tp)}
    assert lins["qkv"].d_out == (4096 + 2048) // 4 and lins["attn_out"].d_in == 1024
    assert lins["fc1"].d_out == 2 * 14336 // 4 and lins["fc2"].d_in == 14336 // 4


def test_prediction_arithmetic_and_verdicts() -> None:
    fast = [Timing(n, 2.0, 1.0, 0.8, 0.2) for n in ("qkv", "attn_out", "fc1", "fc2")]
    p = predict(SHAPE, fast, other_s=0.0)
    assert p.linear_speedup == pytest.approx(2.0) and p.step_speedup == pytest.approx(2.0)
    assert "should pay" in p.verdict
    # the untimed rest dilutes the gain: (4*32*2 + R) / (4*32*1 + R)
    p = predict(SHAPE, fast, other_s=128.0)
    assert p.step_speedup == pytest.approx(384 / 256)
    slow = [Timing(n, 1.0, 1.3, 0.6, 0.7) for n in ("qkv", "attn_out", "fc1", "fc2")]
    assert "slower than BF16" in predict(SHAPE, slow, 0.0).verdict
    meh = [Timing(n, 1.02, 1.0, 0.9, 0.1) for n in ("qkv", "attn_out", "fc1", "fc2")]
    assert "not pay" in predict(SHAPE, meh, 0.0).verdict


def test_shape_from_an_hf_config_json(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B))
    s = model_shape({}, model_config=str(cfg), seq=4096, micro_batch=2)
    assert isinstance(s, ModelShape)
    assert (s.hidden, s.kv_heads, s.layers, s.tokens) == (4096, 8, 32, 8192)
    assert any("config.json" in src for src in s.source)


@pytest.mark.parametrize("text, what", [
    ("{", "not JSON"), ("[1]", "not a JSON object"), ('{"hidden_size": 8}', "no usable"),
    ('{"hidden_size": 4096, "intermediate_size": 1, "num_attention_heads": true, '
     '"num_hidden_layers": 2}', "num_attention_heads"),
])
def test_a_bad_model_config_is_a_reason_not_a_crash(tmp_path: Path, text: str, what: str) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(text)
    got = model_shape({}, model_config=str(cfg), seq=1, micro_batch=1)
    assert isinstance(got, Unknown) and what in got.reason and str(cfg) in got.reason
    with pytest.raises(ValueError):
        read_hf_config(str(tmp_path / "missing.json"))


MEGATRON = """#!/bin/bash
torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \\
  --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu \\
  --seq-length 4096 --micro-batch-size 1 --fp8-format hybrid --transformer-impl transformer_engine
"""


def test_shape_from_megatron_flags_read_by_the_config_readers(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(MEGATRON)
    facts, *_ = api.collect_facts(api.CheckOptions(paths=(str(script),)))
    s = model_shape(facts.values)
    assert isinstance(s, ModelShape), s
    assert (s.hidden, s.ffn, s.heads, s.kv_heads, s.layers, s.seq, s.micro_batch) == (
        4096, 14336, 32, 8, 32, 4096, 1)
    assert s.gated


AXOLOTL = """\
base_model: meta-llama/Llama-3.1-8B
sequence_len: 4096
micro_batch_size: 2
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
"""


def test_shape_from_an_axolotl_job_naming_a_known_model(tmp_path: Path) -> None:
    job = tmp_path / "axolotl.yaml"
    job.write_text(AXOLOTL)
    facts, *_ = api.collect_facts(api.CheckOptions(paths=(str(job),)))
    s = model_shape(facts.values)
    assert isinstance(s, ModelShape), s
    assert (s.hidden, s.layers, s.seq, s.micro_batch) == (4096, 32, 4096, 2)


def test_known_model_name_and_unknown_shapes(tmp_path: Path) -> None:
    s = model_shape({"config.hf_trainer.model_name_or_path": "meta-llama/Llama-3.1-8B",
                     "config.hf_trainer.per_device_train_batch_size": 2,
                     "config.hf_trainer.max_seq_length": 2048})
    assert isinstance(s, ModelShape) and (s.hidden, s.layers, s.tokens) == (4096, 32, 4096)
    none = model_shape({})
    assert isinstance(none, Unknown) and "--model-config" in none.reason


def test_the_child_runs_on_this_machines_torch_and_says_why_not() -> None:
    # CPU CI: real torch in a real child; no CUDA -> no timing, a reason, still the GEMM list.
    report = speedup({}, SHAPE, timeout=120)
    assert report.prediction is None and report.gemms
    assert "no timing" in report.why_not
    text = render_text(report)
    assert "Undetermined" in text and "fc2" in text


def test_timings_from_a_child_result_and_render() -> None:
    lin = {"name": "qkv", "d_in": 1, "d_out": 1, "bf16": {"fwd": 1e-3, "dgrad": 1e-3,
           "wgrad": 1e-3}, "fp8": {"fwd": 5e-4, "dgrad": 5e-4, "wgrad": 5e-4},
           "cast_model_s": 3e-4}
    result = {"status": "ok", "linears": [{**lin, "name": n} for n in
                                          ("qkv", "attn_out", "fc1", "fc2")],
              "other": {"attention_s": 0.0}}
    t = timings_from(result)
    assert t[0].bf16_s == pytest.approx(3e-3) and t[0].fp8_s == pytest.approx(1.8e-3)
    assert t[0].cast_s == pytest.approx(3e-4)
    assert timings_from(result, whole=True) == []          # no whole-layer timing measured
    whole = {**result, "linears": [{**lin, "name": n, "whole": {"bf16_s": 4e-3, "fp8_s": 2e-3}}
                                   for n in ("qkv", "attn_out", "fc1", "fc2")]}
    w = timings_from(whole, whole=True)
    assert w[0].fp8_s == pytest.approx(2e-3) and w[0].cast_s == pytest.approx(5e-4)
    report = SpeedupReport(SHAPE, gemm_table(SHAPE), predict(SHAPE, t, 0.0), result)
    md = render_markdown(report, chart="chart.png")
    assert "| qkv | fwd |" in md and "2.00x" in md and "![FP8 vs BF16" in md


def test_cli_speedup_without_gpu_and_the_chart_never_overwrites_an_input(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B))
    out = tmp_path / "out.json"
    assert main(["speedup", "--quick", "--model-config", str(cfg), "--seq", "512",
                 "--micro-batch", "1", "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["prediction"] is None and doc["why_not"] and len(doc["gemms"]) == 12
    # the default mode is the trial: on a machine without a GPU it is undetermined, said
    assert main(["speedup", "--model-config", str(cfg), "--seq", "512", "--micro-batch", "1",
                 "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["mode"] == "trial" and doc["step_speedup"] is None and doc["why_not"]
    with pytest.raises(SystemExit) as exc:
        main(["speedup", "--model-config", str(cfg), "--seq", "512", "--micro-batch", "1",
              "--chart", str(cfg)])
    assert exc.value.code == 2
    assert json.loads(cfg.read_text()) == LLAMA8B


def test_the_chart_is_held_to_the_write_boundary(tmp_path: Path, monkeypatch) -> None:
    """--chart is an output like -o (issue 21 item 3, red team): never a file the run read
    (a script the job sources was compared with the paths named only, so --chart env.sh
    replaced it with a PNG), never through a symbolic link, never the -o file as well; refused
    with exit 2 whether or not a chart could be drawn on this machine."""
    job = tmp_path / "job"
    job.mkdir()
    (job / "env.sh").write_text("export NVTE_FLASH_ATTN=1\n")
    (job / "run.sh").write_text("source env.sh\naccelerate launch --mixed_precision fp8 t.py\n")
    (job / "config.json").write_text(json.dumps(LLAMA8B))
    (tmp_path / "dotfile").write_text("precious\n")
    (job / "link.png").symlink_to(tmp_path / "dotfile")
    monkeypatch.chdir(job)
    base = ["speedup", "--quick", "--model-config", "config.json", "--seq", "512",
            "--micro-batch", "1", "run.sh"]
    for extra in (["--chart", "env.sh"], ["--chart", "link.png"],
                  ["--chart", "new.png", "-o", "new.png"],
                  ["--chart", "new.png", "-o", "./new.png"]):
        with pytest.raises(SystemExit) as exc:
            main([*base, *extra])
        assert exc.value.code == 2, extra
    assert (job / "env.sh").read_text() == "export NVTE_FLASH_ATTN=1\n"
    assert (tmp_path / "dotfile").read_text() == "precious\n"
    assert not (job / "new.png").exists()


def test_a_model_folder_outside_the_job_is_not_read(tmp_path: Path) -> None:
    """The read boundary holds for the model folder a job config names (issue 21 item 2, red
    team): ``model_name_or_path: /home/u/.docker`` made speedup open ``~/.docker/config.json``;
    any folder's config.json gave its sizes to the report. Inside the job it is still read."""
    import subprocess
    import sys

    outside = tmp_path / "outside" / "model"
    outside.mkdir(parents=True)
    (outside / "config.json").write_text(json.dumps(dict(LLAMA8B, hidden_size=777)))
    job = tmp_path / "job"
    (job / "model").mkdir(parents=True)
    (job / "model" / "config.json").write_text(json.dumps(LLAMA8B))
    (job / "out.yaml").write_text(f"model_name_or_path: {outside}\nstage: sft\nfp8: true\n")
    (job / "in.yaml").write_text("model_name_or_path: model\nstage: sft\nfp8: true\n")
    audit = (
        "import sys\n"
        f"bad = {str(tmp_path / 'outside')!r}\n"
        "def hook(event, args):\n"
        "    if event == 'open' and isinstance(args[0], str) and args[0].startswith(bad):\n"
        "        sys.stderr.write('OPENED ' + args[0] + '\\n')\n"
        "sys.addaudithook(hook)\n"
        "sys.argv = ['fp8-doctor', 'speedup', '--quick', '--seq', '512', '--micro-batch', '1',"
        " '--format', 'json', sys.argv[1]]\n"
        "from preflight.cli import main\n"
        "raise SystemExit(main())\n")
    docs = {}
    for name in ("out.yaml", "in.yaml"):
        proc = subprocess.run([sys.executable, "-c", audit, name], capture_output=True,
                              text=True, timeout=300, cwd=job)
        assert "OPENED" not in proc.stderr, proc.stderr
        docs[name] = json.loads(proc.stdout)
    assert docs["out.yaml"]["shape"] is None or "777" not in json.dumps(docs["out.yaml"])
    assert "outside the job" in json.dumps(docs["out.yaml"])
    assert docs["in.yaml"]["shape"]["hidden"] == 4096
