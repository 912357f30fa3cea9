"""Results of NVIDIA's nccl-tests (`all_reduce_perf` & co.) read as gpuwise Measurements.

Accepts the three shapes users have: the classic table (`error` column, as in nccl-tests 2.x logs),
the newer table (`root` and `#wrong` columns, optional per-iteration and timestamp columns), and the
`-J FILE.json` document (version 2: `config`, `devices`, `results` with `out_of_place`/`in_place`),
as people paste them (gpuwise.facts.paste: srun/mpirun prefixes, Markdown fences, CRLF; banner, rank
lines and the Avg line may be missing, and rank lines may have lost their '#'). The busbw plateau is
the median out-of-place busbw of the three largest sizes, as gpuwise's own collective benchmark
reports it; nccl-tests' "Avg bus bandwidth" (the mean over all sizes) is kept beside it.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field

from gpuwise.bench.peaks import Peak, gpu_spec, no_peak, nvlink_peak, pcie_peak
from gpuwise.documents.bench import Measurement
from gpuwise.facts.paste import unpaste
from gpuwise.i18n import msg

OPS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "hypercube",
)
_RANK = re.compile(
    r"^\s*#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$"
)
_PROGRAM = re.compile(r"Collective test starting:\s*(\S+)")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{2}:\d{2}:\d{2}$")


@dataclass
class NcclTestsRun:
    """One nccl-tests run: its operation, ranks and per-size rows (bytes, algbw, busbw in GB/s)."""

    op: str | None
    hosts: list[str] = field(default_factory=list)  # one entry per rank
    devices: list[str] = field(default_factory=list)  # GPU name per rank
    rows: list[dict] = field(
        default_factory=list
    )  # {"bytes", "time_us", "algbw_gb_s", "busbw_gb_s", "wrong"}
    avg_busbw_gb_s: float | None = None

    @property
    def nodes(self) -> int:
        return len(set(self.hosts)) or 1


def looks_like_nccl_tests(text: str) -> bool:
    """nccl-tests output, whole or trimmed (no banner, no Avg line: a header with busbw is enough)."""
    return (
        "busbw" in text
        and ("Avg bus bandwidth" in text or "out-of-place" in text or re.search(r"\bsize\b.*\bbusbw\b", text))
    ) or '"results"' in text


def op_from_name(name: str | None) -> str | None:
    """'./build/all_reduce_perf' or 'allreduce.log' -> 'all_reduce' (longest match first)."""
    flat = (name or "").lower().replace("-", "_")
    squashed = flat.replace("_", "")
    for op in sorted(OPS, key=len, reverse=True):
        if op in flat or op.replace("_", "") in squashed:
            return op
    return None


def parse_text(text: str, hint: str | None = None) -> NcclTestsRun:
    """The stdout of an nccl-tests binary (either table layout). `hint`: the file name, for the op."""
    run = NcclTestsRun(op=None)
    header: list[str] | None = None
    for raw in unpaste(text).splitlines():
        line = raw.rstrip()
        if m := _PROGRAM.search(line):
            run.op = op_from_name(m.group(1))
        elif m := _RANK.match(line):
            run.hosts.append(m.group(2))
            run.devices.append(m.group(3))
        elif "busbw" in line and re.search(r"\bsize\b", line):
            header = line.lstrip("#").split()
        elif "Avg bus bandwidth" in line:
            run.avg_busbw_gb_s = _float(line.rpartition(":")[2].split()[0] if ":" in line else None)
        elif header and line and not line.startswith("#"):
            row = _row(header, line.split())
            if row is not None:
                run.rows.append(row)
    run.op = run.op or op_from_name(hint)
    return run


def _row(header: list[str], tokens: list[str]) -> dict | None:
    """A data row, aligned on the header from the first time column (columns before it may be blank)."""
    while tokens and _DATE_TIME.match(tokens[-1]):
        tokens = tokens[:-1]  # -S timestamps
    header = [h for h in header if h != "timestamp"]
    first = next((i for i, h in enumerate(header) if h in ("time", "cputime")), None)
    if first is None or len(tokens) < 2 or not tokens[0].isdigit():
        return None
    tail_names = header[first:]
    tail = tokens[len(tokens) - len(tail_names) :]
    if len(tail) != len(tail_names):
        return None
    size = tokens[header.index("size")] if len(tokens) == len(header) and "size" in header else tokens[0]
    if not size.isdigit():
        return None
    values = dict(zip(tail_names, tail, strict=True))  # first occurrence (out-of-place) wins below
    out_of_place = {name: tail[tail_names.index(name)] for name in ("algbw", "busbw") if name in tail_names}
    time_us, algbw, busbw = (
        _float(tail[0]),
        _float(out_of_place.get("algbw")),
        _float(out_of_place.get("busbw")),
    )
    if time_us is None or busbw is None:
        return None
    wrong = values.get("#wrong", values.get("error"))
    return {
        "bytes": int(size),
        "time_us": time_us,
        "algbw_gb_s": algbw,
        "busbw_gb_s": busbw,
        "wrong": wrong,
    }


def parse_json(doc: object, hint: str | None = None) -> NcclTestsRun:
    """nccl-tests' `-J` output (JSON version 2)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ValueError(msg("not an nccl-tests JSON document (no 'results' list)"))
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    run = NcclTestsRun(op=op_from_name(str(args[0])) if args else None)
    devices = (doc.get("config") or {}).get("devices") if isinstance(doc.get("config"), dict) else None
    for d in devices if isinstance(devices, list) else []:
        if isinstance(d, dict):
            run.hosts.append(str(d.get("hostname", "")))
            run.devices.append(str(d.get("device_info", "")))
    for r in doc["results"]:
        oop = r.get("out_of_place") if isinstance(r, dict) else None
        if (
            not isinstance(oop, dict)
            or _float(oop.get("bus_bw")) is None
            or not isinstance(r.get("size"), int)
        ):
            continue
        run.rows.append(
            {
                "bytes": r["size"],
                "time_us": _float(oop.get("time", oop.get("cpu_time"))),
                "algbw_gb_s": _float(oop.get("alg_bw")),
                "busbw_gb_s": _float(oop.get("bus_bw")),
                "wrong": oop.get("nwrong"),
            }
        )
    avg = doc.get("average_bus_bandwidth")
    run.avg_busbw_gb_s = _float(avg.get("bandwidth")) if isinstance(avg, dict) else None
    run.op = run.op or op_from_name(hint)
    return run


