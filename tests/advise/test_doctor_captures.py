"""End to end through captures: recorded real GPU-server outputs -> CaptureHost -> Facts -> rules.

Each case copies one real output into a capture in tmp_path; the quiet twin is the same output with
one minimal edit, described in the case. Skips cleanly when the shared fixtures folder is absent.
"""

from __future__ import annotations

import re

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
    ("gpu.nvlink_inactive", NVLINK_V100, "nvidia-smi-nvlink-s",
     ("every '<inactive>' link line replaced by the active speed '25.781 GB/s'", _sub(r"<inactive>", "25.781 GB/s")),
     "fail"),
    ("gpu.mig_enabled", XML_A100_MIG, "nvidia-smi-q-x",
     ("<current_mig>Enabled -> Disabled", _sub(r"<current_mig>Enabled</current_mig>", "<current_mig>Disabled</current_mig>")),
     "warn"),
    ("gpu.persistence_off", A100_Q, "nvidia-smi-q",
     ("every 'Persistence Mode : Disabled' -> Enabled", _sub(r"(Persistence Mode\s+:) Disabled", r"\1 Enabled")),
     "warn"),
    ("gpu.retired_pages", RETIRED_V100, "nvidia-smi-q",
     ("the one 'Single Bit ECC : 1' retired-page count -> 0",
      _sub(r"(Retired Pages\n\s+Single Bit ECC\s+:) 1", r"\1 0")),
     "warn"),
    ("pcie.width_below_max", L4_Q, "nvidia-smi-q",
     ("Link Width 'Current : 8x' -> 16x", _sub(r"(Max\s+: 16x\n\s+Current\s+:) 8x", r"\1 16x")),
     "warn"),
    ("pcie.gen_below_max", RTX3090_XML, "nvidia-smi-q-x",
     ("clocks_event_reason_gpu_idle Not Active -> Active (an idle GPU downshifts its link on purpose)",
      _sub(r"<clocks_event_reason_gpu_idle>Not Active<", "<clocks_event_reason_gpu_idle>Active<")),
     "warn"),
    ("gpu.throttle_active", RTX3090_XML, "nvidia-smi-q-x",
     ("sw_power_cap Active -> Not Active",
      _sub(r"<clocks_event_reason_sw_power_cap>Active<", "<clocks_event_reason_sw_power_cap>Not Active<")),
     "warn"),
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


def test_nvlink_evidence_names_the_dead_links(real, tmp_path):
    report = doctor_report(make_capture(tmp_path / "c", {"nvidia-smi-nvlink-s": real_text(NVLINK_V100)}))
    f = finding(report, "gpu.nvlink_inactive")
    values = {e.path: e.value for e in f.evidence}
    assert values["topology.nvlinks[gpu 3].inactive_links"] == [3, 5]


@pytest.mark.xfail(reason="needs facts/gpu.py to keep nvidia-smi warnings (in gpu_probe.notes) when the plain table is "
                   "the only GPU output captured; requested from the GPU-facts owner", strict=False)
def test_inforom_warning_from_plain_nvidia_smi(real, tmp_path):
    """The plain table is the only place nvidia-smi prints 'infoROM is corrupted'."""
    text = real_text(INFOROM_V100)
    report = doctor_report(make_capture(tmp_path / "as-recorded", {"nvidia-smi": text}))
    f = finding(report, "gpu.inforom_warning")
    assert f is not None and "0008:00:00.0" in str([e.value for e in f.evidence])
    # Edit: the WARNING line removed.
    quiet = "\n".join(line for line in text.splitlines() if "infoROM" not in line)
    assert finding(doctor_report(make_capture(tmp_path / "edited", {"nvidia-smi": quiet})), "gpu.inforom_warning") is None


def test_cloud_vs_onprem_changes_priority_and_controllability(real, tmp_path):
    cap = make_capture(tmp_path / "c", {"nvidia-smi-q": real_text(L4_Q)})
    onprem = finding(doctor_report(cap, env="onprem"), "pcie.width_below_max")
    cloud = finding(doctor_report(cap, env="cloud"), "pcie.width_below_max")
    assert onprem.priority == "high" and onprem.controllable.can == "yes"
    assert cloud.priority == "medium" and cloud.controllable.can == "no" and cloud.controllable.alternative


HOST_FILES_HEALTHY = {
    "/proc/swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
    "/proc/sys/kernel/numa_balancing": "0\n",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
    "/proc/self/limits": "Limit                     Soft Limit           Hard Limit           Units     \n"
                         "Max locked memory         unlimited            unlimited            bytes     \n",
}

# (rule id, file edited, new content, expected status)
HOST_CASES = [
    ("kernel.numa_balancing", "/proc/sys/kernel/numa_balancing", "1\n", "warn"),
    ("kernel.cpu_governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n", "warn"),
    ("kernel.memlock_limited", "/proc/self/limits",
     "Limit                     Soft Limit           Hard Limit           Units     \n"
     "Max locked memory         8388608              8388608              bytes     \n", "info"),
]


@pytest.mark.parametrize("rule_id,path,content,status", HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_host_rules_through_captures(real, tmp_path, rule_id, path, content, status):
    commands = {"nvidia-smi-q": real_text(L4_Q)}
    report = doctor_report(make_capture(tmp_path / "healthy", commands, dict(HOST_FILES_HEALTHY)))
    assert finding(report, rule_id) is None
    files = dict(HOST_FILES_HEALTHY, **{path: content})
    f = finding(doctor_report(make_capture(tmp_path / "edited", commands, files)), rule_id)
    assert f is not None and f.status == status
