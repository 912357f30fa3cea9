"""Events in the kernel log, in any of its forms (`dmesg` raw / -T / -H / iso, `journalctl -k`, /var/log/syslog,
/var/log/kern.log): link flaps, bonds left without an active interface, PCIe AER errors, OOM kills, hung tasks, machine checks and
NVSwitch SXids.
(NVIDIA Xid lines are read by gpuwise.facts.xid.)

Each event keeps its time on the log's own clock (gpuwise.facts.log_time), so the rules can say how often and
how recently something happened, relative to the log's last line.
"""

from __future__ import annotations

import re

from gpuwise.facts.log_time import LineClock
from gpuwise.facts.models import KernelEvent, KernelLog
from gpuwise.facts.paste import unpaste

MAX_EVENTS = 5000  # an AER storm logs thousands of lines; the newest are kept
_BDF = r"(?:[0-9a-fA-F]{4,}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_LINK = (
    re.compile(r"(?P<dev>[\w.@-]+):? NIC Link is (?P<s>Up|Down)\b", re.I),  # igb, e1000e, ixgbe, ice, bnxt_en
    re.compile(r"(?P<dev>[\w.@-]+): Link (?P<s>up|down)\b"),  # mlx5_core, mlx4
    re.compile(
        r"(?P<dev>[\w.@-]+): (?:(?P<lost>lost carrier|carrier lost)|(?P<gained>gained carrier|carrier gained))",
        re.I,
    ),
    re.compile(r"(?P<dev>mlx\d_\d+): Port: (?P<port>\d+) Link (?P<s>ACTIVE|DOWN)\b"),  # IB port state
    # the bonding driver on a member link: "bond0: link status definitely down for interface eno50, disabling
    # it", "link status down for interface eno4, disabling it in 200 ms", "link status up again after 0 ms
    # for interface eno4", "link status definitely up for interface eno3, 10000 Mbps full duplex"
    re.compile(
        r"link status (?:definitely )?(?P<s>up|down)(?: again after \d+ ms)? for interface (?P<dev>[\w.@-]+)"
    ),
)
# containers and VMs start and stop these all day: their state changes are not link flaps
_VIRTUAL = ("veth", "docker", "br-", "virbr", "cali", "flannel", "cni", "vxlan", "tun", "tap", "lo", "gw-")
_AER_BUS = re.compile(
    rf"(?P<drv>[\w-]+) (?P<bdf>{_BDF}): PCIe Bus Error: severity=(?P<sev>Corrected|Correctable|Uncorrected|Uncorrectable)"
    r"(?: \((?P<kind>Non-Fatal|Fatal)\))?(?:, type=(?P<type>[^,]+))?",
    re.I,
)
_AER_RECEIVED = re.compile(
    rf"AER: (?:Multiple )?(?P<sev>Corrected|Correctable|Uncorrected|Uncorrectable)(?: \((?P<kind>Non-Fatal|Fatal)\))? "
    rf"error(?: message)? received(?: from)?:? (?:id=\w+|(?P<bdf>{_BDF}))?",
    re.I,
)
_AER_BIT = re.compile(rf"(?P<bdf>{_BDF}):\s+\[\s*\d+\]\s+(?P<name>\w[\w ]*?)\s*(?:\(First\))?\s*$")
_OOM = re.compile(
    r"(?:Out of memory|Memory cgroup out of memory)?:? ?Killed process (?P<pid>\d+) \((?P<name>[^)]+)\)"
    r"(?:.*?anon-rss:(?P<rss>\d+)kB)?"
)
_HUNG = re.compile(r"INFO: task (?P<name>.+):(?P<pid>\d+) blocked for more than (?P<s>\d+) seconds")
_MCE = re.compile(r"mce: \[Hardware Error\]: (?P<what>Machine check events logged|.*Machine Check.*)")
_EDAC = re.compile(r"EDAC (?P<mc>MC\d+): (?P<n>\d+) (?P<kind>CE|UE) (?P<rest>.*)")
_FATAL_MCE = re.compile(r"Kernel panic - not syncing: (?:Fatal )?[Mm]achine check")
# the bonding driver on the bond itself: every member down (the bond carries no traffic), and a member active again
_BOND_NONE = re.compile(r"(?P<bond>[\w.@-]+): now running without any active interface")
_BOND_ACTIVE = re.compile(
    r"(?P<bond>[\w.@-]+): (?:making interface (?P<dev>[\w.@-]+) the new active one|first active interface up)"
)
_SXID = re.compile(
    r"(?P<dev>nvidia-nvswitch\d+): SXid \(PCI:(?P<bdf>[0-9a-fA-F:.]+)\): (?P<code>\d+), (?P<sev>Non-fatal|Fatal)",
    re.I,
)


def looks_like_kernel_log(text: str) -> bool:
    return bool(
        re.search(
            r"NVRM: Xid|fallen off the bus|PCIe Bus Error|AER: |Killed process|blocked for more than|Machine check|mce: |EDAC MC|"
            r"NIC Link is|: Link (?:up|down)|lost carrier|link status (?:definitely )?(?:up|down)|without any active interface|Port: \d+ Link|SXid|kernel: ",
            text,
        )
    )


