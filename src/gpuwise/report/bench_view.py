"""Render a BenchReport: one Rich table per layer, every result with its % of peak or its reason."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuwise.bench.models import BenchReport, Measurement
from gpuwise.bench.registry import titles

STATUS_STYLE = {"ok": "green", "failed": "red", "skipped": "yellow", "invalid": "magenta"}


def _num(x: float | None) -> str:
    if x is None:
        return ""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


def _details(m: Measurement) -> str:
    """The one or two extra facts that make a row readable without the JSON."""
    e, p = m.extra, m.params
    if m.layer == "compute" and "best_shape" in p:
        return "best shape " + "x".join(map(str, p["best_shape"]))
    if m.layer == "collective" and e.get("table"):
        return (
            f"{p.get('world_size')} ranks {p.get('backend')}; "
            f"algbw {_num(e.get('algbw_plateau_gb_s'))} GB/s; slowest rank {e.get('slowest_rank')}"
        )
    if m.layer == "storage":
        lat = e.get("latency_us", {})
        how = "direct" if p.get("direct") else "buffered"
        return f"p99 {_num(lat.get('p99_us'))} us; {how} on {p.get('filesystem')}"
    if m.layer == "dataloader":
        return f"saturates at {e.get('saturating_workers')} workers (best {e.get('best_workers')})"
    if m.layer == "training":
        tok = f", {_num(e['tokens_per_s'])} tok/s" if e.get("tokens_per_s") else ""
        return f"{_num(e.get('samples_per_s'))} samples/s{tok}"
    if m.layer == "gpu-gpu":
        return f"link {e.get('link')}"
    return ""


def _peak_cell(m: Measurement) -> str:
    if m.percent_of_peak is not None:
        cell = f"{m.percent_of_peak:.0f}% of {_num(m.peak)}"
        if m.percent_of_achievable is not None:
            cell += f"\n{m.percent_of_achievable:.0f}% of typical"
        return cell
    if m.value is not None:
        return "[dim]no peak[/]"
    return ""


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def layer_table(layer: str, results: list[Measurement]) -> Table:
    t = Table(title=escape(titles().get(layer, str(layer))), title_justify="left", expand=False)
    t.add_column("benchmark", style="bold")
    t.add_column("value", justify="right")
    t.add_column("% of peak", justify="right")
    t.add_column("status")
    t.add_column("details / reason", overflow="fold")
    for m in results:
        value = escape(f"{_num(m.value)} {m.unit}") if m.value is not None else ""
        style = STATUS_STYLE.get(m.status, "")
        detail = m.reason or _details(m)
        if m.value is not None and m.peak is None and m.peak_source:
            detail = "; ".join(x for x in (detail, m.peak_source.split(":")[0]) if x)
        # names, reasons and details come from benchmarks and exceptions: print them literally
        t.add_row(
            escape(m.name),
            value,
            _peak_cell(m),
            f"[{style}]{escape(m.status)}[/]",
            escape(_short(detail or "")),
        )
    return t


def render_bench(report: BenchReport, console: Console | None = None) -> None:
    """Print the environment line, then one table per layer in run order."""
    console = console or Console()
    env = report.environment
    versions = ", ".join(f"{k} {env[k]}" for k in ("torch", "cuda", "nccl") if env.get(k))
    devices = (
        ", ".join(map(str, env.get("gpus") or []))
        or f"CPU only ({env.get('cpu_model', 'unknown CPU')}, {env.get('cpu_cores')} cores)"
    )
    console.print(
        f"[bold]gpuwise bench[/] ({escape(str(report.mode))}) on {escape(str(report.hostname))}: "
        f"{escape(devices)}; {escape(versions)}"
    )
    for warning in env.get("warnings", []):
        console.print(f"[yellow]note:[/] {escape(str(warning))}")
    layers: dict[str, list[Measurement]] = {}
    for m in report.results:
        layers.setdefault(m.layer, []).append(m)
    for layer, results in layers.items():
        console.print(layer_table(layer, results))
    counts = {s: sum(1 for m in report.results if m.status == s) for s in STATUS_STYLE}
    console.print(" ".join(f"[{STATUS_STYLE[s]}]{n} {s}[/]" for s, n in counts.items() if n))
