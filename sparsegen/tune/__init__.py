"""Autotuning: tuning-log records, config choice per workload size bucket, and the knob search."""
