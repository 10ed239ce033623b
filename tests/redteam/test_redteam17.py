"""redteam17 (session 43, second wave): attacks on the readers merged this session. Each case
of the first part failed before its fix (a confident value where the input decides the
opposite or nothing):

- a Primus experiment's ``${VAR:default}`` read from every variable the launch script sets, as
  text, where Primus's yaml_loader reads the process environment: a variable not exported
  (``PRIMUS_FP8=hybrid``, ``export -n``), unset again, set in a subshell or in a function never
  called reached the YAML (a confident FP8 "yes" Primus never runs); one exported in a branch
  the text does not decide was taken as set; one exported with a run-time value (``$(cat f)``)
  was dropped, leaving the YAML's default (a confident "no FP8"). Now the environment the
  command gets (:func:`preflight.reading.launchenv.process_env`, as FlashRL's reader reads it);
  ``$EXP`` of ``run_pretrain.sh`` likewise; an expansion past 65,536 characters is Unknown;
- a script the job writes then runs (shellfiles): written to /dev/* or /proc/* (holds nothing),
  removed or emptied (rm, unlink, truncate, shred), run after cd/pushd/popd by a relative name,
  or named after a bash option that takes a word (``bash --rcfile f g`` runs g): followed anyway;
- ``find -exec``, ``git bisect run``, ``tar --to-command`` judged passive (launchedit): the
  program they run was never a launch;
- NeMo image / pip pins (nemo_images): ``X==V`` in any text (echo, pip download / uninstall,
  --dry-run), a range (``==0.2.*`` pinned as '0.2.'), ``mirror-nvidia/nemo``, a tag with a
  digest, a trailing comment;
- plain PyTorch evaluation code (pytorch_loop_eval): a training step named like evaluation
  (``sample_and_train``) or grad re-enabled inside ``no_grad`` dropped: a confident "no FP8";
- the Conv1D model fact (pyconv1d): a GPT-2 teacher / reward model beside the model trained
  stated as the job's model (FP8D-TE-0061's false alarm).

Left open as strict xfails, fixed by redteam18 (session 44): a bare ``> f`` statement dropped by
the split; ``{ }`` groups later in an if test or behind ``!`` decided as the wrong arm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_EXP = """work_group: amd
user_name: root
exp_name: x
workspace: ./output

modules:
  pre_trainer:
    framework: megatron
    config: pre_trainer.yaml
    model: llama3.1_8B.yaml
    overrides:
      micro_batch_size: 2
      fp8: ${PRIMUS_FP8:null}
