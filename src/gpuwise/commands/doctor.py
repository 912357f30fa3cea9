"""`gpuwise doctor` (what should I change, in what order?) and `gpuwise compare` (two reports
side by side)."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.history import HistoryOpt, NoHistoryOpt, record_run
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

DOCTOR_HELP = N_(
    "Rank what to change on this machine (or a capture), "
    "with evidence and exact commands.\n\nFindings are grouped by priority, "
    "which depends on the environment kind (cloud VM or your own hardware); "
    "each says whether you can change it here and what to do instead if not.\n\nExit codes: "
    "0 = no problems found, 1 = warnings, 2 = critical findings, 3 = doctor could not run or could not judge "
    "(no fact could be read)."
)


def _run_quick_bench():
    """Run gpuwise.bench in quick mode; the bench package is optional and imported only here."""
    from gpuwise.errors import MissingDependencyError

    try:
        from gpuwise.bench.context import BenchOptions
        from gpuwise.bench.registry import select
        from gpuwise.commands.progress import run_bench_with_progress
    except ImportError as exc:
        raise MissingDependencyError(
            _("--bench quick needs gpuwise's benchmark module, which could not be imported ({exc}).").format(
                exc=exc
            ),
            _(
                "run `gpuwise bench --save bench.json` separately and pass --bench-results bench.json, "
                "or reinstall gpuwise with `pip install 'gpuwise[bench]'`"
            ),
        ) from exc
    # the bench command's Rich progress bar (stderr), so a minute of benchmarking is not silent
    return run_bench_with_progress(BenchOptions(mode="quick"), None, len(select(None)))


def doctor(
    source: Path = typer.Option(
        None, "--from", help=N_("Diagnose a capture (directory or .tar.gz) instead of this machine.")
    ),
    bench: str = typer.Option(
        "none", "--bench", help=N_("Measure too: none or quick (runs `gpuwise bench --quick` first).")
    ),
    bench_results: Path = typer.Option(
        None, "--bench-results", help=N_("Use measurements from a gpuwise bench JSON file.")
    ),
    env: str = typer.Option("auto", "--env", help=N_("Environment kind: auto (detect), cloud or onprem.")),
    expect: str = typer.Option(
        None,
        "--expect",
        metavar="KEY=N,...",
        help=N_(
            "What this node must have, e.g. gpus=8,ib=4,pcie_width=16: a mismatch is a critical finding."
        ),
    ),
    expect_gpus: int = typer.Option(
        None, "--expect-gpus", min=0, metavar="N", help=N_("Same as --expect gpus=N.")
    ),
    nccl_log: list[Path] = typer.Option(
        None,
        "--nccl-log",
        metavar="FILE",
        help=N_("nccl-tests output (table or -J JSON) or an NCCL_DEBUG=INFO log of your job; repeatable."),
    ),
    evidence: list[Path] = typer.Option(
        None,
        "--evidence",
        metavar="FILE",
        help=N_(
            "A log or tool output of the node, kind detected: dcgmi diag (table or -j), Fabric Manager log, "
            "kernel log (dmesg, journalctl -k, syslog), ibstat / ibstatus / ibv_devinfo / ibdev2netdev, "
            "nccl-tests output or NCCL_DEBUG=INFO log; repeatable."
        ),
    ),
    profile: list[Path] = typer.Option(
        None,
        "--profile",
        metavar="FILE",
        help=N_("A step profile (`gpuwise profile --format json -o FILE`, gpuwise-profile/1); repeatable."),
    ),
    stability: Path = typer.Option(
        None,
        "--stability",
        metavar="FILE",
        help=N_("A `gpuwise stability --save FILE` result of this machine: unstable layers become findings."),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
    history: Path = HistoryOpt,
    no_history: bool = NoHistoryOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    fmt = output_format(fmt, as_json)
    for name, value, allowed in (
        ("--bench", bench, ("none", "quick")),
        ("--env", env, ("auto", "cloud", "onprem")),
    ):
        if value not in allowed:
            raise UserInputError(
                _("{name} {value!r} is not one of {join}").format(
                    name=name, value=value, join=", ".join(allowed)
                ),
                _("use {name} {allowed} (or {join})").format(
                    name=name, allowed=allowed[0], join=", ".join(allowed[1:])
                ),
            )
    if bench == "quick" and bench_results is not None:
        raise UserInputError(_("--bench quick and --bench-results both given"), _("use one of them"))
    if bench == "quick" and source is not None:
        raise UserInputError(
            _("--bench quick measures this machine, not a capture"),
            _(
                "run the benchmark on the captured node (gpuwise bench --save bench.json) and pass "
                "--bench-results bench.json"
            ),
        )

    from gpuwise.advise.expect import parse_expect

    expected = parse_expect(expect) if expect else {}
    if expect_gpus is not None:
        expected["gpus"] = expect_gpus

    from gpuwise.capture.host import CaptureHost, LiveHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.pipeline import diagnose

    check_output(output)
    from gpuwise.bench.report_file import read_bench_report

    bench_report = read_bench_report(bench_results, "--bench-results") if bench_results is not None else None
    from gpuwise.bench.nccl_files import merge_into, read_nccl_files

    nccl_measurements, nccl_logs = read_nccl_files(list(nccl_log or []))
    from gpuwise.profile.model import read_profiles

    profiles = tuple(read_profiles(list(profile or [])))
    from gpuwise.stability.document_file import read_stability

    stability_report = read_stability(stability, "--stability") if stability is not None else None
    host = CaptureHost(source) if source else LiveHost()
    facts = collect_facts(host)
    if evidence:
        from gpuwise.commands.evidence_files import read_evidence

        more_measurements, more_logs = read_evidence(list(evidence), facts)
        nccl_measurements += more_measurements
        nccl_logs += more_logs
    if bench == "quick":
        bench_report = _run_quick_bench()
    report = diagnose(
        facts, merge_into(bench_report, nccl_measurements), env, tuple(nccl_logs), expected, profiles,
        stability=stability_report,
    )  # fmt: skip
    from gpuwise.report.views.doctor import doctor_view

    emit(doctor_view(report), fmt, output, note=report.summary.verdict)
    record_run("doctor", report.to_json_dict(), history, no_history)
    # sys.exit, not typer.Exit: cli.main runs the app with standalone_mode=False, where click turns
    # typer.Exit into a return value that main() does not pass on, and the documented code would be lost.
    import sys

    sys.exit(report.summary.exit_code)


COMPARE_HELP = N_(
    """\
