"""Parallel sizes and FP8 features as intent facts (issue 16): read per framework, Unknown with
the reason where a config cannot say."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

NEW = ("tp", "cp", "sequence_parallel", "fp8_attention", "cuda_graphs", "fp8_params",
       "tp_comm_overlap")


def _intent(tmp_path: Path, name: str, text: str) -> tuple[dict, dict]:
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    assert [p for p in read.problems if p.level == "error"] == []
    values, prov = derive(Facts(read.facts, read.provenance))
    return ({k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()})


def test_megatron_flags(tmp_path: Path) -> None:
    v, prov = _intent(tmp_path, "run.sh", (
        "torchrun pretrain_gpt.py --tensor-model-parallel-size 4 --sequence-parallel \\\n"
        "  --context-parallel-size 2 --fp8-format hybrid --fp8-param-gather \\\n"
        "  --enable-cuda-graph --tp-comm-overlap --bf16\n"))
    assert (v["tp"], v["cp"], v["sequence_parallel"]) == (4, 2, True)
    assert (v["fp8_params"], v["cuda_graphs"], v["tp_comm_overlap"]) == (True, True, True)
    assert v["fp8_attention"] is False          # no flag sets it
    assert prov["tp"].endswith(":1") and prov["cuda_graphs"].endswith(":3")


def test_megatron_defaults_and_sp_off_at_tp1(tmp_path: Path) -> None:
    v, _ = _intent(tmp_path, "run.sh",
                   "torchrun pretrain_gpt.py --sequence-parallel --fp8-format e4m3 --bf16\n")
    assert (v["tp"], v["cp"]) == (1, 1)
    # validate_args: "Disabling sequence parallelism because tensor model parallelism is disabled"
    assert v["sequence_parallel"] is False
    assert (v["cuda_graphs"], v["fp8_params"], v["tp_comm_overlap"]) == (False, False, False)


def test_megatron_cuda_graph_impl_and_launch_time_sizes(tmp_path: Path) -> None:
    v, _ = _intent(tmp_path, "run.sh", (
        "torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --sequence-parallel \\\n"
        "  --cuda-graph-impl transformer_engine --fp8-format hybrid --bf16\n"))
    assert v["cuda_graphs"] is True
    assert isinstance(v["tp"], Unknown) and isinstance(v["sequence_parallel"], Unknown)
    v, _ = _intent(tmp_path, "run.sh",
                   "torchrun pretrain_gpt.py --cuda-graph-impl none --fp8-format hybrid\n")
    assert v["cuda_graphs"] is False


def test_nemo_keys(tmp_path: Path) -> None:
    v, prov = _intent(tmp_path, "megatron_gpt_config.yaml", (
        "trainer:\n  devices: 8\n  precision: bf16-mixed\n"
        "model:\n  mcore_gpt: true\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_hybrid: true\n  tensor_model_parallel_size: 2\n  sequence_parallel: true\n"
        "  context_parallel_size: 2\n  fp8_dot_product_attention: true\n  fp8_params: true\n"
        "  enable_cuda_graph: false\n  ub_tp_comm_overlap: true\n  hidden_size: 64\n"))
    assert (v["tp"], v["cp"], v["sequence_parallel"], v["fp8_attention"]) == (2, 2, True, True)
    assert (v["fp8_params"], v["cuda_graphs"], v["tp_comm_overlap"]) == (True, False, True)
    assert "megatron_gpt_config.yaml" in prov["fp8_attention"]


def test_nemo_sequence_parallel_off_at_tp1(tmp_path: Path) -> None:
    v, _ = _intent(tmp_path, "megatron_gpt_config.yaml", (
        "trainer:\n  devices: 1\nmodel:\n  mcore_gpt: true\n  transformer_engine: true\n"
        "  fp8: true\n  sequence_parallel: true\n  hidden_size: 64\n"))
    assert (v["tp"], v["cp"], v["sequence_parallel"], v["fp8_attention"]) == (1, 1, False, False)


def test_torchtitan_sizes(tmp_path: Path) -> None:
    v, _ = _intent(tmp_path, "job.toml", (
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n"
        "[parallelism]\ntensor_parallel_degree = 2\ncontext_parallel_degree = 4\n"))
    assert (v["tp"], v["cp"], v["fp8_attention"]) == (2, 4, False)
    assert isinstance(v["cuda_graphs"], Unknown) and isinstance(v["sequence_parallel"], Unknown)


def test_frameworks_without_the_setting_leave_it_unknown(tmp_path: Path) -> None:
    v, _ = _intent(tmp_path, "accelerate.yaml", (
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
        "mixed_precision: fp8\nnum_processes: 2\nfp8_config:\n  backend: TE\n"))
    for name in NEW:
        assert isinstance(v[name], Unknown), name
        assert v[name].reason


# huggingface/accelerate@beb0672a (v1.14.0) examples/torch_native_parallelism/configs/tp_hsdp.yaml,
# reduced, with mixed_precision fp8 and a TE fp8_config in place of bf16.
ACC_TP_HSDP = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_reshard_after_forward: true
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_version: 2
mixed_precision: fp8
fp8_config:
  backend: TE
num_machines: 1
num_processes: 8
parallelism_config:
  parallelism_config_cp_size: 1
  parallelism_config_dp_replicate_size: 2
  parallelism_config_dp_shard_size: 2
  parallelism_config_tp_size: 2
"""


