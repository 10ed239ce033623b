#!/bin/bash
# RECONSTRUCTION: ArcticTraining's launcher for the config above (snowflakedb/ArcticTraining PR 331).
arctic_training qwen3-8b-fp8.yaml