"""
_LAUNCH = ("./primus-cli direct -- train pretrain --config "
           "examples/megatron/configs/MI355X/exp.yaml\n")


def _intent(*paths: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read.facts


def _primus(tmp_path: Path, before: str) -> Any:
    folder = tmp_path / "examples" / "megatron" / "configs" / "MI355X"
    folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git").mkdir(exist_ok=True)
    (folder / "exp.yaml").write_text(_EXP)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n" + before + _LAUNCH)
    return _intent(run)[0]["fp8"][0]


@pytest.mark.parametrize("before", [
    "PRIMUS_FP8=hybrid\n",                                   # never exported
    "export PRIMUS_FP8=hybrid\nunset PRIMUS_FP8\n",
    "export PRIMUS_FP8=hybrid\nexport -n PRIMUS_FP8\n",
    "(export PRIMUS_FP8=hybrid)\n",                           # a subshell's
    "f() { export PRIMUS_FP8=hybrid; }\n",                    # never called
])
def test_primus_yaml_variable_not_in_the_process_environment_is_its_default(
        tmp_path: Path, before: str) -> None:
    assert _primus(tmp_path, before) is False


@pytest.mark.parametrize("before", [
    "if [ -f /etc/x ]; then export PRIMUS_FP8=hybrid; fi\n",
    "export PRIMUS_FP8\nif [ -f /etc/x ]; then PRIMUS_FP8=hybrid; fi\n",
    "export PRIMUS_FP8=$(cat /x)\n",
])
def test_primus_yaml_variable_the_text_does_not_decide_is_unknown(
        tmp_path: Path, before: str) -> None:
    assert isinstance(_primus(tmp_path, before), Unknown)


@pytest.mark.parametrize("before", [
    "export PRIMUS_FP8=hybrid\n", "PRIMUS_FP8=x\nexport PRIMUS_FP8=hybrid\n",
    "PRIMUS_FP8=hybrid\nexport PRIMUS_FP8\n",
])
def test_primus_yaml_variable_exported_reaches_it(tmp_path: Path, before: str) -> None:
    assert _primus(tmp_path, before) is True


def test_primus_prefix_assignment_reaches_it(tmp_path: Path) -> None:
    assert _primus(tmp_path, "PRIMUS_FP8=hybrid ") is True
    assert _primus(tmp_path, "") is False


# --- scripts the job writes then runs (reading/shellfiles.py) ------------------------------------

_WRITE = 'echo "python train.py --fp8 1" > '
_HERE = "cat > f.sh <<EOF\npython train.py --fp8 1\nEOF\n"


def _written_launch(text: str) -> Any:
    from preflight.reading.shellexpand import launch_args
    from preflight.reading.shellheredoc import kept_text
    from preflight.reading.shellwords import split
    return launch_args(split(kept_text(text)), lambda w: w == "train.py" or w.endswith("/train.py"))


@pytest.mark.parametrize("text", [
    # a device holds nothing a later read gets back: `bash /dev/null` runs nothing
    _WRITE + "/dev/null\nbash /dev/null\n", _WRITE + "/dev/stdout\nbash /dev/stdout\n",
    _WRITE + "/dev/fd/1\nbash /dev/fd/1\n", _WRITE + "/proc/self/fd/1\nbash /proc/self/fd/1\n",
    "cat > /dev/null <<EOF\npython train.py --fp8 1\nEOF\nbash /dev/null\n",
    # removed or emptied before it runs
    _WRITE + "f\nrm f\nbash f\n", _WRITE + "f\nrm -f ./f\nbash f\n",
    _WRITE + "f\ntruncate -s 0 f\nbash f\n", _WRITE + "f\nunlink f\nbash f\n",
    _HERE + "rm -f f.sh\nbash f.sh\n",
    # another folder: the relative name is another file
    _WRITE + "f\ncd sub\nbash f\n", _WRITE + "f\npushd ..\nbash f\n",
    _WRITE + "f\n(cd sub; bash f)\n", _HERE + "cd /opt/x\nbash f.sh\n",
    # bash's options that take a word: `bash --rcfile f g` runs g
    _WRITE + "f\nbash --rcfile f g\n", _WRITE + "f\nbash --init-file f\n",
])
def test_a_written_file_that_does_not_hold_the_text_when_run_is_not_followed(text: str) -> None:
    assert _written_launch(text) is None


@pytest.mark.parametrize("text", [
    _WRITE + "f\nrm -f g\nbash f\n", _WRITE + "/tmp/f\ncd sub\nbash /tmp/f\n",
    _WRITE + "f\nbash -o pipefail f\n", _WRITE + "f\nbash -O extglob -e f\n",
    _WRITE + "f\nbash f\n", _HERE + "bash f.sh\n",
])
def test_a_written_file_still_held_is_followed(text: str) -> None:
    got = _written_launch(text)
    assert got is not None and [a.text for a in got.args] == ["--fp8", "1"]


def test_a_bare_redirection_empties_the_written_file() -> None:
    assert _written_launch(_WRITE + "f\n> f\nbash f\n") is None


# --- versions pinned by a NeMo image or a pip line (frameworks/nemo_images.py) -------------------

@pytest.mark.parametrize("text", [
    "echo 'known bad: megatron-bridge==0.2.0rc2'\n",            # no install
    "pip download megatron-bridge==0.2.0rc2 -d wheels\n",
    "pip install --dry-run megatron-bridge==0.2.0rc2\n",
    "pip uninstall -y megatron-bridge==0.2.0rc2\n",
    "pip install megatron-bridge==0.2.*\n",                     # a range, no version
    "pip install megatron-bridge==0.2.0-\n", "pip install megatron-bridge==0.2.0+\n",
    "IMG=myorg/mirror-nvidia/nemo:25.09\n",                      # another image
    "IMG=nvcr.io/nvidia/nemo:25.09@sha256:0123abcd\n",           # the digest decides
    "IMG=nvcr.io/nvidia/pytorch:25.09  # was nvcr.io/nvidia/nemo:25.09\n",   # a comment
])
def test_text_that_pins_nothing_is_no_pin(text: str) -> None:
    from preflight.frameworks.nemo_images import pins_in_text
    assert "config.pins.megatron-bridge" not in pins_in_text("run.sh", text)[0]


@pytest.mark.parametrize("text", [
    "pip install megatron-bridge==0.2.0rc2\n", "uv pip install megatron_bridge==0.2.0rc2\n",
    "python -m pip install -U 'megatron-bridge==0.2.0rc2'\n",
    "pip3 install --no-deps \\\n    megatron-bridge==0.2.0rc2 \\\n    other\n",
    "srun --container-image=nvcr.io#nvidia/nemo:25.09 bash -c 'pip install "
    "megatron-bridge==0.2.0rc2'\n",
])
def test_an_installed_pin_is_a_pin(text: str) -> None:
    from preflight.frameworks.nemo_images import pins_in_text
    got = pins_in_text("run.sh", text)[0].get("config.pins.megatron-bridge")
    assert got == "0.2.0rc2" or "nemo:25.09" in text and isinstance(got, Unknown)
    assert pins_in_text("run.sh", "IMG=registry.local/nvidia/nemo:25.09\n")[0][
        "config.pins.megatron-bridge"] == "0.1.0rc3"


# --- commands that edit or print files but run one they name (reading/launchedit.py) ------------

@pytest.mark.parametrize("text", [
    "find . -maxdepth 0 -exec python train.py --fp8 1 \\;\n",       # find(1) -exec runs it
    "find . -maxdepth 0 -execdir python train.py --fp8 1 {} +\n",
    "git bisect run python train.py --fp8 1\n",                       # git-bisect(1) run
    "tar -xf a.tar --to-command='python train.py --fp8 1'\n",         # tar(1) runs it per member
])
def test_a_command_that_runs_what_it_names_is_no_edit(text: str) -> None:
    from preflight.reading.launchedit import passive
    assert not passive(text.replace("'", " ").replace("=", " ").split())
    assert _written_launch(text) is not None or "tar" in text    # (tar's string: not walked)


@pytest.mark.parametrize("words", [
    ["find", ".", "-name", "train.py"], ["git", "apply", "train.py.patch"],
    ["tar", "-czf", "a.tgz", "train.py"], ["sed", "-i", "s/a/b/", "train.py"],
])
def test_an_edit_or_look_up_stays_passive(words: list[str]) -> None:
    from preflight.reading.launchedit import passive
    assert passive(words)


@pytest.mark.parametrize("text", [
    "find . -name train.py -exec rm {} \\;\n", "tar -I zstd -cf a.tar train.py\n",
    "git add train.py && git bisect run make\n",
])
def test_a_file_named_before_the_option_that_runs_is_no_launch(text: str) -> None:
    assert _written_launch(text) is None


# --- evaluation code of a plain PyTorch script (frameworks/pytorch_loop_eval.py) ---------------

_STEP = """import torch
import transformer_engine.pytorch as te
m = te.Linear(16, 16)
opt = torch.optim.AdamW(m.parameters())

