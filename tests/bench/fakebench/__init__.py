"""Fake benchmarks that misbehave on purpose, to test the runner's isolation (crash, hang, raise)."""
