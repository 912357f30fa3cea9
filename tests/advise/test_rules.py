"""Every rule: one edit of a healthy node that triggers it, and the unedited node that does not.

Facts are hand-built here (tests/advise/factories.py); the same rules are exercised end to end
through captures of recorded real data in test_doctor_captures.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpuwise.advise.engine import registry, run_rules
from gpuwise.advise.finding import LAYER_ORDER
from gpuwise.facts.models import Facts, Mount, NvLink, RdmaDevice, RdmaPort, XidEvent
from tests.advise.factories import bench, cpu_vm, healthy_node, measurement


def _gpu0(f: Facts, **kw):
    for k, v in kw.items():
        obj, attr = f.gpus[0], k
        if "__" in k:
            sub, attr = k.split("__")
            obj = getattr(obj, sub)
        setattr(obj, attr, v)


def _set(path: str, value) -> Callable[[Facts], None]:
    def edit(f: Facts) -> None:
        obj = f
        *parents, last = path.split(".")
        for p in parents:
            obj = getattr(obj, p)
        setattr(obj, last, value)

    return edit


def _nccl_env(**env) -> Callable[[Facts], None]:
    return lambda f: f.network.nccl_env.update(env)


def _one_link_down(f: Facts) -> None:
    f.topology.nvlinks[3].links[5] = NvLink(link=5, active=False)


def _port(state="ACTIVE", rate=400.0, layer="InfiniBand"):
    return RdmaPort(
        port=1,
        state=state,
        phys_state="LINK_UP" if state == "ACTIVE" else "DISABLED",
        rate_gbps=rate,
        link_layer=layer,
    )


def _add_rdma_port(port: RdmaPort) -> Callable[[Facts], None]:
    return lambda f: f.network.rdma_devices.append(RdmaDevice(name="mlx5_9", ports=[port]))


def _roce(f: Facts) -> None:
    for d in f.network.rdma_devices:
        for p in d.ports:
            p.link_layer = "Ethernet"
    f.software.torch_nccl = f.software.nccl_system_version = "2.18.1"


def _both(*edits):
    def edit(f):
        for e in edits:
            e(f)

    return edit


# (rule id, what the edit does, edit, expected status, env, edit that makes the "clean" node for this rule)
CASES = [
    (
        "gpu.driver_missing",
        "lspci lists 8 GPUs, NVML answered for 7",
        lambda f: (
            setattr(f.gpu_probe, "pci_gpus", [f"{b:02x}:00.0" for b in range(8)]),
            f.gpus.pop(),
        ),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.power_capped",
        "GPU0 power limit lowered to 500 W of a 700 W default while the cap is active",
        lambda f: _gpu0(
            f,
            clock_event_reasons=["sw_power_cap"],
            power_limit_watts=500.0,
            power_limit_default_watts=700.0,
            power_limit_max_watts=700.0,
        ),
        "warn",
        "onprem",
        None,
    ),
    (
        "gpu.xid_errors",
        "GPU0 fell off the bus (Xid 79)",
        lambda f: setattr(
            f.kernel,
            "xid_events",
            [XidEvent(xid=79, pci_bus_id="0000:3b:00", detail="GPU has fallen off the bus.")],
        ),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.persistence_off",
        "GPU0 persistence mode off",
        lambda f: _gpu0(f, persistence_mode=False),
        "warn",
        "onprem",
        None,
    ),
    (
        "gpu.ecc_off",
        "GPU0 ECC disabled",
        lambda f: _gpu0(f, ecc_enabled=False, ecc_pending_enabled=False),
        "warn",
        "onprem",
        None,
    ),
    (
        "gpu.ecc_uncorrectable",
        "GPU0 has 2 volatile DBEs",
        lambda f: _gpu0(f, ecc_volatile_uncorrectable=2),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.retired_pages",
        "GPU0 has 1 DBE-retired page",
        lambda f: _gpu0(f, retired_pages_dbe=1),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.row_remap",
        "GPU0 row remap failure",
        lambda f: _gpu0(f, remapped_rows_failure=True),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.throttle_active",
        "GPU0 hw_slowdown active",
        lambda f: _gpu0(f, clock_event_reasons=["hw_slowdown"]),
        "fail",
        "onprem",
        None,
    ),
    (
        "gpu.temperature_high",
        "GPU0 at 91 C",
        lambda f: _gpu0(f, temperature_c=91.0),
        "warn",
        "onprem",
        None,
    ),
    ("gpu.mig_enabled", "GPU0 MIG on", lambda f: _gpu0(f, mig_enabled=True), "warn", "onprem", None),
    (
        "gpu.fabric_manager",
        "fabric state 'Not Started'",
        lambda f: _gpu0(f, fabric_state="Not Started"),
        "fail",
        "onprem",
        None,
    ),
    ("gpu.nvlink_inactive", "GPU3 link 5 inactive", _one_link_down, "fail", "onprem", None),
    (
        "gpu.inforom_warning",
        "GPU0 infoROM warning",
        lambda f: f.gpus[0].warnings.append("infoROM is corrupted at gpu 0000:18:00.0"),
        "warn",
        "onprem",
        None,
    ),
    (
        "gpu.mixed_models",
        "GPU7 is an A100",
        lambda f: setattr(f.gpus[7], "name", "NVIDIA A100-SXM4-80GB"),
        "warn",
        "onprem",
        None,
    ),
    (
        "gpu.idle_busy_state",
        "GPU0 busy (97% utilisation, a compute process)",
        lambda f: _gpu0(f, clock_event_reasons=[], utilization_gpu_percent=97.0, process_count=1),
        "info",
        "onprem",
        None,
    ),
    (
        "gpu.unreadable",
        "GPU5 could not be read",
        lambda f: setattr(f.gpus[5], "error", "NVML: GPU is lost"),
        "fail",
        "onprem",
        None,
    ),
    ("gpu.none_found", "no GPUs", lambda f: f.gpus.clear(), "info", "onprem", None),
    (
        "gpu.probe_incomplete",
        "attached_gpus 16 > 8 described",
        _set("gpu_probe.attached_gpus", 16),
        "info",
        "onprem",
        None,
    ),
    (
        "pcie.width_below_max",
        "GPU0 at x8 of x16",
        lambda f: _gpu0(f, pcie__width_current=8),
        "warn",
        "onprem",
        None,
    ),
    (
        "pcie.gen_below_max",
        "GPU0 Gen3 of Gen5 while busy (P2, 97% utilisation, a compute process)",
        lambda f: _gpu0(
            f,
            pcie__gen_current=3,
            clock_event_reasons=[],
            performance_state="P2",
            utilization_gpu_percent=97.0,
            process_count=1,
        ),
        "warn",
        "onprem",
        None,
    ),
    (
        "topo.gpu_nic_numa",
        "GPU0 reaches every NIC only via SYS",
        lambda f: f.topology.gpu_nic_links.__setitem__(0, ["SYS", "SYS"]),
        "warn",
        "onprem",
        None,
    ),
    (
        "topo.gpu_p2p_sys",
        "GPU0-GPU1 via SYS",
        lambda f: f.topology.gpu_links[0].__setitem__(1, "SYS"),
        "info",
        "onprem",
        None,
    ),
    (
        "cpu.numa_binding",
        "(fires on 2 NUMA nodes)",
        lambda f: None,
        "info",
        "onprem",
        _set("cpu.numa_nodes", 1),
    ),
    ("cpu.cores_per_gpu_low", "16 threads for 8 GPUs", _set("cpu.threads", 16), "warn", "cloud", None),
    (
        "memory.host_ram_small",
        "host RAM 256 GiB < 640 GiB GPU memory",
        _set("memory.total_bytes", 256 * 2**30),
        "warn",
        "cloud",
        None,
    ),
    (
        "driver.torch_cuda_newer_than_driver",
        "torch cu128 on a 12.4 driver",
        _set("software.torch_cuda", "12.8"),
        "warn",
        "onprem",
        None,
    ),
    (
        "driver.torch_cuda_newer_than_driver",
        "torch cu130 on a 12.4 driver",
        _set("software.torch_cuda", "13.0"),
        "fail",
        "onprem",
        None,
    ),
    (
        "driver.torch_cpu_only",
        "torch CPU build",
        _both(_set("software.torch_cuda", None), _set("software.torch_build", "cpu")),
        "fail",
        "onprem",
        None,
    ),
    (
        "driver.nvcc_newer_than_driver",
        "nvcc 12.8 on a 12.4 driver",
        _set("software.nvcc_version", "12.8"),
        "warn",
        "onprem",
        None,
    ),
    (
        "driver.torch_vs_nvcc",
        "nvcc 11.8 vs torch 12.4",
        _set("software.nvcc_version", "11.8"),
        "warn",
        "onprem",
        None,
    ),
    ("toolchain.torch_missing", "no torch", _set("software.torch_version", None), "info", "onprem", None),
    (
        "toolchain.container_toolkit_missing",
        "docker without toolkit",
        _set("software.nvidia_container_toolkit", None),
        "warn",
        "onprem",
        None,
    ),
    (
        "toolchain.no_container_runtime",
        "no docker (docker and podman looked for: missing)",
        _both(
            _set("software.container_runtimes", []),
            _set("meta.commands", {"docker-version": "missing", "podman-version": "missing"}),
        ),
        "info",
        "cloud",
        None,
    ),
    (
        "toolchain.nccl_versions_differ",
        "system NCCL 2.18",
        _set("software.nccl_system_version", "2.18.3"),
        "info",
        "onprem",
        None,
    ),
    ("net.no_rdma", "no RDMA devices", _set("network.rdma_devices", []), "warn", "onprem", None),
    (
        "net.cloud_placement",
        "(fires on any cloud GPU node)",
        lambda f: None,
        "info",
        "cloud",
        lambda f: f.gpus.clear(),
    ),
    (
        "net.rdma_port_down",
        "an extra port DOWN",
        _add_rdma_port(_port(state="DOWN")),
        "fail",
        "onprem",
        None,
    ),
    (
        "net.rdma_rate_below_peers",
        "an extra port at 200 of 400",
        _add_rdma_port(_port(rate=200.0)),
        "warn",
        "onprem",
        None,
    ),
    ("net.roce_gid_index", "RoCE with NCCL 2.18, no GID index", _roce, "warn", "onprem", None),
    (
        "net.peermem_missing",
        "nvidia_peermem not loaded",
        _set("network.nvidia_peermem_loaded", False),
        "warn",
        "onprem",
        None,
    ),
    ("net.nccl_debug_vars", "NCCL_ALGO=Ring in env", _nccl_env(NCCL_ALGO="Ring"), "warn", "onprem", None),
    (
        "net.nccl_debug_vars",
        "NCCL_P2P_DISABLE=1 in /etc/nccl.conf",
        _set("network.nccl_conf", {"NCCL_P2P_DISABLE": "1"}),
        "warn",
        "onprem",
        None,
    ),
    (
        "net.nccl_ib_disabled",
        "NCCL_IB_DISABLE=1 with active IB",
        _nccl_env(NCCL_IB_DISABLE="1"),
        "fail",
        "onprem",
        None,
    ),
    (
        "net.nccl_socket_ifname",
        "NCCL_SOCKET_IFNAME=docker0",
        _nccl_env(NCCL_SOCKET_IFNAME="docker0"),
        "fail",
        "onprem",
        None,
    ),
    (
        "net.nccl_socket_ifname",
        "NCCL_SOCKET_IFNAME==lo",
        _nccl_env(NCCL_SOCKET_IFNAME="=lo"),
        "fail",
        "onprem",
        None,
    ),
    (
        "net.tcp_socket_threads",
        "no RDMA, 100G NIC, no socket tuning",
        _set("network.rdma_devices", []),
        "info",
        "cloud",
        None,
    ),
    (
        "net.mtu_small",
        "eth0 MTU 1500",
        lambda f: setattr(f.network.nics[1], "mtu", 1500),
        "info",
        "onprem",
        None,
    ),
    ("storage.shm_small", "/dev/shm 64 MiB", _set("storage.shm_bytes", 64 * 2**20), "fail", "onprem", None),
    (
        "storage.data_on_network",
        "an NFS mount",
        lambda f: f.storage.mounts.append(Mount(mountpoint="/data", fstype="nfs4", network=True)),
        "info",
        "cloud",
        None,
    ),
    (
        "storage.no_local_nvme",
        "only a SATA disk",
        lambda f: (
            f.storage.block_devices.clear(),
            f.storage.block_devices.append(
                __import__("gpuwise.facts.models", fromlist=["BlockDevice"]).BlockDevice(
                    name="sda", rotational=False
                )
            ),
        ),
        "info",
        "cloud",
        None,
    ),
    ("storage.nvme_not_raided", "no md RAID0", _set("storage.md_arrays", []), "info", "onprem", None),
    (
        "isolation.container_shm",
        "docker container with 64 MiB /dev/shm",
        _both(_set("platform.container", "docker"), _set("storage.shm_bytes", 64 * 2**20)),
        "fail",
        "onprem",
        None,
    ),
    (
        "isolation.cgroup_cpu_limit",
        "cgroup limit 8 CPUs of 224",
        _set("platform.cgroup_cpu_limit", 8.0),
        "warn",
        "onprem",
        None,
    ),
    (
        "isolation.cgroup_memory_limit",
        "cgroup limit 64 GiB",
        _set("platform.cgroup_memory_limit_bytes", 64 * 2**30),
        "warn",
        "onprem",
        None,
    ),
    ("isolation.environment_unknown", "environment unknown", lambda f: None, "info", "unknown", None),
    (
        "monitoring.no_gpu_agent",
        "no agents",
        _both(_set("monitoring.agents_running", []), _set("software.services", {})),
        "warn",
        "onprem",
        None,
    ),
    (
        "monitoring.no_node_agent",
        "no agents, ps captured",
        _both(_set("monitoring.agents_running", []), _set("meta.commands", {"ps-comm": "ok"})),
        "info",
        "onprem",
        None,
    ),
    (
        "kernel.acs_redirect",
        "ACS redirect on a bridge (bare metal)",
        _set("kernel.acs_redirect_bridges", ["0000:15:01.0"]),
        "fail",
        "onprem",
        None,
    ),
    (
        "kernel.iommu_not_pt",
        "intel_iommu=on without pt",
        _set("kernel.iommu", "on"),
        "warn",
        "onprem",
        None,
    ),
    (
        "kernel.numa_balancing",
        "numa_balancing=1",
        lambda f: f.kernel.sysctl.update({"kernel.numa_balancing": "1"}),
        "warn",
        "onprem",
        None,
    ),
    (
        "kernel.cpu_governor",
        "powersave governor",
        _set("cpu.governor", "powersave"),
        "warn",
        "onprem",
        None,
    ),
    ("kernel.thp", "THP always", _set("kernel.thp_enabled", "always"), "info", "onprem", None),
    ("kernel.swap_on", "8 GiB swap", _set("memory.swap_total_bytes", 8 * 2**30), "info", "onprem", None),
    (
        "kernel.memlock_limited",
        "memlock 8 MiB with RDMA",
        _both(_set("kernel.memlock_unlimited", False), _set("kernel.memlock_bytes", 8 * 2**20)),
        "warn",
        "onprem",
        None,
    ),
    (
        "framework.amp_bf16",
        "(fires on cc 9.0)",
        lambda f: None,
        "info",
        "onprem",
        lambda f: [setattr(g, "compute_capability", "7.0") for g in f.gpus],
    ),
    (
        "framework.amp_fp16",
        "V100-class cc 7.0",
        lambda f: [setattr(g, "compute_capability", "7.0") for g in f.gpus],
        "info",
        "onprem",
        None,
    ),
    (
        "framework.tf32",
        "(fires on cc 9.0)",
        lambda f: None,
        "info",
        "onprem",
        lambda f: [setattr(g, "compute_capability", "7.5") for g in f.gpus],
    ),
    (
        "framework.fp8",
        "(fires on cc 9.0)",
        lambda f: None,
        "info",
        "onprem",
        lambda f: [setattr(g, "compute_capability", "8.0") for g in f.gpus],
    ),
    (
        "framework.torch_compile",
        "(fires on torch 2.x)",
        lambda f: None,
        "info",
        "onprem",
        _set("software.torch_version", "1.13.1"),
    ),
    (
        "framework.dataloader_workers",
        "(fires with GPUs and CPUs known)",
        lambda f: None,
        "info",
        "onprem",
        _set("cpu.threads", None),
    ),
]


@pytest.mark.parametrize(
    "rule_id,what,edit,status,env,clean_edit", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_rule_triggers_and_stays_quiet(rule_id, what, edit, status, env, clean_edit):
    assert rule_id in registry()
    facts = healthy_node()
    edit(facts)
    hits = [f for f in run_rules(facts, None, env) if f.id == rule_id]
    assert len(hits) == 1, f"{rule_id} did not fire after: {what}"
    f = hits[0]
    assert f.status == status, f.title
    assert f.evidence, "every finding cites its evidence"
    assert f.source, "every finding cites its source"
    assert f.recommendation.text

    clean = healthy_node()
    if clean_edit:
        clean_edit(clean)
    clean_env = "onprem" if env == "unknown" else env  # the unknown-environment rule's "clean" is a known one
    quiet = [f for f in run_rules(clean, None, clean_env) if f.id == rule_id and f.status != "pass"]
    assert not quiet, f"{rule_id} fired on the clean node: {quiet[0].title}"


BENCH_CASES = [
    ("bench.compute_low", measurement("matmul_bf16", "compute", 500.0, 989.0, 0.803, "TFLOP/s"), "fail"),
    ("bench.memory_low", measurement("hbm_copy", "memory", 2100.0, 3350.0, 0.76), "warn"),
    ("bench.host_device_low", measurement("h2d_pinned", "host-device", 25.0, 63.0, None), "fail"),
    ("bench.gpu_gpu_low", measurement("p2p_copy", "gpu-gpu", 300.0, 450.0, 0.88), "warn"),
    ("bench.collective_low", measurement("allreduce_busbw", "collective", 150.0, 300.0, 0.78), "fail"),
]


@pytest.mark.parametrize("rule_id,m,status", BENCH_CASES, ids=[c[0] for c in BENCH_CASES])
def test_measurement_rules(rule_id, m, status):
    hits = [f for f in run_rules(healthy_node(), bench(m), "onprem") if f.id == rule_id]
    assert len(hits) == 1 and hits[0].status == status
    assert hits[0].evidence[0].kind == "measurement"
    good = m.model_copy(
        update={
            "value": m.peak * 0.85,
            "percent_of_peak": 85.0,
            "percent_of_achievable": 85.0 / m.achievable_fraction if m.achievable_fraction else None,
        }
    )
    quiet = [
        f for f in run_rules(healthy_node(), bench(good), "onprem") if f.id == rule_id and f.status != "pass"
    ]
    assert not quiet
    # Without measurements the measurement rules do not run at all.
    assert not [f for f in run_rules(healthy_node(), None, "onprem") if f.id == rule_id]


def test_data_on_network_uses_measured_iops():
    facts = healthy_node()
    facts.storage.mounts.append(Mount(mountpoint="/data", fstype="nfs4", network=True))
    slow = measurement("fio_randread_4k", "storage", 12000.0, 1e6, None, "IOPS").model_copy(
        update={"device": "/data/gpuwise-bench"}  # bench --data-dir /data/gpuwise-bench
    )
    f = next(f for f in run_rules(facts, bench(slow), "cloud") if f.id == "storage.data_on_network")
    assert f.status == "warn" and any(e.kind == "measurement" for e in f.evidence)


def test_data_on_network_ignores_iops_measured_elsewhere():
    # fio ran in the local temp dir (bench's default): it says nothing about the NFS mount.
    facts = healthy_node()
    facts.storage.mounts.append(Mount(mountpoint="/data", fstype="nfs4", network=True))
    local = measurement("fio_randread_4k", "storage", 12000.0, 1e6, None, "IOPS").model_copy(
        update={"device": "/tmp"}
    )
    f = next(f for f in run_rules(facts, bench(local), "cloud") if f.id == "storage.data_on_network")
    assert f.status == "info" and not any(e.kind == "measurement" for e in f.evidence)


def test_failed_benchmarks_are_reported():
    m = measurement("matmul_bf16", "compute", 1.0, 989.0).model_copy(
        update={"status": "failed", "reason": "OOM"}
    )
    assert any(f.id == "bench.not_measured" for f in run_rules(healthy_node(), bench(m), "onprem"))


def test_at_least_40_rules_cover_every_layer():
    rules = registry()
    assert len(rules) >= 40
    layers = {r.layer for r in rules.values()}
    assert layers == set(LAYER_ORDER)  # every layer a Finding may name has at least one rule
    assert all(r.source for r in rules.values())
    tested = (
        {c[0] for c in CASES}
        | {c[0] for c in BENCH_CASES}
        | {"bench.not_measured", "bench.pin_memory_gain"}
        # triggered in tests/bench/test_nccl_inputs.py with NCCL_DEBUG=INFO logs
        | {"nccl.socket_transport", "nccl.log_warnings", "nccl.job_debug_vars", "nccl.run_summary"}
        # triggered in tests/advise/test_nccl_collective_fabric.py (nccl-tests table + NCCL_DEBUG=INFO lines)
        | {"nccl.collective_vs_fabric"}
        # triggered in tests/advise/test_profile_rules.py with gpuwise-profile/1 documents
        | {r for r in rules if r.startswith("profile.")}
        # triggered by the real recordings of tests/facts/test_evidence_corpus.py (and test_evidence_readers.py)
        | {"gpu.dcgm_diag", "fabric.nvswitch_errors", "fabric.manager_start", "evidence.sources"}
        | {"nccl.ofi_provider"}  # the aws-ofi-nccl logs of that corpus (efa passes, tcp;ofi_rxm warns)
        | {"nccl.gdrdma"}  # nccl-mesh-plugin#56 in that corpus: NET/IB without /GDRDMA is information
        # DCGM#198's `dcgmi nvlink --link-status` and coreos/bugs#2515's bond in that corpus; judged by role and
        # model in tests/facts/test_dcgm_nvlink.py and tests/advise/test_kernel_bonds.py
        | {"gpu.dcgm_nvlink", "kernel.bond_down"}
        # triggered in tests/advise/test_judge_roles.py on the real DGX-1 topo -m matrix
        | {"topo.gpu_nic_placement"}
        | {
            r
            for r in rules
            if r.startswith("kernel.")
            and r.split(".")[1] in ("link_flaps", "pcie_aer", "oom_kills", "hung_tasks", "machine_checks")
        }
        # triggered in tests/stability/test_analysis.py with gpuwise-stability/1 results (doctor --stability)
        | {"isolation.stability"}
    )
    assert set(rules) - tested == set(), "every rule needs a trigger test"


def test_healthy_node_has_no_warnings():
    findings = run_rules(healthy_node(), None, "onprem")
    assert not [f for f in findings if f.status in ("fail", "warn")]


def test_cpu_vm_gets_a_sensible_plan():
    findings = run_rules(cpu_vm(), None, "cloud")
    ids = {f.id for f in findings}
    assert "gpu.none_found" in ids
    assert not [f for f in findings if f.status == "fail"]
    # GPU-only checks stay quiet rather than guessing.
    assert not ids & {"gpu.persistence_off", "net.no_rdma", "monitoring.no_gpu_agent", "framework.amp_bf16"}


def test_host_ram_check_says_nothing_when_one_gpus_memory_is_unknown():
    # 256 GiB RAM is small next to 8 x 80 GiB; with GPU7's size unknown a partial sum (560 GiB) would
    # still judge, and a larger RAM would pass against an understated total. Unknown stays unknown.
    facts = healthy_node()
    facts.memory.total_bytes = 256 * 2**30
    facts.gpus[7].memory_total_bytes = None
    assert "memory.host_ram_small" not in {f.id for f in run_rules(facts, None, "cloud")}


def test_cpu_paths_of_the_benchmarks_are_not_judged_as_gpu_hardware():
    # A CPU-only machine's matmul against the derived CPU peak: the GPU fractions and advice do not apply.
    cpu_matmul = measurement("matmul_fp32", "compute", 0.05, 0.17, None, "TFLOP/s", device="cpu")
    assert "bench.compute_low" not in {f.id for f in run_rules(cpu_vm(), bench(cpu_matmul), "cloud")}


def test_probe_layer_choices_are_the_finding_layers():
    # commands/probe.py keeps its own tuple (command modules import only typer at the top); it must
    # name the same layers as Finding, except "framework", which has no facts of its own.
    from gpuwise.commands.probe import LAYER_CHOICES

    assert tuple(layer for layer in LAYER_ORDER if layer != "framework") == LAYER_CHOICES


@pytest.mark.parametrize(
    "instance,status,text",
    [
        ("p4d.24xlarge", "warn", "4 EFA adapters"),
        ("g5.xlarge", "info", "has no EFA"),
        ("P5.48XLARGE", "warn", "32 EFA"),
    ],
)
def test_no_rdma_judges_efa_by_the_instance_type(instance, status, text):
    facts = healthy_node()
    facts.network.rdma_devices = []
    facts.gpus = facts.gpus[:1]  # one GPU: without the instance type this is at most info
    facts.platform.instance_type = instance
    (hit,) = [f for f in run_rules(facts, None, "cloud") if f.id == "net.no_rdma"]
    assert hit.status == status
    assert text in hit.recommendation.text
    assert "docs.aws.amazon.com" in hit.recommendation.text
    assert ("platform.instance_type", instance.lower()) in [(e.path, e.value) for e in hit.evidence]
