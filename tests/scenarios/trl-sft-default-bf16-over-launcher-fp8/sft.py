# huggingface/trl v1.9.0 (a785283c0ea7395092fc5bd60fc38e7f4d972003) trl/scripts/sft.py, reduced:
# the license header, usage docstring and the body of main() are left out; make_parser()
# and the __main__ block are unchanged.
import argparse


def main(script_args, training_args, model_args, dataset_args):
    ...


def make_parser(subparsers: argparse._SubParsersAction | None = None, prog: str | None = None):
    from trl import DatasetMixtureConfig, ModelConfig, ScriptArguments, SFTConfig, TrlParser

    dataclass_types = (ScriptArguments, SFTConfig, ModelConfig, DatasetMixtureConfig)
    if subparsers is not None:
        parser = subparsers.add_parser("sft", help="Run the SFT training script", dataclass_types=dataclass_types)
    else:
        parser = TrlParser(dataclass_types, prog=prog)
    return parser


if __name__ == "__main__":
    parser = make_parser()
    script_args, training_args, model_args, dataset_args = parser.parse_args_and_config(fail_with_unknown_args=False)
    main(script_args, training_args, model_args, dataset_args)

