#!/bin/bash
accelerate launch --num_processes 1 train.py
