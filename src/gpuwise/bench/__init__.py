"""Benchmarks: the only code that runs workloads. Each returns Measurements (bench/models.py)."""
