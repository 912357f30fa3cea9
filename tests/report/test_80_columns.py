"""At 80 columns nothing a reader needs is cut: every command's text output, on recorded data.

Each command's Document is built from recorded inputs (the captures in tests/captures, the recorded
bench run, examples/*.yaml for plan, the shipped catalog) and rendered as text 80 columns wide. Then:

- no line is wider than 80 columns (lines to copy as they are, Code blocks, are exempt: they are
  never wrapped, so a terminal may soft-wrap them but they stay whole in a file or a copy);
- nothing is truncated with "…";
- every word of every cell and text the view formatted appears whole on one line of the output. The
  cells are the view's own formatting of the JSON's numbers (e.g. 989.5 TFLOPS, $39.33, 80%, 13.8 s), so
  this checks that every number the JSON holds, as the view writes it, is intact: not cut, not split
  across lines. Words longer than the 80 columns themselves (a long URL) are exempt, as no layout can
  keep them on one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwise.report.document import Code, Column, Document, Table, cell_text, cells
from gpuwise.report.formats import render
from tests.conftest import CAPTURES, TESTS, capture_dirs, real_files

WIDTH = 80
EXAMPLES = TESTS.parent / "examples"
BENCH_FILE = CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"
COLLECTIVE_FILE = CAPTURES / "cpu-vm-kvm-docker.bench-collective.json"  # bench --only collective, gloo


def _probe_docs() -> list[tuple[str, object]]:
    def build(capture: Path) -> Document:
        from gpuwise.capture.host import CaptureHost
        from gpuwise.facts.collect import collect_facts
        from gpuwise.report.views.probe import probe_view

        return probe_view(collect_facts(CaptureHost(capture)))

    return [(f"probe {c.name}", lambda c=c: build(c)) for c in capture_dirs()]


def _doctor_report(capture: Path, with_bench: bool):
    from gpuwise.bench.report_file import read_bench_report
    from tests.advise.capture_kit import doctor_report

    bench = read_bench_report(BENCH_FILE, "--bench-results") if with_bench else None
    return doctor_report(capture, bench=bench)


def _doctor_docs() -> list[tuple[str, object]]:
    from gpuwise.report.views.doctor import doctor_view

    out = [(f"doctor {c.name}", lambda c=c: doctor_view(_doctor_report(c, False))) for c in capture_dirs()]
    h200 = CAPTURES / "h200-1gpu-kvm-vm"
    out.append(("doctor h200 with bench", lambda: doctor_view(_doctor_report(h200, True))))
    return out


def _bench_doc(path: Path = BENCH_FILE) -> Document:
    from gpuwise.bench.report_file import read_bench_report
    from gpuwise.report.views.bench import bench_view

    return bench_view(read_bench_report(path, "--bench-results"))


def _compare_doc(tmp: Path) -> Document:
    from gpuwise.report.compare import compare_files
    from gpuwise.report.views.compare import compare_view

    a, b = tmp / "a.json", tmp / "b.json"
    a.write_text(json.dumps(_doctor_report(CAPTURES / "cpu-vm-kvm-docker", False).to_json_dict()))
    b.write_text(json.dumps(_doctor_report(CAPTURES / "h200-1gpu-kvm-vm", True).to_json_dict()))
    return compare_view(compare_files(a, b))


def _plan_docs() -> list[tuple[str, object]]:
    from gpuwise.plan.planner import make_plan
    from gpuwise.plan.serving.planner import make_serving_plan
    from gpuwise.plan.serving.workload import workload_kind
    from gpuwise.report.views.plan import plan_view
    from gpuwise.report.views.serving import serving_view

    options = EXAMPLES / "plan-options.yaml"
    # job-*.yaml are `gpuwise launch` jobs, not plan workloads
    files = sorted(p for p in EXAMPLES.glob("*.yaml") if p != options and not p.name.startswith("job-"))
    workloads = [p for p in files if workload_kind(p) != "inference"]
    out = [(f"plan {w.name}", lambda w=w: plan_view(make_plan(w), verbose=True)) for w in workloads]
    out += [(f"plan {w.name} + options", lambda w=w: plan_view(make_plan(w, options))) for w in workloads]
    serving = [p for p in files if workload_kind(p) == "inference"]
    out += [(f"plan {w.name}", lambda w=w: serving_view(make_serving_plan(w), verbose=True)) for w in serving]
    return out


def _catalog_docs() -> list[tuple[str, object]]:
    from gpuwise.catalog import fabrics, gpus, offers
    from gpuwise.report.views import catalog as view

    def offer(name: str) -> Document:
        return view.offer_view(offers.find_offer(name, offers.load_offers([])), name)

    return [
        ("catalog gpus", lambda: view.gpus_view(gpus.load_gpu_specs())),
        ("catalog fabrics", lambda: view.fabrics_view(fabrics.load_fabrics())),
        ("catalog offers", lambda: view.offers_view(offers.load_offers([]))),
        (
            "catalog show gpu",
            lambda: view.gpu_view(gpus.match_gpu("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3"),
        ),
        ("catalog show offer", lambda: offer("p5.48xlarge")),
        ("catalog show offer (tencent)", lambda: offer("GT4.41XLARGE948")),
        ("catalog show fabric", lambda: view.fabric_view(fabrics.load_fabrics()[0], "x")),
    ]


def _capture_doc() -> Document:
    from gpuwise.capture.writer import CaptureSummary
    from gpuwise.report.views.capture import capture_view

    summary = CaptureSummary(
        path=Path("/var/tmp/gpuwise-captures/node-17.tar.gz"),
        files=212,
        commands={"lscpu": "ok", "ibstat": "missing", "nvidia-smi-q-x": "timeout", "systemctl": "rc=3"},
        redacted_env=["AWS_SECRET_ACCESS_KEY"],
        masked={"hostname": 3, "mac": 12},
    )
    return capture_view(summary, mask=True)


def _watch_docs() -> list[tuple[str, object]]:
    from gpuwise.advise.watch import frame_signals, watch_findings
    from gpuwise.export.sample import ProcessSample
    from gpuwise.export.signals import load_config
    from gpuwise.export.sources import load_frames
    from gpuwise.export.watch import HostSummary, summarize
    from gpuwise.report.views.watch import frame_view, summary_view

    def frames():
        out = []
        for t in range(10):  # the H200 capture's GPU, held by a process, power-capped, idle 40% of the time
            (frame,) = load_frames(CAPTURES / "h200-1gpu-kvm-vm")
            frame.taken_at = float(t)
            frame.gpus[0].util_gpu_pct = 0.0 if t < 4 else 97.0
            frame.gpus[0].clock_event_mask = 0x4
            frame.gpus[0].processes = [ProcessSample(pid=4242, used_mib=70_000.0, name="python")]
            out.append(frame)
        return out

    def summary_doc() -> Document:
        host = HostSummary(
            ["torchrun", "--nproc-per-node", "8", "train.py"], 4242, 0, 3725.0, 3500.0, 9 * 2**30
        )
        summary = summarize(frames(), "live NVML", 1.0, host)
        return summary_view(summary, watch_findings(summary))

    return [
        (
            "watch live frame",
            lambda: frame_view(frames()[-1], 9.0, frame_signals(frames()[-1], load_config())),
        ),
        ("watch summary", summary_doc),
    ]


def _late_command_docs() -> list[tuple[str, object]]:
    """tune, profile, history and fleet: the commands that arrived after the interface."""
    import json

    from gpuwise.report.views import profile as profile_view
    from gpuwise.report.views import tune as tune_view
    from tests.tune.test_views import _profile_result, _tune_result

    def history_docs(which: str) -> Document:
        import tempfile

        from gpuwise.report.views.history import list_view, show_view, trend_view
        from gpuwise.store import records
        from gpuwise.store.history import History

        doc = json.loads(BENCH_FILE.read_text())
        with tempfile.TemporaryDirectory() as tmp, History(Path(tmp) / "h.db") as db:
            for _ in range(2):
                db.record(
                    "bench",
                    "host-1",
                    doc["created_at"],
                    records.facts_of("bench", doc),
                    records.metrics_of("bench", doc),
                    doc,
                )
            runs = db.runs()
            if which == "list":
                return list_view(runs, str(db.path))
            if which == "show":
                return show_view(db.get(runs[0].id))
            return trend_view("matmul_bf16", db.trend("matmul_bf16"), None)

    def fleet_doc() -> Document:
        import tempfile

        from gpuwise.fleet.analyze import analyze_fleet
        from gpuwise.report.views.fleet import fleet_view
        from tests.conftest import REAL
        from tests.fleet.fleet_kit import build_fleet

        if not REAL.is_dir():
            pytest.skip("the fleet fixture is built from the shared real recordings")
        with tempfile.TemporaryDirectory() as tmp:
            return fleet_view(analyze_fleet(build_fleet(Path(tmp) / "fleet")))

    return [
        ("tune", lambda: tune_view.view(_tune_result())),
        ("profile", lambda: profile_view.view(_profile_result())),
        ("history list", lambda: history_docs("list")),
        ("history show", lambda: history_docs("show")),
        ("history trend", lambda: history_docs("trend")),
        ("fleet report (16 nodes)", fleet_doc),
    ]


DOCS = [
    *_probe_docs(),
    *_doctor_docs(),
    ("bench h200", _bench_doc),
    ("bench collectives (gloo, this VM)", lambda: _bench_doc(COLLECTIVE_FILE)),
    ("compare", "tmp"),
    *_plan_docs(),
    *_catalog_docs(),
    ("capture", _capture_doc),
    *_watch_docs(),
    *_late_command_docs(),
]


def assert_intact(doc: Document, text: str, width: int = WIDTH) -> None:
    """The guarantee, checked on `text` (the Document rendered `width` columns wide)."""
    lines = text.splitlines()
    code = {line.strip() for block in doc.blocks if isinstance(block, Code) for line in block.lines}
    too_wide = [line for line in lines if len(line) > width and line.strip().removeprefix("$ ") not in code]
    assert not too_wide, too_wide[:3]
    # a too-wide table is shown as one record per row, named by its first cell without that header
    first_headers = {b.columns[0].header for b in doc.blocks if isinstance(b, Table) and b.columns}
    shown = [cell_text(c) for c in cells(doc) if not (isinstance(c, str) and c in first_headers)]
    assert text.count("…") <= sum(s.count("…") for s in shown), "something was truncated with …"
    cut = sorted(
        {
            word
            for s in shown
            for word in s.split()
            if len(word) <= width - 8 and not any(word in line for line in lines)
        }
    )
    assert not cut, f"split across lines or cut: {cut[:10]}"


@pytest.mark.parametrize("name,build", DOCS, ids=[name for name, _ in DOCS])
def test_every_command_fits_80_columns_with_nothing_cut(name, build, tmp_path):
    doc = _compare_doc(tmp_path) if build == "tmp" else build()
    text = render(doc, "text", width=WIDTH)
    assert_intact(doc, text)
    numbers = [w for c in cells(doc) for w in cell_text(c).split() if any(ch.isdigit() for ch in w)]
    assert numbers, f"{name}: no numbers shown at all?"


def _real_gpu_outputs() -> list[tuple[str, Path]]:
    """Real nvidia-smi XML and topology matrices (up to 10 GPUs with NICs), as a capture would hold them."""
    out = [("nvidia-smi-q-x", p) for p in real_files("nvidia_smi_xml", "*.xml")]
    return out + [("nvidia-smi-topo-m", p) for p in real_files("topo") if "topo-mp" not in p.name]


@pytest.mark.parametrize("command_id,path", _real_gpu_outputs(), ids=lambda v: getattr(v, "name", v))
def test_probe_and_doctor_on_real_gpu_outputs_fit_80_columns(real, tmp_path, command_id, path):
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.report.views.doctor import doctor_view
    from gpuwise.report.views.probe import probe_view
    from tests.advise.capture_kit import doctor_report, make_capture

    capture = make_capture(tmp_path / "c", {command_id: path.read_text(encoding="utf-8", errors="replace")})
    for doc in (probe_view(collect_facts(CaptureHost(capture))), doctor_view(doctor_report(capture))):
        assert_intact(doc, render(doc, "text", width=WIDTH))


def test_the_check_catches_a_cut_price():
    """The check must fail on what it guards against: Rich squeezing a price column to '$31,46…'."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table as RichTable

    doc = Document(
        "t", [Table([Column("instance"), Column("price", "right")], [["p5.48xlarge", "$31,464.00"]])]
    )
    squeezed = RichTable("instance", "price")
    squeezed.add_row("p5.48xlarge", "$31,464.00")
    squeezed.columns[1].no_wrap = True
    buf = StringIO()
    Console(file=buf, width=24, no_color=True).print(squeezed)
    assert "…" in buf.getvalue()
    with pytest.raises(AssertionError):
        assert_intact(doc, buf.getvalue(), width=24)
    assert_intact(doc, render(doc, "text", width=24), width=24)  # our renderer keeps it whole
