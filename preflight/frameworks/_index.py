"""What every check needs from the framework records before (or without) importing a reader.

Importing every framework module costs ~80 ms, while the static check has 0.2 s in all; the
packages probe and the report's environment summary run on every check, job or not. So the
records' distributions are copied here, and the copy is checked: ``python -m
preflight.frameworks._index`` rewrites this file from the records, and
tests/frameworks/test_one_module.py fails while it is stale.
"""

from __future__ import annotations

# BEGIN GENERATED (python -m preflight.frameworks._index)
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "accelerate": ("accelerate",),
    "deepspeed": ("deepspeed",),
    "llmfoundry": ("llm-foundry", "mosaicml"),
    "torchtitan": ("torchtitan",),
    "megatron": ("megatron-core",),
    "lightning": ("lightning", "pytorch-lightning"),
    "hf_trainer": ("transformers",),
    "nemo": ("nemo-toolkit",),
    "axolotl": ("axolotl",),
    "llamafactory": ("llamafactory",),
    "swift": ("ms-swift",),
    "mcli": (),
    "pytorch": (),
    "trl": ("trl",),
    "megatron_bridge": ("megatron-bridge", "megatron-core"),
    "verl": ("verl",),
    "nemo_rl": ("nemo-rl",),
    "automodel": ("nemo-automodel",),
    "slime": ("slime",),
    "skyrl": ("skyrl", "skyrl-train"),
    "nemo2": ("nemo-toolkit",),
    "openrlhf": ("openrlhf",),
    "areal": ("areal",),
    "torchtune": ("torchtune", "torchao"),
    "roll": ("roll",),
    "arctic_training": ("arctic-training",),
    "unsloth": ("unsloth",),
    "olmo_core": ("ai2-olmo-core",),
    "cosmos_rl": ("cosmos-rl", "torchao"),
    "xtuner": ("xtuner",),
    "colossalai": ("colossalai",),
    "prime_rl": ("prime-rl",),
    "gpt_neox": ("deepspeed",),
    "flagscale": (),
    "soup": ("soup-cli",),
    "rl2": (),
    "simpletuner": ("simpletuner",),
    "diffsynth": ("diffsynth",),
    "nemo_launcher": ("nemo-toolkit",),
    "easyr1": (),
    "chatlearn": (),
    "cloudai": (),
    "finetrainers": ("finetrainers",),
    "primus": ("primus",),
    "bionemo_evo2": ("bionemo-evo2",),
    "ai_toolkit": ("ai-toolkit",),
    "diffusion_pipe": ("diffusion-pipe",),
}
"""kind -> the distributions it ships as, then those it requires."""
# END GENERATED


def generated() -> str:
    """The generated block as it should read, from the records."""
    from preflight.frameworks import FRAMEWORKS

    def names(dists: tuple[str, ...]) -> str:
        quoted = [f'"{d}"' for d in dists]
        return f"({', '.join(quoted)}{',' if len(quoted) == 1 else ''})"

    rows = "".join(f'    "{f.kind}": {names((*f.distributions, *f.requires))},\n'
                   for f in FRAMEWORKS)
    return ("DISTRIBUTIONS: dict[str, tuple[str, ...]] = {\n" + rows + "}\n"
            '"""kind -> the distributions it ships as, then those it requires."""\n')


def rewrite(path: str = __file__) -> bool:
    """Rewrite the generated block of ``path``; True when it changed."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    head, rest = text.split("# BEGIN GENERATED (python -m preflight.frameworks._index)\n", 1)
    _, tail = rest.split("# END GENERATED\n", 1)
    new = (f"{head}# BEGIN GENERATED (python -m preflight.frameworks._index)\n{generated()}"
           f"# END GENERATED\n{tail}")
    if new != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
    return new != text


if __name__ == "__main__":
    print("rewritten" if rewrite() else "up to date")
