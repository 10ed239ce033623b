"""``effective.*``: what the job will really run on this machine (producer: preflight/effective.py).

Computed after ``intent.*`` from the job's intent and this machine's facts (``gpu.*``,
``pkg.*``): the FP8 recipe a backend picks when the job names none (it depends on the backend
version and the GPU, issue 23 item 3) and the token-count divisibility the run's FP8 GEMMs need
under that recipe and parallel layout (issue 23 item 2).
"""

from preflight.registry import FactSpec as F
from preflight.registry.intent import RECIPES

SOURCES = ("job", "te_default")

SPECS = (
    F("effective.te_default_recipe", "str",
      "The recipe Transformer Engine's get_default_fp8_recipe() returns for the installed TE on "
      "the first GPU: mxfp8 (cc 10.x-11.x from TE 2.0; also sm_12x on 2.0-2.5) | current "
      "(sm_12x from TE 2.7) | delayed (otherwise, and every GPU before TE 2.0)", RECIPES),
    F("effective.recipe", "str",
      "The FP8 recipe that will run: the one the job (or its framework) states, else the "
      "backend's default on this GPU (effective.te_default_recipe)", RECIPES),
    F("effective.recipe_source", "str",
      "Where effective.recipe comes from: job (stated by the job or its framework) | "
      "te_default (left to Transformer Engine, so it depends on the TE version and the GPU)",
      SOURCES),
    F("effective.token_align_needed", "int",
      "Multiple the token count of a micro-batch (a packed row, before the sequence-parallel "
      "and context-parallel split) must be for the FP8 GEMMs of the recipe that runs: per rank "
      "16 per-tensor (8 before the SP all-gather), 32 MXFP8, 128 block scaling and NVFP4, times "
      "the TP size under sequence parallelism and the CP size (Transformer Engine backend)"),
    F("effective.token_align_ok", "bool",
      "The job's packing / padding settings guarantee effective.token_align_needed for every "
      "micro-batch (a packed job: its pad multiple is a multiple of it)"),
)
