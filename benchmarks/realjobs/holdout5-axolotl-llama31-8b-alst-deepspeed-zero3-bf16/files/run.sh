# RECONSTRUCTION: the launch line for axolotl-ai-cloud/axolotl@067b021c8b87 (see job.yaml source.outcome).
axolotl train examples/alst/llama3-8b-deepspeed-alst.yaml
