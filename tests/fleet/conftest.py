"""The real Slurm test cluster, started once per test session and torn down afterwards."""

from __future__ import annotations

import pytest

from tests.fleet.slurm_cluster import SlurmCluster, available


@pytest.fixture(scope="session")
def slurm_cluster():
    reason = available()
    if reason:
        pytest.skip(reason)
    cluster = SlurmCluster(nodes=3)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()