Compare two machines or two runs: facts that differ, measurements with B/A, one-sided findings.

A and B are files from `gpuwise doctor --format json -o FILE` or `gpuwise bench --save FILE`
(two reports, two bench results, or one of each: then only measurements are compared). Each
measurement in both is marked improvement, regression or within noise when both runs repeated it
(the ranges [min, max] of the repeats overlap: within noise; with 5+ samples each, a Mann-Whitney U
test), or "no noise bound" after a single repeat. --format json prints schema gpuwise-compare/1.

Exit codes: 0 = compared (differences are not errors); 1 = --fail-on-regression and a measurement
regressed beyond the noise; 3 = a file cannot be read or is not a gpuwise report or bench JSON, the
files have nothing in common to compare, or --fail-on-regression found no measurement it could judge."""
)


def compare(
    a: Path = typer.Argument(..., metavar="A.json", help=N_("First report or bench JSON (A).")),
    b: Path = typer.Argument(..., metavar="B.json", help=N_("Second report or bench JSON (B).")),
    fail_on_regression: bool = typer.Option(
        False,
        "--fail-on-regression",
        help=N_(
            "Exit 1 when a measurement of B regressed beyond the noise (for CI); 3 when none can be judged."
        ),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    import sys

    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import EXIT_WARNINGS, UserInputError
    from gpuwise.report.compare import NO_NOISE_BOUND, compare_files
    from gpuwise.report.views.compare import compare_view

    fmt = output_format(fmt, as_json)
    check_output(output)
    comparison = compare_files(a, b)
    reports = comparison.kind_a == comparison.kind_b == "report"
    if not reports and not comparison.in_common:
        raise UserInputError(
            _("{a} and {b} have no measurement in common: there is nothing to compare").format(a=a, b=b),
            _("compare two runs of the same benchmarks (the same --only), or two doctor reports"),
        )
    emit(compare_view(comparison), fmt, output)
    if not fail_on_regression:
        return
    if comparison.regressions:
        typer.secho(
            _("--fail-on-regression: {n} measurement(s) regressed beyond the noise: {names}").format(
                n=len(comparison.regressions), names=", ".join(m.name for m in comparison.regressions)
            ),
            err=True,
            fg="yellow",
        )
        sys.exit(EXIT_WARNINGS)
    if all(m.verdict == NO_NOISE_BOUND for m in comparison.in_common):
        raise UserInputError(
            _(
                "--fail-on-regression: no measurement in common was repeated in both runs, so none can be judged"
            ),
            _(
                "run the benchmarks with repeats (gpuwise bench records min/max of its repeats) and compare again"
            ),
        )


def register(app: typer.Typer) -> None:
    app.command("doctor", help=DOCTOR_HELP)(doctor)
    app.command("compare", help=COMPARE_HELP)(compare)
