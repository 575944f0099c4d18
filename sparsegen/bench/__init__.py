"""Benchmarks: the workloads of WORKLOADS.md, timed interleaved against numpy/scipy and PyTorch."""