def parse_kernel_log(text: str, source: str) -> KernelLog:
    """Every event in a kernel log, oldest first (the newest MAX_EVENTS when there are more)."""
    log = KernelLog(source=source)
    clock = LineClock()
    aer_bus_lines = "PCIe Bus Error" in text
    events: list[KernelEvent] = []
    last_aer: dict[str, KernelEvent] = {}
    last_hung: KernelEvent | None = None
    for raw in unpaste(text).splitlines():
        if not raw.strip():
            continue
        log.lines += 1
        t, clk, stamp, line = clock.read(raw)
        if clk is not None and t is not None:
            log.end[clk] = max(t, log.end.get(clk, t))
        line = _inner(line)

        def add(kind: str, device: str, detail: str = "", count: int = 1, at=(t, clk, stamp)) -> KernelEvent:
            e = KernelEvent(
                kind=kind,  # type: ignore[arg-type]
                device=device,
                t=at[0],
                clock=at[1],
                stamp=at[2],
                count=count,
                detail=detail[:200],
            )
            events.append(e)
            return e

        if m := _BOND_NONE.search(line):
            add("bond_no_active", m.group("bond"), line.strip())
        elif m := _BOND_ACTIVE.search(line):
            add("bond_active", m.group("bond"), line.strip())
        elif e := _link(line):
            add(*e, detail=line.strip())
        elif m := _AER_BUS.search(line):
            last_aer[m.group("bdf").lower()] = add(
                _aer_kind(m.group("sev"), m.group("kind")), _bdf(m.group("bdf")), _aer_detail(m)
            )
        elif (m := _AER_RECEIVED.search(line)) and not aer_bus_lines:
            add(
                _aer_kind(m.group("sev"), m.group("kind")),
                _bdf(m.group("bdf") or _reporter(line)),
                line.strip(),
            )
        elif (m := _AER_BIT.search(line)) and m.group("bdf").lower() in last_aer:
            e = last_aer[m.group("bdf").lower()]
            e.detail = (e.detail + "; " + m.group("name").strip())[:200]
        elif m := _OOM.search(line):
            rss = int(m.group("rss")) * 1024 if m.group("rss") else None
            detail = f"pid {m.group('pid')}" + (f", anon-rss {rss / 2**30:.1f} GiB" if rss else "")
            add("oom_kill", m.group("name"), detail)
        elif m := _HUNG.search(line):
            last_hung = add("hung_task", m.group("name"), f"blocked for more than {m.group('s')} s")
        elif last_hung is not None and re.search(r"\[(nvidia\w*)\]\s*$", line):
            module = re.search(r"\[(nvidia\w*)\]\s*$", line).group(1)  # type: ignore[union-attr]
            if module not in last_hung.detail:
                last_hung.detail = (last_hung.detail + f"; in {module}")[:200]
        elif m := _EDAC.search(line):
            add(
                "mce_corrected" if m.group("kind") == "CE" else "mce_uncorrected",
                m.group("mc"),
                line.strip(),
                int(m.group("n")),
            )
        elif _FATAL_MCE.search(line):
            add("mce_uncorrected", "CPU", line.strip())
        elif m := _MCE.search(line):
            add("mce", "CPU", m.group("what").strip())
        elif m := _SXID.search(line):
            sev = "sxid_fatal" if m.group("sev").lower() == "fatal" else "sxid_nonfatal"
            add(sev, m.group("bdf").lower(), f"SXid {m.group('code')} on {m.group('dev')}")
    log.events = events[-MAX_EVENTS:]
    return log


def _inner(line: str) -> str:
    """The kernel's message of a syslog/journal line: after 'kernel: ' and a '[  123.456]' boot stamp."""
    _host, sep, rest = line.partition("kernel: ")
    if sep:
        line = rest
    return re.sub(r"^\[\s*\d+\.\d+\]\s?", "", line)


def _link(line: str) -> tuple[str, str] | None:
    for pattern in _LINK:
        m = pattern.search(line)
        if not m:
            continue
        groups = m.groupdict()
        dev = m.group("dev").rstrip(":")
        if dev.startswith(_VIRTUAL):
            return None
        if groups.get("port"):
            dev = f"{dev}/{groups['port']}"
        if groups.get("lost") is not None or groups.get("gained") is not None:
            return ("link_down" if groups.get("lost") else "link_up"), dev
        state = (groups.get("s") or "").lower()
        return ("link_up" if state in ("up", "active") else "link_down"), dev
    return None


def _aer_kind(sev: str, kind: str | None) -> str:
    if sev.lower().startswith("correct"):
        return "aer_corrected"
    return "aer_fatal" if (kind or "").lower() == "fatal" else "aer_nonfatal"


def _aer_detail(m: re.Match[str]) -> str:
    return f"{m.group('drv')}: {(m.group('type') or '').strip()}".strip(": ")


def _reporter(line: str) -> str:
    m = re.search(rf"({_BDF})", line)
    return m.group(1) if m else "unknown device"


def _bdf(bdf: str) -> str:
    """'00:03.0' and '0000:00:03.0' are the same device: always with the domain, lower case."""
    bdf = bdf.lower()
    return bdf if bdf.count(":") >= 2 else "0000:" + bdf