def {name}(m, opt):
    with te.fp8_autocast(enabled=True):
        loss = m(torch.randn(16, 16)).sum()
    loss.backward()
    opt.step()

def warmup(m):
    with te.fp8_autocast(enabled=False):
        m(torch.randn(16, 16))

warmup(m)
for i in range(3):
    {name}(m, opt)
"""
_REGRAD = """import torch
import transformer_engine.pytorch as te
m = te.Linear(16, 16)
opt = torch.optim.AdamW(m.parameters())
with te.fp8_autocast(enabled=False):
    m(torch.randn(16, 16))
for i in range(3):
    with torch.no_grad():
        {grad}:
            with te.fp8_autocast(enabled=True):
                loss = m(torch.randn(16, 16)).sum()
            loss.backward()
    opt.step()
"""


def _script_fp8(tmp_path: Path, text: str) -> Any:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "train.py").write_text(text)
    read = read_paths([str(tmp_path / "train.py")])
    return derive(Facts(read.facts, read.provenance))[0].get("intent.fp8")


@pytest.mark.parametrize("name", ["sample_and_train", "generate_then_update",
                                  "test_time_training", "validate_and_step"])
def test_a_step_named_like_evaluation_that_trains_is_the_step(tmp_path: Path, name: str) -> None:
    assert _script_fp8(tmp_path, _STEP.format(name=name)) is not False   # was False
    assert _script_fp8(tmp_path, _STEP.format(name="train_step")) is True


@pytest.mark.parametrize("grad", ["with torch.enable_grad()", "with torch.set_grad_enabled(True)"])
def test_grad_enabled_again_inside_no_grad_is_training(tmp_path: Path, grad: str) -> None:
    assert _script_fp8(tmp_path, _REGRAD.format(grad=grad)) is not False   # was False


def test_evaluation_code_still_left_out(tmp_path: Path) -> None:
    text = _STEP.format(name="train_step") + (
        "\n@torch.no_grad()\ndef evaluate(m):\n    with te.fp8_autocast(enabled=False):\n"
        "        m(torch.randn(16, 16))\n\nevaluate(m)\n")
    assert _script_fp8(tmp_path, text) is True


def test_nested_evaluation_code_is_bounded(tmp_path: Path) -> None:
    from tests.cputime import cpu_seconds
    body = "".join("    " * n + f"def evaluate_{n}():\n" for n in range(90))
    body += "".join("    " * 90 + f"x{k} = [{', '.join(['1'] * 100)}]\n" for k in range(40))
    before = cpu_seconds()
    assert _script_fp8(tmp_path, _STEP.format(name="train_step") + body) is True
    assert cpu_seconds() - before < 60       # ~3 s quiet (loaded box)


# --- the GPT-2 (Conv1D) model fact (reading/pyconv1d.py) -----------------------------------------

@pytest.mark.parametrize("model_py", [
    # a GPT-2 teacher / reward model beside the model trained: which one the FP8 conversion
    # gets is not read here (was: the GPT-2 class, FP8D-TE-0061's false alarm on a Llama)
    "from transformers import GPT2LMHeadModel, LlamaForCausalLM, LlamaConfig\n"
    "def build():\n    teacher = GPT2LMHeadModel.from_pretrained('gpt2')\n"
    "    return LlamaForCausalLM(LlamaConfig())\n",
    "from transformers import GPT2ForSequenceClassification, AutoModelForCausalLM\n"
    "def build():\n    rm = GPT2ForSequenceClassification.from_pretrained('gpt2')\n"
    "    return AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-0.5B')\n",
])
def test_a_gpt2_beside_another_model_is_unknown(tmp_path: Path, model_py: str) -> None:
    from tests.reading.test_pyconv1d import FACT, _facts
    assert isinstance(_facts(tmp_path, model_py)[FACT], Unknown)


def test_gpt2_alone_is_still_stated(tmp_path: Path) -> None:
    from tests.reading.test_pyconv1d import FACT, _facts
    model_py = ("from transformers import GPT2LMHeadModel, GPT2Config\n"
                "def build():\n    return GPT2LMHeadModel(GPT2Config())\n")
    assert _facts(tmp_path, model_py)[FACT] == "GPT2LMHeadModel"


def test_primus_yaml_variable_expansion_is_bounded(tmp_path: Path) -> None:
    from tests.cputime import cpu_seconds
    folder = tmp_path / "examples" / "megatron" / "configs" / "MI355X"
    folder.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    # 40,000 `${A}` of a 100,000-character value: 4 GB if expanded
    (folder / "exp.yaml").write_text(_EXP.replace("${PRIMUS_FP8:null}", '"' + "${A}" * 40_000 + '"'))
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nexport A=" + "x" * 100_000 + "\n" + _LAUNCH)
    before = cpu_seconds()
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)
    assert cpu_seconds() - before < 20       # ~0.3 s quiet


# --- `{ }` groups in an if test (reading/shellchain.py): fixed by redteam18 ----------------------

_ARMS = "; then python train.py --fp8 1; else python train.py --fp8 0; fi\n"


@pytest.mark.parametrize("test, bash", [
    ("A=1\nif [ $A = 2 ] || { [ $A = 1 ] && [ $A = 3 ]; }", "0"),
    ("A=1\nif { [ $A = 2 ] || [ $A = 1 ]; } && { [ $A = 3 ]; }", "0"),
    ("if ! { true; }", "0"),
])
def test_a_group_in_an_if_test_is_the_arm_bash_runs_or_undecided(test: str, bash: str) -> None:
    # `bash` is what bash 5 prints for the test with echo in place of python train.py
    got = _written_launch(test + _ARMS)
    assert got is not None
    assert got.args[1].text == bash or any(a.conditional or a.opaque for a in got.args)


@pytest.mark.parametrize("before", ["EXP=examples/megatron/configs/MI355X/exp.yaml\n",
                                    "export EXP=x.yaml\nEXP=examples/megatron/configs/MI355X/exp.yaml\n"
                                    "export -n EXP\n"])
def test_primus_exp_not_exported_is_not_the_experiment(tmp_path: Path, before: str) -> None:
    # examples/run_pretrain.sh stops when $EXP is unset; run_pretrain_cli.sh runs its own default
    # (AMD-AGI/Primus examples/run_pretrain_cli.sh: EXP=${EXP:-".../llama3.1_8B-BF16-pretrain.yaml"})
    folder = tmp_path / "examples" / "megatron" / "configs" / "MI355X"
    folder.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (folder / "exp.yaml").write_text(_EXP.replace("${PRIMUS_FP8:null}", "hybrid"))
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n" + before + "bash examples/run_pretrain.sh --train_iters 10\n")
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)          # was True
    run.write_text("#!/bin/bash\nexport EXP=examples/megatron/configs/MI355X/exp.yaml\n"
                   "bash examples/run_pretrain.sh --train_iters 10\n")
    assert _intent(run)[0]["fp8"][0] is True
