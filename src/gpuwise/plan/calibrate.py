"""`--calibrate FILE`: take measured numbers from a `gpuwise bench` report or an nccl-tests log into the model.

A bench report gives MFU, matmul and NVLink all-reduce numbers; an all-reduce measured across nodes
(bench's collective run under torchrun/srun on several nodes, or an nccl-tests log of a multi-node run)
gives the inter-node bandwidth and latency (network_fit.py) and the per-rank time spread. A fleet
directory (`plan --calibrate FLEET_DIR`) is read by gpuwise.fleet.calibration, which builds the same
Calibration from the fleet's nodes.

A `gpuwise stability` result sets the straggler terms (plan/stability_calibration.py).

Read defensively: only results with status "ok" and a usable value count, and every number taken is
listed in `Calibration.used` (and every result skipped, with why, in `Calibration.ignored`), so the
plan says exactly what was calibrated. A calibration applies to the options whose GPU matches the
benchmarked GPU (by catalog match); other options keep their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.documents.ids import STABILITY_SCHEMA
from gpuwise.i18n import N_, msg
from gpuwise.plan.network_fit import NetworkFit, fit_measurement, spread_cv


@dataclass
class Calibration:
    gpu_name: str | None = None  # benchmarked device name, from the report's environment
    training_mfu: float | None = None
    mamf_fraction: float | None = None  # matmul achieved / peak at the training precision
    intra_busbw_gb_s: float | None = None  # single-node all-reduce bus bandwidth
    network: NetworkFit | None = None  # inter-node all-reduce, fitted
    compute_cv: float | None = None  # per-node step-time spread (fleet)
    network_cv: float | None = None  # per-rank all-reduce time spread
    from_stability: bool = False  # the spreads come from a `gpuwise stability` run (its probes, not steps)
    used: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def _fraction(m: Measurement) -> float | None:
    if m.percent_of_peak is not None and 0 < m.percent_of_peak <= 100:
        return m.percent_of_peak / 100.0
    if m.value is not None and m.peak:
        frac = m.value / m.peak
        return frac if 0 < frac <= 1 else None
    return None


def _device_name(report: BenchReport) -> str | None:
    """The benchmarked GPU: `gpuwise bench` records environment.catalog_gpu (catalog key) and .gpus (names)."""
    env = report.environment or {}
    for key in ("catalog_gpu", "gpu_name", "device_name"):
        value = env.get(key)
        if isinstance(value, str) and value:
            return value
    names = env.get("gpus") or env.get("gpu_names")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    return None


def add_network(cal: Calibration, m: Measurement, transport: str | None = None) -> None:
    """An all-reduce across nodes (bench collective or nccl-tests): fit it, note the per-rank spread."""
    params, extra = m.params or {}, m.extra or {}
    backend = params.get("backend")
    transport = transport or ("tcp" if backend == "gloo" else None)
    nodes = int(params.get("nodes") or 1)
    ranks = int(params.get("world_size") or params.get("ranks") or nodes)
    source = str(params.get("source") or m.name)
    fit, why = fit_measurement(list(extra.get("table") or []), nodes, ranks, transport, source)
    if fit is None:
        cal.ignored.append(why)
        return
    cal.network = fit
    cal.used.append(
        msg("{name}: {fit} (sets the inter-node bandwidth and latency)").format(
            name=m.name, fit=fit.describe()
        )
    )
    cv = spread_cv(list(extra.get("per_rank_time_us") or []))
    if cv is not None:
        cal.network_cv = cv
        cal.used.append(
            msg("{name}: per-rank time spread cv {cv} at the largest size (network straggler term)").format(
                name=m.name, cv=f"{cv:.3f}"
            )
        )


def load_calibration(path: str | Path, precision: str, model_kind: str = "transformer") -> Calibration:
    """Parse a BenchReport (schema gpuwise-bench/1) or an nccl-tests log and extract what the planner can use.

    `model_kind` is "transformer" or "cnn": which `train_<kind>_<precision>` result calibrates MFU."""
    from gpuwise.bench.report_file import read_bench_report

    if not _is_json(Path(path)):
        return load_nccl_calibration(Path(path))
    stability = _stability_report(Path(path))
    if stability is not None:
        from gpuwise.plan.stability_calibration import stability_calibration

        return stability_calibration(stability, path)
    report = read_bench_report(path, "--calibrate")
    cal = Calibration(gpu_name=_device_name(report))
    if cal.gpu_name is None:
        cal.ignored.append(
            msg("the report names no GPU (a CPU-only run?): nothing can be matched to an option's GPU")
        )
        return cal
    want_matmul = f"matmul_{precision}"
    want_training = f"train_{model_kind}_{precision}"
    for m in report.results:
        if m.status != "ok" or m.value is None:
            status = msg("{name}: status {status}").format(name=m.name, status=m.status)
            cal.ignored.append(status + (f" ({m.reason})" if m.reason else ""))
            continue
        name = m.name.lower()
        if m.layer == "training":
            if name != want_training:
                cal.ignored.append(
                    msg("{name}: not the workload's model kind/precision ({want})").format(
                        name=m.name, want=want_training
                    )
                )
                continue
            mfu = (m.extra or {}).get("mfu") or _fraction(m)
            if mfu and 0 < mfu <= 1:
                cal.training_mfu = float(mfu)
                cal.used.append(
                    msg("{name}: measured training MFU {mfu} (used as MFU)").format(
                        name=m.name, mfu=f"{mfu:.1%}"
                    )
                )
            else:
                cal.ignored.append(msg("{name}: no MFU (no peak known for this GPU)").format(name=m.name))
        elif name == want_matmul:
            frac = _fraction(m)
            if frac:
                cal.mamf_fraction = frac
                cal.used.append(
                    msg("{name}: {pct} of peak (MFU = this × mfu_over_mamf)").format(
                        name=m.name, pct=f"{frac:.1%}"
                    )
                )
            else:
                cal.ignored.append(
                    msg("{name}: no percent_of_peak or peak to compare with").format(name=m.name)
                )
        elif name == "allreduce_busbw" and m.unit.lower().replace(" ", "") == "gb/s":
            params = m.params or {}
            nodes = params.get("nodes") or 1
            if nodes != 1:
                add_network(cal, m)
                continue
            # `gpuwise bench --backend gloo` on a GPU machine all-reduces CPU tensors over loopback: that
            # number says nothing about the GPUs' interconnect, so only NCCL results calibrate it.
            if params.get("backend") != "nccl":
                cal.ignored.append(
                    msg("{name}: backend {backend}, not nccl: not a GPU interconnect measurement").format(
                        name=m.name, backend=params.get("backend") or msg("not recorded")
                    )
                )
                continue
            cal.intra_busbw_gb_s = m.value
            cal.used.append(
                msg("{name}: {value} GB/s intra-node all-reduce bus bandwidth").format(
                    name=m.name, value=f"{m.value:.1f}"
                )
            )
        else:
            cal.ignored.append(msg("{name}: not used by the planner").format(name=m.name))
    if not cal.used:
        cal.ignored.append(
            msg("nothing usable: the report has no ok matmul, all-reduce or training-MFU result")
        )
    return cal


def _stability_report(path: Path):
    """The gpuwise-stability/1 document at `path`, or None when the file is something else."""
    from gpuwise.stability.document_file import is_stability_document, parse_stability

    p = path.expanduser()
    try:
        if not p.is_file():  # a FIFO or device must never be opened here: the bench reader refuses it
            return None
        with p.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    if f'"{STABILITY_SCHEMA}"' not in head:
        return None
    from gpuwise.datafiles import read_json

    doc = read_json(p, N_("stability result"))
    return parse_stability(doc, path, "--calibrate") if is_stability_document(doc) else None


def _is_json(path: Path) -> bool:
    """A gpuwise bench report: a *.json file, or a file starting with "{", unless it is nccl-tests' -J
    JSON ("results" and no "schema"). Anything that is not a regular file goes to the bench reader,
    which refuses it without opening it (a FIFO must never block)."""
    p = path.expanduser()
    if not p.is_file():
        return True
    try:
        with p.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace").lstrip()
    except OSError:
        return True  # read_bench_report gives the message
    nccl_json = head.startswith("{") and '"results"' in head and '"schema"' not in head
    return not nccl_json and (p.suffix.lower() == ".json" or head.startswith("{"))


RDMA_NETS = {"ib", "aws libfabric", "libfabric", "ofi", "gib"}  # NCCL's IB verbs and the EFA/GCP plugins


def load_nccl_calibration(path: Path) -> Calibration:
    """An nccl-tests output (and NCCL_DEBUG=INFO lines in it): the all-reduce across nodes, its transport."""
    from gpuwise.bench.nccl_debug import parse_nccl_debug
    from gpuwise.bench.nccl_files import read_nccl_files

    measurements, _failed = read_nccl_files([path])  # size cap and "neither" checks; then every NCCL line
    logs = [parse_nccl_debug(path.read_text(encoding="utf-8", errors="replace"), path.name)]
    nets = {n.split("/")[0].lower() for log in logs for n in [*log.networks, *log.net_devices]}
    nets |= {t.split("/")[1].lower() for log in logs for t in log.transports if t.startswith("NET/")}
    transport = "rdma" if nets & RDMA_NETS else "tcp" if "socket" in nets else None
    debug_nodes = max((log.nodes or 0 for log in logs), default=0)
    debug_ranks = max((log.ranks or 0 for log in logs), default=0)
    cal = Calibration()
    for m in measurements:
        if m.params.get("op") != "all_reduce":
            cal.ignored.append(msg("{name}: not an all-reduce").format(name=m.name))
            continue
        cal.gpu_name = cal.gpu_name or m.params.get("gpu")
        if int(m.params.get("nodes") or 1) < 2 and debug_nodes > 1 and debug_ranks:
            m.params.update(nodes=debug_nodes, ranks=debug_ranks)  # NCCL's own "nRanks .. nNodes .." line
        if m.status != "ok":
            cal.ignored.append(f"{m.name}: {m.reason}")
        elif int(m.params.get("nodes") or 1) < 2:
            cal.ignored.append(
                msg(
                    "{name}: the log shows one node (or no '#  Rank ... on HOST' lines, so the node count "
                    "is unknown); only an all-reduce across nodes calibrates the network"
                ).format(name=m.name)
            )
        else:
            add_network(cal, m, transport)
    if cal.gpu_name is None:
        cal.ignored.append(
            msg("the log names no GPU ('#  Rank ... device ... [..] NAME' lines): nothing can be matched")
        )
    return cal
