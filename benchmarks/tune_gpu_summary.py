"""What a `gpuwise tune --format json` run found, in a few lines: the fp32 baseline, the winner's speedup
with its interval and the knobs that gave it, and each one-knob probe's speedup (which knob buys what).

    python benchmarks/tune_gpu_summary.py tune-gpt.json     # benchmarks/gpu_check.sh appends it to summary.txt
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _changes(changes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in changes.items()) or "(baseline)"


def _speedup(t: dict) -> str:
    if t.get("speedup") is None:
        return f"{t['status']}" + (f" ({t['failure']}: {t.get('reason') or ''})" if t.get("failure") else "")
    return f"{t['speedup']:.2f}x [{t['speedup_low']:.2f}-{t['speedup_high']:.2f}]"


def summary(doc: dict) -> list[str]:
    if doc.get("schema") != "gpuwise-tune/1":
        raise SystemExit(f"not a gpuwise-tune/1 document (schema: {doc.get('schema')!r})")
    trials = doc["trials"]
    base = next((t for t in trials if t["role"] == "baseline"), None)
    lines = [
        f"tune {doc['workload']} on {doc['device']} x{doc['nproc']}, batch {doc['batch_size']}: baseline "
        + (f"{base['samples_per_s']:.1f} samples/s" if base and base.get("samples_per_s") else "did not run")
        + (f", drift {doc['baseline_drift']:.1%}" if doc.get("baseline_drift") is not None else "")
    ]
    winner = next((t for t in trials if t["number"] == doc.get("winner")), None)
    if winner:
        lines.append(
            f"winner trial {winner['number']}: {_speedup(winner)} from {_changes(winner['changes'])}; "
            f"numerics {winner['numerics']}, guard {'ok' if winner.get('guard_ok') else 'flagged'}"
        )
    else:
        lines.append(f"no winner: {doc.get('verdict', '')}")
    probes = [t for t in trials if t["role"] == "probe"]
    if probes:
        lines.append(
            "one-knob probes: " + " | ".join(f"{_changes(t['changes'])} {_speedup(t)}" for t in probes)
        )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        doc = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read {argv[1]}: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
