"""Names a script takes from the job's own modules (jobs/pynames.py): ``from helpers import *``,
``from .cfg import *`` and imported constants and config dicts, read as Python binds them, never
imported (issue 22: ``from helpers import *`` was not followed, and ``from cfg import CFG`` stayed
a name, so ``TrainingArguments(**CFG)`` was Unknown and ``bf16=cfg.BF16`` no value)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

HELPERS = """
from transformers import TrainingArguments
PRECISION = "fp8"
BF16 = True
CFG = dict(output_dir="out", bf16=True, per_device_train_batch_size=4)
args = TrainingArguments(output_dir="h", fp16=True)
_PRIVATE = "bf16"

def make_args():
    return TrainingArguments(output_dir="o", bf16=True)
"""


def _job(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / next(iter(files))


@pytest.mark.parametrize("imports", ["from helpers import *", "from helpers import CFG",
                                     "import helpers\nCFG = helpers.CFG"])
def test_a_config_dict_of_a_helper_module(tmp_path: Path, imports: str) -> None:
    script = _job(tmp_path, {"train.py": f"""
        from transformers import Trainer, TrainingArguments
        {imports}
        targs = TrainingArguments(**CFG)
        Trainer(model=None, args=targs).train()
        """.replace("\n        " + imports, "\n" + textwrap.indent(imports, "        ")),
        "helpers.py": HELPERS})
    read = read_paths([str(script)])
    assert read.facts["config.hf_trainer.bf16"] is True
    assert read.facts["config.hf_trainer.per_device_train_batch_size"] == 4


def test_a_constant_from_a_star_import(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from accelerate import Accelerator
        from helpers import *
        accelerator = Accelerator(mixed_precision=PRECISION)
        """, "helpers.py": HELPERS})
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_training_arguments_built_in_the_star_imported_module(tmp_path: Path) -> None:
    """Its top level runs on import: the TrainingArguments it builds is the job's, at its line;
    a function of it that nobody calls does not run."""
    script = _job(tmp_path, {"train.py": """
        from transformers import Trainer
        from helpers import *
        Trainer(model=None, args=args).train()
        """, "helpers.py": HELPERS})
    read = read_paths([str(script)])
    assert read.facts["config.hf_trainer.fp16"] is True
    assert "config.hf_trainer.bf16" not in read.facts          # make_args() never called
    assert str(read.provenance["config.hf_trainer.fp16"]).endswith("helpers.py:6")


def test_a_function_from_a_star_import_is_called_into(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from transformers import Trainer
        from helpers import *
        Trainer(model=None, args=make_args()).train()
        """, "helpers.py": HELPERS.replace('args = TrainingArguments(output_dir="h", '
                                           'fp16=True)\n', "")})
    read = read_paths([str(script)])
    assert read.facts["config.hf_trainer.bf16"] is True


def test_all_limits_a_star_import(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from accelerate import Accelerator
        from helpers import *
        from private import *
        accelerator = Accelerator(mixed_precision=PRECISION)
        """, "helpers.py": '__all__ = ["BF16"]\nPRECISION = "fp8"\nBF16 = True\n',
        "private.py": '_PRECISION = "fp8"\n'})
    read = read_paths([str(script)])
    value = read.facts.get("config.accelerate.mixed_precision")
    assert value != "fp8"          # PRECISION is not in __all__: the name is not bound


def test_a_relative_star_import_in_a_package(tmp_path: Path) -> None:
    script = _job(tmp_path, {"pkg/train.py": """
        from accelerate import Accelerator
        from .cfg import *
        accelerator = Accelerator(mixed_precision=MP)
        """, "pkg/cfg.py": 'MP = "fp8"\n', "pkg/__init__.py": ""})
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_a_value_the_helper_computes_at_run_time_is_unknown_naming_it(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from accelerate import Accelerator
        from helpers import *
        accelerator = Accelerator(mixed_precision=MP)
        """, "helpers.py": 'import os\nMP = os.environ["MP"]\n'})
    read = read_paths([str(script)])
    value = read.facts["config.accelerate.mixed_precision"]
    assert isinstance(value, Unknown) and "helpers.py:2" in value.reason


def test_import_cycles_and_self_imports_are_bounded(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from accelerate import Accelerator
        from a import *
        accelerator = Accelerator(mixed_precision=MP)
        """, "a.py": "from b import *\nfrom a import *\nMP = X\n",
        "b.py": "from a import *\nX = MP\n"})
    read = read_paths([str(script)])
    value = read.facts.get("config.accelerate.mixed_precision")
    assert value is None or isinstance(value, Unknown)


def test_a_module_outside_the_job_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text('MP = "fp8"\n')
    job = tmp_path / "job"
    script = _job(job, {"train.py": """
        import sys
        sys.path.insert(0, "..")
        from accelerate import Accelerator
        from outside import *
        accelerator = Accelerator(mixed_precision=MP)
        """})
    (job / "outside.py").symlink_to(tmp_path / "outside.py")
    read = read_paths([str(script)])
    assert read.facts.get("config.accelerate.mixed_precision") != "fp8"


def test_a_helpers_main_block_does_not_run_on_import(tmp_path: Path) -> None:
    script = _job(tmp_path, {"train.py": """
        from transformers import Trainer
        from helpers import *
        Trainer(model=None, args=args).train()
        """, "helpers.py": """
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="h", fp16=True)
        if __name__ == "__main__":
            args = TrainingArguments(output_dir="h", bf16=True)
            TrainingArguments(output_dir="x", bf16=True)
        """})
    read = read_paths([str(script)])
    assert read.facts["config.hf_trainer.fp16"] is True
    assert "config.hf_trainer.bf16" not in read.facts
