"""Autotuning: the knob search (``tuner.py``) and its inputs (``workloads.py``).

The records the tuner writes are read on the call path, below the kernel cache:
``sparsegen/tuning_records.py`` (and ``cpu_families.py``) and ``choice.py``, which never import
this package.
"""