def parse(text: str, hint: str | None = None) -> NcclTestsRun:
    """Either form; JSON when the text is a JSON object."""
    if text.lstrip().startswith("{"):
        return parse_json(json.loads(text), hint)
    return parse_text(text, hint)


def link_peak(run: NcclTestsRun) -> Peak:
    """The busbw bottleneck for a single-node run: NVLink for parts the catalog lists with NVLink, else
    PCIe. A multi-node run is bounded by the NICs, which the log does not name: no peak."""
    if run.nodes > 1:
        return no_peak(
            msg("{n} nodes: the NIC bandwidth is not in the nccl-tests output, no peak").format(n=run.nodes)
        )
    if not run.devices:
        return no_peak(msg("the nccl-tests output names no GPU (no rank lines): no peak"))
    name = run.devices[0]
    spec, why = gpu_spec(name)
    if spec is None:
        return no_peak(why)
    return nvlink_peak(name) if spec.nvlink_bandwidth_gb_s else pcie_peak(name)


def to_measurement(run: NcclTestsRun, source: str) -> Measurement:
    """The run's busbw plateau as a `collective` Measurement judged against its link peak."""
    table = sorted((r for r in run.rows if r["bytes"] > 0), key=lambda r: r["bytes"])
    op = run.op or "collective"
    m = Measurement(
        name=f"nccl_tests_{op}_busbw",
        layer="collective",
        unit="GB/s",
        device="cuda (nccl-tests)",
        params={
            "op": op,
            "tool": "nccl-tests",
            "backend": "nccl-tests",
            "source": source,
            "nodes": run.nodes,
            "sizes": [r["bytes"] for r in table],
            # only what the output says: a trimmed table has no rank lines, and no key is better than a None
            **({"ranks": len(run.hosts), "world_size": len(run.hosts)} if run.hosts else {}),
            **({"gpu": run.devices[0]} if run.devices else {}),
        },
        extra={"table": table},
    )
    if run.avg_busbw_gb_s is not None:
        # nccl-tests' own figure is the mean over every size, small ones included: below the plateau
        m.extra["avg_busbw_gb_s"] = run.avg_busbw_gb_s
    if not table:
        m.status, m.reason = "failed", f"{source}: no result rows in the nccl-tests output"
        return m
    m.value = round(statistics.median(r["busbw_gb_s"] for r in table[-3:]), 3)
    algbw = [r["algbw_gb_s"] for r in table[-3:] if r["algbw_gb_s"] is not None]
    if algbw:
        m.extra["algbw_plateau_gb_s"] = round(statistics.median(algbw), 3)
    link_peak(run).apply(m)
    wrong = [
        r
        for r in table
        if str(r.get("wrong")) not in ("0", "N/A", "None", "0.0", "") and r.get("wrong") is not None
    ]
    if wrong and all(_float(r["wrong"]) not in (None, 0.0) for r in wrong):
        m.extra["rows_with_wrong_values"] = len(wrong)
    return m


def _float(text: object) -> float | None:
    try:
        value = float(str(text))
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None
