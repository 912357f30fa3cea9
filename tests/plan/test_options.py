"""plan/options.py: intra-node bandwidth comes from the catalog row of the GPU, never a one-size guess."""

from __future__ import annotations

import pytest

from gpuwise.catalog import fabrics, gpus
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import Hardware, intra_node


def _intra(key: str) -> tuple[float, str]:
    bw, _lat, why = intra_node(Hardware(key, gpus.get_gpu(key), 8), PlanDefaults(), None)
    return bw, why.text


def test_nvlink_gpu_uses_half_the_bidirectional_total():
    spec = gpus.get_gpu("H100-SXM")
    bw, why = _intra("H100-SXM")
    assert bw == pytest.approx(spec.nvlink_bandwidth_gb_s / 2 * 0.78 * 1e9) and "NVLink" in why


@pytest.mark.parametrize("key", ["L4", "H100-PCIE", "T4"])
def test_pcie_gpu_uses_its_own_generation(key):
    spec = gpus.get_gpu(key)
    link = fabrics.pcie_x16(spec.pcie_gen)
    frac = spec.pcie_fraction or link.achieved_fraction or 0.8
    bw, why = _intra(key)
    assert bw == pytest.approx(link.bandwidth_gb_s * frac * 1e9)
    assert f"gen{spec.pcie_gen}" in why


def test_unknown_pcie_generation_falls_back_to_the_sourced_default():
    bw, why = _intra("A10G")  # the catalog lists no PCIe generation for it
    assert bw == pytest.approx(25e9) and "PCIe4" in why


def test_gpu_selection_matches_like_the_catalog_command():
    from gpuwise.catalog.offers import Offer
    from gpuwise.plan.options import _wanted
    from gpuwise.plan.options_file import CloudSelection

    def offer(name: str) -> Offer:
        return Offer(
            provider="x",
            instance_type=f"{name}.8x",
            accelerator_name=name,
            accelerator_count=8,
            vcpus=None,
            memory_gib=None,
            price=1.0,
            spot_price=None,
            reserved_1y_price=None,
            reserved_3y_price=None,
            region="r",
            zone=None,
            network_gbps=None,
            fabric=None,
            rdma_gbps=None,
            currency="USD",
            price_source="test",
            as_of=None,
        )

    a10 = CloudSelection(gpus=["A10"])
    assert _wanted(offer("A10"), a10) and not _wanted(offer("A100"), a10) and not _wanted(offer("A10G"), a10)
    a100 = CloudSelection(gpus=["A100"])
    assert _wanted(offer("A100"), a100) and _wanted(offer("A100-80GB"), a100)