def test_accelerate_parallelism_config(tmp_path: Path) -> None:
    v, prov = _intent(tmp_path, "tp_hsdp.yaml", ACC_TP_HSDP)
    assert (v["tp"], v["cp"], v["backend"], v["distributed"]) == (2, 1, "te", "fsdp2")
    assert prov["tp"].endswith("tp_hsdp.yaml:17") and prov["cp"].endswith("tp_hsdp.yaml:14")
    for name in ("sequence_parallel", "fp8_attention", "cuda_graphs"):
        assert isinstance(v[name], Unknown), name     # accelerate has no such setting


def test_accelerate_launch_flag_wins_over_the_yaml(tmp_path: Path) -> None:
    (tmp_path / "acc.yaml").write_text(ACC_TP_HSDP)
    (tmp_path / "run.sh").write_text(
        "accelerate launch --config_file acc.yaml --parallelism_config_tp_size 4 \\\n"
        "  --parallelism_config_cp_size $CP train.py\n")
    read = read_paths([str(tmp_path / "run.sh")])
    values, prov = derive(Facts(read.facts, read.provenance))
    assert values["intent.tp"] == 4 and prov["intent.tp"].endswith("run.sh:1")
    assert isinstance(values["intent.cp"], Unknown)    # set at launch: not a size we can read


def test_accelerate_parallelism_sizes_that_are_not_sizes(tmp_path: Path) -> None:
    for bad in ("0", "auto", "-2"):
        v, _ = _intent(tmp_path, "acc.yaml", ACC_TP_HSDP.replace(
            "parallelism_config_tp_size: 2", f"parallelism_config_tp_size: {bad}"))
        assert isinstance(v["tp"], Unknown) and "parallelism_config_tp_size" in v["tp"].reason


def test_megatron_cp_comm_type_keeps_every_value(tmp_path: Path) -> None:
    # --cp-comm-type is nargs='+' (one type per layer, arguments.py at core_v0.14.0)
    (tmp_path / "run.sh").write_text("torchrun pretrain_gpt.py --cp-comm-type p2p all_gather "
                                     "--context-parallel-size 2 --fp8-format hybrid\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts["config.megatron.cp_comm_type"] == ["p2p", "all_gather"]


def _megatron_values(args: str) -> dict:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        values, _ = _intent(Path(tmp), "run.sh", f"torchrun pretrain_gpt.py {args}\n")
    return values


@settings(max_examples=40, deadline=None)
@given(tp=st.integers(1, 64), cp=st.integers(1, 16), sp=st.booleans(),
       impl=st.sampled_from([None, "none", "local", "transformer_engine", "full_iteration"]))
def test_megatron_sizes_and_graphs_follow_the_flags(tp: int, cp: int, sp: bool,
                                                    impl: str | None) -> None:
    args = f"--fp8-format hybrid --tensor-model-parallel-size {tp} --context-parallel-size {cp}"
    args += " --sequence-parallel" if sp else ""
    args += f" --cuda-graph-impl {impl}" if impl else ""
    v = _megatron_values(args)
    assert (v["tp"], v["cp"]) == (tp, cp)
    # arguments.py validate_args: sequence parallelism is switched off when TP is 1
    assert v["sequence_parallel"] is (sp and tp > 1)
    assert v["cuda_graphs"] is (impl not in (None, "none"))
