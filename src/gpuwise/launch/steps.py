"""The shell every target runs on each node: preflight, exporter, exporter check, dataset check.

Written once here and embedded by each target (the sbatch script, SkyPilot's setup/run, Tencent's
user data), so the three targets run the same checks. Each snippet expects these variables:
GPUWISE (the gpuwise command), PYTHON, OUT (the folder for reports, shared or per node) and NODE.
"""

from __future__ import annotations

from gpuwise.i18n import joined
from gpuwise.launch.job import Job
from gpuwise.launch.quoting import sh, sh_say, yaml_document

EXPORTER_WAIT_S = 60


def preflight(job: Job) -> str:
    """This node's own checks: `dcgmi diag -r 1` when dcgmi is on PATH (its JSON read by doctor --evidence,
    which judges every GPU and test, never DCGM's summary line), then `gpuwise doctor --expect`; a critical
    finding (exit 2) or a failed run aborts. Report: $OUT/preflight/$NODE.json."""
    expect = sh(job.preflight_expect())
    return joined(
        "\n",
        [
            'mkdir -p "$OUT/preflight" && rm -f "$OUT/preflight/$NODE.json" "$OUT/preflight/$NODE.dcgmi.json"',
            dcgm_diag(),
            f'"$GPUWISE" doctor --expect {expect} ${{DCGM_EVIDENCE:+--evidence "$DCGM_EVIDENCE"}} --no-history '
            '--format json -o "$OUT/preflight/$NODE.json"',
            "rc=$?",
            'if [ "$rc" -ge 2 ]; then',
            '  echo "gpuwise preflight: $NODE is not fit to train (doctor exit $rc); '
            'report: $OUT/preflight/$NODE.json" >&2',
            "  exit 1",
            "fi",
            'echo "gpuwise preflight: $NODE ok (doctor exit $rc)"',
        ],
    )


def dcgm_diag() -> str:
    """`dcgmi diag -r 1 -j` when dcgmi is here; DCGM_EVIDENCE names its JSON when it gave a result (dcgmi exits
    non-zero when a test fails, so its output, not its exit code, says whether it ran)."""
    out = '"$OUT/preflight/$NODE.dcgmi.json"'
    return joined(
        "\n",
        [
            "DCGM_EVIDENCE=",
            "if command -v dcgmi >/dev/null 2>&1; then",
            f"  timeout 600 dcgmi diag -r 1 -j > {out} 2>&1",
            f"  if grep -qE '\"DCGM|[|] Diagnostic' {out}; then DCGM_EVIDENCE={out}; else",
            f'    echo "gpuwise preflight: dcgmi diag -r 1 gave no result on $NODE: $(head -c 300 {out})" >&2; fi',
            "fi",
        ],
    )


def allocation_check(job: Job, nodes: str, rank: str, rated_gb_s: float | None = None) -> str:
    """The cross-node check (fleet/allocation.py) on this node: reach the head, all-reduce, pairwise links.
    nodes: shell words that give the allocation's host names, head first; rank: this node's index."""
    rated = f" --rated-gb-s {rated_gb_s:g}" if rated_gb_s else ""
    return joined(
        "\n",
        [
            'rm -f "$OUT/preflight/$NODE.allocation.json"',
            f'exec "$PYTHON" -m gpuwise.fleet.allocation --nodes {nodes} --rank {rank} --port {job.rdzv_port} '
            f'--out "$OUT/preflight"{rated}',
        ],
    )


def dataset_check(job: Job, path: str) -> str:
    """The dataset must be readable on the node before hours of allocation start."""
    p = sh(path)
    say = sh_say("gpuwise preflight: dataset %s is not readable on %s", p, '"$NODE"', err=True)
    return f"if [ ! -r {p} ]; then {say}; exit 1; fi"


def user_setup(job: Job) -> str:
    """The job's own setup commands (shell by design), run by their own `bash -e` so that they cannot change
    the structure of the generated script around them (end a `case` branch, skip the preflight)."""
    return f"bash -e -c {sh(chr(10).join(job.setup))}"


def exporter(job: Job, textfile: bool) -> str:
    """The exporter command (serves :PORT on every interface, or writes a textfile for node_exporter); its GPU
    series carry the job's id, name and node rank from the step's Slurm/torchrun/SkyPilot variables (--job-labels)."""
    if textfile:
        return (
            'mkdir -p "$OUT/monitoring/textfile-$NODE" && exec "$GPUWISE" export --job-labels --textfile '
            '"$OUT/monitoring/textfile-$NODE" --interval 15'
        )
    return f'exec "$GPUWISE" export --job-labels --listen :{job.exporter_port}'


def exporter_check(job: Job, textfile: bool) -> str:
    """Wait until this node's exporter answers, and keep what it said (proof, and a first sample)."""
    if textfile:
        target = '"$OUT/monitoring/textfile-$NODE/gpuwise.prom"'
        return joined(
            "\n",
            [
                f"for _ in $(seq {EXPORTER_WAIT_S * 2}); do [ -s {target} ] && break; sleep 0.5; done",
                f'if [ -s {target} ]; then cp {target} "$OUT/monitoring/$NODE.prom"; '
                'echo "gpuwise monitoring: $NODE textfile written"; '
                'else echo "gpuwise monitoring: no textfile from $NODE" >&2; fi',
            ],
        )
    url = f"http://127.0.0.1:{job.exporter_port}/metrics"
    fetch = (
        "import sys, time, urllib.request\n"
        f"for _ in range({EXPORTER_WAIT_S * 2}):\n"
        "    try:\n"
        f'        sys.stdout.write(urllib.request.urlopen("{url}", timeout=2).read().decode()); break\n'
        "    except OSError: time.sleep(0.5)\n"
        "else: sys.exit(1)\n"
    )
    return joined(
        "\n",
        [
            'mkdir -p "$OUT/monitoring"',
            f'if "$PYTHON" -c {sh(fetch)} > "$OUT/monitoring/$NODE.prom"; then',
            f'  echo "gpuwise monitoring: exporter on $NODE answered on :{job.exporter_port}"',
            "else",
            f'  echo "gpuwise monitoring: exporter on $NODE did not answer on :{job.exporter_port}" >&2',
            "fi",
        ],
    )


def scrape_config(job: Job, targets: list[str] | None, file_sd: str | None = None) -> str:
    """A Prometheus scrape_configs entry for the job's exporters."""
    entry: dict = {"job_name": f"gpuwise-{job.name}", "scrape_interval": "15s"}
    if (
        file_sd
    ):  # its targets carry job labels; where an exporter's series has its own (--job-labels), they win
        entry["honor_labels"] = True
        entry["file_sd_configs"] = [{"files": [file_sd]}]
    else:
        entry["static_configs"] = [{"targets": [f"{t}:{job.exporter_port}" for t in targets or []]}]
    return yaml_document({"scrape_configs": [entry]}).rstrip("\n")


def env_exports(job: Job, dataset_path: str | None) -> list[str]:
    """The job's environment, plus GPUWISE_DATASET: where the training script finds the data on this target."""
    out = [f"export {k}={sh(v)}" for k, v in job.env.items()]  # k: an environment name (job.py checks it)
    if dataset_path:
        out.append(f"export GPUWISE_DATASET={sh(dataset_path)}")
    return out
