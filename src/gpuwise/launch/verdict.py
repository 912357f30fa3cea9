"""The preflight's verdict for one allocation: which node failed which check, and the nodes to exclude.

Reads what the preflight steps left in OUT/preflight: each node's doctor report (<node>.json, its failed
findings, dcgmi diag's per-GPU results among them) and allocation check (<node>.allocation.json, from
fleet/allocation.py: reach, all-reduce, links; the head's file names the nodes it judged). Writes
verdict-<job>.json and prints one line per failure. Exit 0: every node passed; 1: the failures are pinned
on some nodes (exclude them and resubmit); 2: they are not (every node failed, or a check failed on no
particular node), so a resubmission on other nodes would not help.

    python -m gpuwise.launch.verdict OUT/preflight --nodes "n1 n2" --job 1234 [--exclude-file FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpuwise.atomic import write_text_atomic
from gpuwise.documents.ids import PREFLIGHT_VERDICT_SCHEMA

SCHEMA = PREFLIGHT_VERDICT_SCHEMA


def _read(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def judge(folder: Path, nodes: list[str]) -> dict:
    """{nodes, failed: [{node, check, reason}], unpinned: [reason]} for the allocation."""
    failed: list[dict] = []
    unpinned: list[str] = []
    for node in nodes:
        report = _read(folder / f"{node}.json")
        if report is None:
            failed.append(
                {"node": node, "check": "doctor", "reason": "no doctor report (the step did not run)"}
            )
        else:
            for f in report.get("findings") or []:
                if isinstance(f, dict) and f.get("status") == "fail":
                    failed.append(
                        {"node": node, "check": "doctor", "reason": f"{f.get('id')}: {f.get('title')}"}
                    )
    if len(nodes) > 1:
        checks = {n: _read(folder / f"{n}.allocation.json") for n in nodes}
        head = checks[nodes[0]]
        missing = [n for n, doc in checks.items() if doc is None]
        if len(missing) == len(nodes):
            unpinned.append("the allocation check ran on no node (see the job's log)")
        elif head is None:
            failed.append(
                {"node": nodes[0], "check": "reach", "reason": "the head wrote no allocation check"}
            )
        else:
            unreached = [f for f in head.get("failed") or [] if f.get("check") == "reach"]
            if (
                len(nodes) >= 3 and len(unreached) == len(nodes) - 1
            ):  # no node reached the head: the head is cut off
                failed.append({"node": nodes[0], "check": "reach", "reason": "no other node reached it"})
            else:
                failed.extend(f for f in head.get("failed") or [] if f.get("node") in nodes)
            for c in head.get("checks") or []:
                if c.get("status") == "fail" and not head.get("failed"):
                    unpinned.append(f"{c.get('check')}: {c.get('reason')}")
        for n, doc in checks.items():
            if n == nodes[0] or doc is None:
                continue
            for f in doc.get("failed") or []:
                if f.get("node") == n and not any(
                    x["node"] == n and x["check"] == f.get("check") for x in failed
                ):
                    failed.append(f)
    bad = sorted({f["node"] for f in failed})
    if bad and len(bad) == len(nodes):
        unpinned.append("every node failed: a problem of the job or the image, not of one node")
    return {"schema": SCHEMA, "nodes": nodes, "failed": failed, "exclude": bad, "unpinned": unpinned}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpuwise.launch.verdict", description=__doc__.split("\n")[0])
    p.add_argument("folder")
    p.add_argument("--nodes", required=True, help="the allocation's host names (space or comma)")
    p.add_argument("--job", default="job", help="the job id (names verdict-<job>.json)")
    p.add_argument("--exclude-file", help="write the nodes to exclude here, comma-separated")
    args = p.parse_args(argv)
    folder = Path(args.folder)
    doc = judge(folder, args.nodes.replace(",", " ").split())
    doc["job"] = args.job
    write_text_atomic(folder / f"verdict-{args.job}.json", json.dumps(doc, indent=1))
    for f in doc["failed"]:
        print(f"gpuwise preflight: {f['node']} failed {f['check']}: {f['reason']}")
    for reason in doc["unpinned"]:
        print(f"gpuwise preflight: not pinned on a node: {reason}")
    if args.exclude_file:
        write_text_atomic(args.exclude_file, ",".join(doc["exclude"]) + "\n")
    if not doc["failed"] and not doc["unpinned"]:
        print(f"gpuwise preflight: all {len(doc['nodes'])} nodes passed")
        return 0
    return 2 if doc["unpinned"] else 1


if __name__ == "__main__":
    sys.exit(main())
