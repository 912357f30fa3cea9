"""What a hostile YAML file of a given size costs `gpuwise plan`: wall time and peak RSS, per shape.

    python benchmarks/yaml_input_limits.py                    # 1, 4, 16 and 64 MiB (the input limit)
    python benchmarks/yaml_input_limits.py --sizes 0.25,0.5,1 --pythonpath /tmp/old/src   # another gpuwise

Each case writes a file of that size in a temp dir (streamed, never built in memory), runs
`python -c 'from gpuwise.cli import main; main()' plan FILE` in a child, and reads the child's peak RSS
and wall time from os.wait4(); a child still running after --timeout seconds is killed and reported
as such. Shapes: a long flow list (the issue's case), a long block list, many keys, one huge value,
deep nesting, a long flow list of numbers with 5,000 digits, and a file with just under MAX_NODES
values (what a file that passes every bound can cost).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MiB = 1024 * 1024
HEAD = "name: hostile\nmodel:\n  params: 1.0e9\n"


def _fill(fh, unit: str, size: int) -> None:
    chunk = unit * max(1, (1 << 20) // len(unit))
    written = 0
    while written + len(chunk) <= size:
        fh.write(chunk)
        written += len(chunk)
    fh.write(unit * ((size - written) // len(unit)))


def write_case(path: Path, shape: str, size: int) -> None:
    """A file of at most `size` bytes (the header and closing brackets included)."""
    size -= len(HEAD) + 16
    with open(path, "w") as fh:
        fh.write(HEAD)
        if shape == "flow-list":
            fh.write("flows: [")
            _fill(fh, "0, ", size)
            fh.write("0]\n")
        elif shape == "under-limits":  # the most values allowed (MAX_NODES), in any file size
            from gpuwise.catalog.yamlfile import MAX_NODES

            fh.write("flows: [" + "0, " * (MAX_NODES - 20) + "0]\n")
        elif shape == "block-list":
            fh.write("flows:\n")
            _fill(fh, "- 0\n", size)
        elif shape == "many-keys":
            n = size // len("k00000000: 0\n")
            for start in range(0, n, 100_000):
                fh.write("".join(f"k{i:08d}: 0\n" for i in range(start, min(n, start + 100_000))))
        elif shape == "long-value":
            fh.write("notes: ")
            _fill(fh, "a", size)
            fh.write("\n")
        elif shape == "deep-nesting":
            depth = size // 2
            fh.write("x: ")
            _fill(fh, "[", depth)
            _fill(fh, "]", depth)
            fh.write("\n")
        elif shape == "huge-ints":
            fh.write("flows: [")
            _fill(fh, "9" * 5000 + ", ", size - 5002)
            fh.write("0]\n")
        else:
            raise SystemExit(f"unknown shape {shape}")


def run(path: Path, pythonpath: str | None, timeout: float) -> tuple[int | str, float, float, str]:
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else dict(os.environ)
    env["GPUWISE_HISTORY"] = os.devnull
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from gpuwise.cli import main; main()", "plan", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            killed = True
            break
        time.sleep(0.02)
    seconds = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace").strip().splitlines() if proc.stderr else []
    rc: int | str = "killed" if killed else os.waitstatus_to_exitcode(status)
    return rc, seconds, usage.ru_maxrss / 1024, (err[0] if err else "")[:110]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,4,16,64", help="MiB, comma-separated")
    ap.add_argument(
        "--shapes", default="flow-list,block-list,many-keys,long-value,deep-nesting,huge-ints,under-limits"
    )
    ap.add_argument("--pythonpath", help="run the gpuwise found here (e.g. an older checkout's src/)")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    print(f"{'shape':<13} {'MiB':>6} {'exit':>6} {'seconds':>8} {'peak MiB':>9}  message")
    with tempfile.TemporaryDirectory(prefix="gw-yaml-") as tmp:
        for shape in args.shapes.split(","):
            for mib in (float(x) for x in args.sizes.split(",")):
                path = Path(tmp) / f"{shape}.yaml"
                write_case(path, shape, int(mib * MiB))
                rc, seconds, peak, message = run(path, args.pythonpath, args.timeout)
                print(f"{shape:<13} {mib:>6g} {rc!s:>6} {seconds:>8.2f} {peak:>9.0f}  {message}", flush=True)
                path.unlink()


if __name__ == "__main__":
    main()
