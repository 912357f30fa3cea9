"""End to end through captures: recorded real GPU-server outputs -> CaptureHost -> Facts -> rules.

Each case copies one real output into a capture in tmp_path; the quiet twin is the same output with
one minimal edit, described in the case. Skips cleanly when the shared fixtures folder is absent.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.advise.capture_kit import doctor_report, finding, make_capture, real_text

XML_A100_MIG = "nvidia_smi_xml/telegraf_a100-sxm4-v12.xml"
NVLINK_V100 = "nvidia_smi_text/azhpc-diagnostics_nvlink-s_8x-v100-sxm2_inactive-links.out"
INFOROM_V100 = "nvidia_smi_text/azhpc-diagnostics_nvidia-smi_8x-v100-sxm2_inforom-warning.out"
RETIRED_V100 = "nvidia_smi_text/thamada-gls_V100_x8_nvidia-smi-a.txt"
A100_Q = "nvidia_smi_text/azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out"
L4_Q = "nvidia_smi_text/thamada_L4_nvidia-smi-a.txt"
RTX3090_XML = "nvidia_smi_xml/telegraf_3090-v13.xml"


def _sub(pattern: str, repl: str, count: int = 0):
    def edit(text: str) -> str:
        new, n = re.subn(pattern, repl, text, count=count)
        assert n, f"edit {pattern!r} matched nothing: the fixture changed"
        return new

    return edit


# (rule id, fixture, command id, edit for the quiet twin (described), expected status)
CASES = [
    (
        "gpu.nvlink_inactive",
        NVLINK_V100,
        "nvidia-smi-nvlink-s",
        (
            "every '<inactive>' link line replaced by the active speed '25.781 GB/s'",
            _sub(r"<inactive>", "25.781 GB/s"),
        ),
        "fail",
    ),
    (
        "gpu.mig_enabled",
        XML_A100_MIG,
        "nvidia-smi-q-x",
        (
            "<current_mig>Enabled -> Disabled",
            _sub(r"<current_mig>Enabled</current_mig>", "<current_mig>Disabled</current_mig>"),
        ),
        "warn",
    ),
    (
        "gpu.persistence_off",
        A100_Q,
        "nvidia-smi-q",
        (
            "every 'Persistence Mode : Disabled' -> Enabled",
            _sub(r"(Persistence Mode\s+:) Disabled", r"\1 Enabled"),
        ),
        "warn",
    ),
    (
        "gpu.retired_pages",
        RETIRED_V100,
        "nvidia-smi-q",
        (
            "the one 'Single Bit ECC : 1' retired-page count -> 0",
            _sub(r"(Retired Pages\n\s+Single Bit ECC\s+:) 1", r"\1 0"),
        ),
        "warn",
    ),
    (
        "pcie.width_below_max",
        L4_Q,
        "nvidia-smi-q",
        ("Link Width 'Current : 8x' -> 16x", _sub(r"(Max\s+: 16x\n\s+Current\s+:) 8x", r"\1 16x")),
        "warn",
    ),
    (
        "gpu.power_capped",
        RTX3090_XML,
        "nvidia-smi-q-x",
        (
            "sw_power_cap Active -> Not Active",
            _sub(
                r"<clocks_event_reason_sw_power_cap>Active<",
                "<clocks_event_reason_sw_power_cap>Not Active<",
            ),
        ),
        "info",  # the software power cap is the GPU working at its limit, not a cooling fault
    ),
]


@pytest.mark.parametrize("rule_id,fixture,command_id,quiet,status", CASES, ids=[c[0] for c in CASES])
def test_real_capture_triggers_rule(real, tmp_path, rule_id, fixture, command_id, quiet, status):
    text = real_text(fixture)
    report = doctor_report(make_capture(tmp_path / "as-recorded", {command_id: text}))
    f = finding(report, rule_id)
    assert f is not None, f"{rule_id} not found in {fixture}"
    assert f.status == status
    assert f.evidence

    what, edit = quiet
    report = doctor_report(make_capture(tmp_path / "edited", {command_id: edit(text)}))
    assert finding(report, rule_id) is None, f"{rule_id} still fires after: {what}"


def test_idle_link_downshift_is_not_a_warning_but_the_same_link_under_load_is(real, tmp_path):
    """The RTX 3090 XML as recorded: Gen1 of Gen4, 'GPU idle' Not Active, but P8, 0% utilisation, no
    process and 210 of 2100 MHz: an idle GPU, so its downshifted link is normal power saving."""
    text = real_text(RTX3090_XML)
    report = doctor_report(make_capture(tmp_path / "as-recorded", {"nvidia-smi-q-x": text}))
    assert finding(report, "pcie.gen_below_max") is None
    assert finding(report, "gpu.throttle_active") is None  # sw_power_cap alone is not a fault
    # Edit: the same GPU under load (P2, 97% utilisation, one compute process, 1950 MHz).
    busy = text.replace("<performance_state>P8<", "<performance_state>P2<").replace(
        "<gpu_util>0 %<", "<gpu_util>97 %<"
    )
    busy = busy.replace("<sm_clock>210 MHz<", "<sm_clock>1950 MHz<").replace(
        "<processes>\n\t\t</processes>", "<processes><process_info><pid>4242</pid></process_info></processes>"
    )
    report = doctor_report(make_capture(tmp_path / "busy", {"nvidia-smi-q-x": busy}))
    f = finding(report, "pcie.gen_below_max")
    assert f is not None and f.status == "warn"
    assert "gpus[0].utilization_gpu_percent" in {e.path for e in f.evidence}
    # Edit: busy by utilisation but the clock says idle: conflicting evidence is at most info.
    unsure = busy.replace("<sm_clock>1950 MHz<", "<sm_clock>210 MHz<")
    report = doctor_report(make_capture(tmp_path / "unsure", {"nvidia-smi-q-x": unsure}))
    f = finding(report, "pcie.gen_below_max")
    assert f is not None and f.status == "info" and f.priority == "low"


def test_nvlink_evidence_names_the_dead_links(real, tmp_path):
    report = doctor_report(make_capture(tmp_path / "c", {"nvidia-smi-nvlink-s": real_text(NVLINK_V100)}))
    f = finding(report, "gpu.nvlink_inactive")
    values = {e.path: e.value for e in f.evidence}
    assert values["topology.nvlinks[gpu 3].inactive_links"] == [3, 5]


def test_inforom_warning_from_plain_nvidia_smi(real, tmp_path):
    """The plain table is the only place nvidia-smi prints 'infoROM is corrupted'."""
    text = real_text(INFOROM_V100)
    report = doctor_report(make_capture(tmp_path / "as-recorded", {"nvidia-smi": text}))
    f = finding(report, "gpu.inforom_warning")
    assert f is not None and "0008:00:00.0" in str([e.value for e in f.evidence])
    # Edit: the WARNING line removed.
    quiet = "\n".join(line for line in text.splitlines() if "infoROM" not in line)
    assert (
        finding(
            doctor_report(make_capture(tmp_path / "edited", {"nvidia-smi": quiet})), "gpu.inforom_warning"
        )
        is None
    )


def test_cloud_vs_onprem_changes_priority_and_controllability(real, tmp_path):
    cap = make_capture(tmp_path / "c", {"nvidia-smi-q": real_text(L4_Q)})
    onprem = finding(doctor_report(cap, env="onprem"), "pcie.width_below_max")
    cloud = finding(doctor_report(cap, env="cloud"), "pcie.width_below_max")
    assert onprem.priority == "high" and onprem.controllable.can == "yes"
    assert cloud.priority == "medium" and cloud.controllable.can == "no" and cloud.controllable.alternative


# Host-level rules, end to end, on the capture recorded on this project's CPU-only KVM/Docker VM
# (tests/captures/cpu-vm-kvm-docker): copied to tmp_path, then one file edited per case.
VM_CAPTURE = Path(__file__).parent.parent / "captures" / "cpu-vm-kvm-docker"


def _vm_copy(dest: Path) -> Path:
    if not VM_CAPTURE.is_dir():
        pytest.skip("recorded VM capture not present")
    shutil.copytree(VM_CAPTURE, dest)
    return dest


def _edit(rel: str, fn):
    def apply(root: Path) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(fn(p.read_text() if p.exists() else ""))

    return apply


def _env_add(**kv):
    def fn(text: str) -> str:
        data = json.loads(text)
        data["env"].update(kv)
        return json.dumps(data)

    return _edit("commands/env.txt", fn)


def _replace(rel: str, old: str, new: str):
    def fn(text: str) -> str:
        assert old in text, f"{rel}: {old!r} not in the recorded file"
        return text.replace(old, new)

    return _edit(rel, fn)


def _add_nfs(text: str) -> str:
    data = json.loads(text)
    data["filesystems"][0].setdefault("children", []).append(
        {
            "target": "/data",
            "source": "fileserver:/datasets",
            "fstype": "nfs4",
            "options": "rw,relatime,vers=4.2",
        }
    )
    return json.dumps(data)


# (rule id, edit description, edit, expected status; None = the recorded VM already triggers it and the
#  edit is the fix that silences it)
VM_CASES = [
    (
        "isolation.container_shm",
        "df: /dev/shm resized to Docker's default 64 MiB",
        _replace(
            "commands/df-P-B1.txt",
            "tmpfs                    25276059648           0 25276059648       0% /dev/shm",
            "tmpfs                       67108864           0    67108864       0% /dev/shm",
        ),
        "fail",
    ),
    (
        "kernel.numa_balancing",
        "kernel.numa_balancing 0 -> 1",
        _edit("files/proc/sys/kernel/numa_balancing", lambda t: "1\n"),
        "warn",
    ),
    (
        "kernel.swap_on",
        "8 GiB swap file in /proc/swaps and meminfo",
        lambda root: (
            _edit("files/proc/swaps", lambda t: t + "/swapfile file 8388604 0 -2\n")(root),
            _replace("files/proc/meminfo", "SwapTotal:             0 kB", "SwapTotal:       8388604 kB")(
                root
            ),
        ),
        "info",
    ),
    (
        "kernel.cpu_governor",
        "a cpufreq scaling_governor file reading 'powersave' (the VM as recorded has none: "
        "its 'not visible in this VM' info becomes a warning)",
        _edit("files/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", lambda t: "powersave\n"),
        "warn",
    ),
    ("net.nccl_debug_vars", "NCCL_ALGO=Ring added to the environment", _env_add(NCCL_ALGO="Ring"), "warn"),
    (
        "net.nccl_socket_ifname",
        "NCCL_SOCKET_IFNAME=docker0 added to the environment",
        _env_add(NCCL_SOCKET_IFNAME="docker0"),
        "fail",
    ),
    (
        "net.nccl_debug_vars",
        "/etc/nccl.conf with NCCL_P2P_DISABLE=1 added",
        _edit("files/etc/nccl.conf", lambda t: "NCCL_P2P_DISABLE=1\n"),
        "warn",
    ),
    (
        "storage.data_on_network",
        "an NFS mount of the dataset added to findmnt -J",
        _edit("commands/findmnt-J.txt", _add_nfs),
        "info",
    ),
    (
        "kernel.memlock_limited",
        "FIX: Max locked memory 8388608 -> unlimited",
        _replace(
            "files/proc/self/limits",
            "Max locked memory         8388608              8388608              bytes",
            "Max locked memory         unlimited            unlimited            bytes",
        ),
        None,
    ),
    (
        "kernel.thp",
        "FIX: THP 'enabled' file removed (not captured)",
        lambda root: (root / "files/sys/kernel/mm/transparent_hugepage/enabled").unlink(),
        None,
    ),
]


@pytest.mark.parametrize("rule_id,what,edit,status", VM_CASES, ids=[f"{c[0]}:{c[1][:30]}" for c in VM_CASES])
def test_host_rules_on_the_recorded_vm(tmp_path, rule_id, what, edit, status):
    as_recorded = finding(doctor_report(_vm_copy(tmp_path / "recorded")), rule_id)
    edited_root = _vm_copy(tmp_path / "edited")
    edit(edited_root)
    edited = finding(doctor_report(edited_root), rule_id)
    if status is None:  # the VM as recorded shows it; the edit is the fix
        assert as_recorded is not None and edited is None, what
    elif rule_id == "kernel.cpu_governor":
        assert as_recorded.status == "info" and edited.status == status
    else:
        assert as_recorded is None, f"{rule_id} fires on the VM as recorded"
        assert edited is not None and edited.status == status, what


def test_cpu_only_torch_on_a_gpu_node(real, tmp_path):
    """The recorded VM has a CPU-only torch; add a real L4 `nvidia-smi -q` report: now a GPU node."""
    root = _vm_copy(tmp_path / "vm")
    assert finding(doctor_report(root), "driver.torch_cpu_only") is None  # no GPU: a CPU torch is right
    (root / "commands" / "nvidia-smi-q.txt").write_text(real_text(L4_Q))
    f = finding(doctor_report(root), "driver.torch_cpu_only")
    assert f is not None and f.status == "fail" and f.priority == "high"


ASUS_REPORT = "server_reports/stelline_asus-esc8000a-e12.md"


def test_gpus_on_the_bus_without_a_driver_are_critical(real, tmp_path):
    """The ASUS ESC8000A report's `lspci -vvv` lists 4 RTX 6000 Ada; a capture of that machine whose NVML
    collector failed (edit: an NVML init error, no nvidia-smi output) must not pass as healthy."""
    lspci = real_text(ASUS_REPORT)  # the markdown holds the lspci -vvv listing; only device lines match
    commands = {
        "lspci-vvv": lspci,
        "nvml": json.dumps(
            {"format": "gpuwise-nvml/1", "error": "NVML init failed: Driver Not Loaded", "gpus": []}
        ),
    }
    report = doctor_report(make_capture(tmp_path / "no-driver", commands))
    f = finding(report, "gpu.driver_missing")
    assert f is not None and f.status == "fail" and report.summary.exit_code == 2
    assert dict((e.path, e.value) for e in f.evidence)["gpu_probe.pci_gpus"] == [
        "01:00.0",
        "41:00.0",
        "c1:00.0",
        "e1:00.0",
    ]
