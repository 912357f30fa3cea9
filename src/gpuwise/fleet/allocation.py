"""The allocation check before a job: every node reaches the head, a short all-reduce, the pairwise link test.

One process per node (the launch's preflight runs it with srun); rank r is the r-th name of --nodes, whose
first name is the head. Steps, each bounded by --timeout, so that a dead peer fails the check, never hangs it:
1. reach: every rank connects to a TCP store on the head and checks in; the head names the ranks that
   did not (a rank that cannot connect says so in its own file);
2. all-reduce: a tensor of ones over the whole allocation (NCCL on GPUs, gloo on CPUs) must sum to N;
3. links: the pairwise link test (fleet/linktest.py). A node whose best pair in either direction is below the
   floor fails: a fraction of the fabric's rated speed (--rated-gb-s, from the catalog), else, with three
   nodes or more, a fraction of the other nodes' median (thresholds.yaml). Two nodes without a rating share
   their only pair, so a slow link is reported but pinned on neither.
Each rank writes OUT/<node>.allocation.json (schema gpuwise-allocation/1): its checks and, on the head,
`failed`: [{node, check, reason}] for the whole allocation; the head also writes OUT/links.json.

    python -m gpuwise.fleet.allocation --nodes "n1 n2" --rank 0 --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

from gpuwise.documents.ids import ALLOCATION_SCHEMA

SCHEMA = ALLOCATION_SCHEMA


def _parse(argv: list[str] | None) -> argparse.Namespace:
    from gpuwise.bench.sizes import parse_sizes

    p = argparse.ArgumentParser(prog="python -m gpuwise.fleet.allocation", description=__doc__.split("\n")[0])
    p.add_argument("--nodes", required=True, help="the allocation's host names, head first (space or comma)")
    p.add_argument("--rank", type=int, required=True, help="this node's index in --nodes")
    p.add_argument("--port", type=int, default=29500, help="the head's TCP store port")
    p.add_argument("--out", required=True, help="folder for <node>.allocation.json and links.json")
    p.add_argument("--bytes", default="16M", help="link test buffer per transfer (default 16M)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    p.add_argument("--rated-gb-s", type=float, help="the fabric's rated GB/s per node (catalog)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds each step waits for the others")
    args = p.parse_args(argv)
    args.nodes = args.nodes.replace(",", " ").split()
    args.bytes = parse_sizes(args.bytes)[-1]
    if not 0 <= args.rank < len(args.nodes):
        p.error(f"--rank {args.rank} is not an index of --nodes ({len(args.nodes)} names)")
    return args


def link_failures(
    pairs: list[dict], nodes: list[str], rated_gb_s: float | None
) -> tuple[list[dict], list[str]]:
    """(failed, notes) for the link test: each node's best received and sent pair against the floor."""
    from gpuwise.fleet.thresholds import value

    best: dict[str, dict[str, float]] = {"receive": {}, "send": {}}
    for p in pairs:
        best["receive"][p["dst"]] = max(best["receive"].get(p["dst"], 0.0), p["best_gb_s"])
        best["send"][p["src"]] = max(best["send"].get(p["src"], 0.0), p["best_gb_s"])
    failed, notes = [], []
    if rated_gb_s is None and len(nodes) < 3:
        notes.append("two nodes and no rated fabric speed: a slow link cannot be pinned on either end")
        return failed, notes
    for node in nodes:
        for direction, per_node in best.items():
            if node not in per_node:
                continue
            got = per_node[node]
            if rated_gb_s is not None:
                floor = value("preflight_link_fraction_of_rated") * rated_gb_s
                basis = (
                    f"{value('preflight_link_fraction_of_rated'):g} x the fabric's rated {rated_gb_s:g} GB/s"
                )
            else:
                others = [v for n, v in per_node.items() if n != node]
                floor = value("small_fleet_ratio") * statistics.median(others)
                basis = f"{value('small_fleet_ratio'):g} x the other nodes' median"
            if got < floor:
                failed.append({"node": node, "check": "links",
                               "reason": f"best {direction} pair {got:.3g} GB/s < {floor:.3g} GB/s ({basis})"})  # fmt: skip
    return failed, notes


def _go(store, timeout_s: float) -> bool:
    """Whether the head says every node checked in (it answers within its own timeout of the start)."""
    try:
        store.wait(["go"], timedelta(seconds=2 * timeout_s + 10))
        return store.get("go") == b"yes"
    except Exception:  # noqa: BLE001 - the head went away: not this node's failure, the head's file says why
        return False


def run(args: argparse.Namespace) -> dict:
    import torch
    import torch.distributed as dist

    from gpuwise.fleet import linktest

    nodes, rank, world = args.nodes, args.rank, len(args.nodes)
    doc: dict = {
        "schema": SCHEMA,
        "node": nodes[rank],
        "rank": rank,
        "nodes": nodes,
        "checks": [],
        "failed": [],
    }
    timeout = timedelta(seconds=args.timeout)
    head = f"{nodes[0]}:{args.port}"
    try:
        store = dist.TCPStore(nodes[0], args.port, world, rank == 0, timeout=timeout, wait_for_workers=False)
    except Exception as exc:  # noqa: BLE001 - any failure to reach the head is this check's result
        reason = f"cannot reach the head {head}: {type(exc).__name__}: {str(exc)[:300]}"
        doc["checks"].append({"check": "reach", "status": "fail", "reason": reason})
        doc["failed"].append({"node": nodes[rank], "check": "reach", "reason": reason})
        return doc
    store.set(f"hello/{rank}", nodes[rank])
    if rank == 0:
        deadline = time.monotonic() + args.timeout
        missing = list(range(1, world))
        while missing and time.monotonic() < deadline:
            missing = [r for r in missing if not store.check([f"hello/{r}"])]
            if missing:
                time.sleep(0.2)
        for r in missing:
            doc["failed"].append({"node": nodes[r], "check": "reach",
                                  "reason": f"did not check in at the head {head} within {args.timeout:g} s"})  # fmt: skip
        store.set("go", "no" if missing else "yes")
        doc["checks"].append({"check": "reach", "status": "fail" if missing else "pass",
                              "reason": f"{world - len(missing)} of {world} nodes checked in"})  # fmt: skip
        if missing:
            return doc
    elif not _go(store, args.timeout):
        doc["checks"].append(
            {"check": "reach", "status": "pass", "reason": f"reached {head}; another node did not"}
        )
        return doc
    else:
        doc["checks"].append({"check": "reach", "status": "pass", "reason": f"reached {head}"})
    backend, device = linktest.pick_backend(args.backend)
    try:
        dist.init_process_group(
            backend, store=dist.PrefixStore("pg", store), rank=rank, world_size=world, timeout=timeout
        )
        ones = torch.ones(1024, dtype=torch.float32, device=device)
        start = time.perf_counter()
        dist.all_reduce(ones)
        seconds = time.perf_counter() - start
        total = float(ones[0].item())
        ok = total == float(world)
        doc["checks"].append({"check": "allreduce", "status": "pass" if ok else "fail", "backend": backend,
                              "seconds": seconds, "reason": f"sum {total:g}, expected {world}"})  # fmt: skip
        if not ok:
            return doc
        links = linktest.measure(args.bytes, args.repeats, backend, device, hosts=list(nodes))
    except Exception as exc:  # noqa: BLE001 - a collective that breaks is this check's result
        doc["checks"].append({"check": "allreduce", "status": "fail",
                              "reason": f"{type(exc).__name__}: {str(exc)[:300]}"})  # fmt: skip
        return doc
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    if links is not None:  # the head: judge every node's links
        from gpuwise.atomic import write_text_atomic

        write_text_atomic(Path(args.out) / "links.json", json.dumps(links, indent=1))
        failed, notes = link_failures(links["pairs"], nodes, args.rated_gb_s)
        doc["failed"].extend(failed)
        doc["checks"].append({"check": "links", "status": "fail" if failed else "pass",
                              "reason": "; ".join(notes) or f"{len(links['pairs'])} pairs measured"})  # fmt: skip
    return doc


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        doc = run(args)
    except ImportError as exc:
        print(f"gpuwise allocation check: needs torch on this node ({exc})", file=sys.stderr)
        return 2
    from gpuwise.atomic import write_text_atomic

    os.makedirs(args.out, exist_ok=True)
    write_text_atomic(Path(args.out) / f"{doc['node']}.allocation.json", json.dumps(doc, indent=1))
    for c in doc["checks"]:
        print(f"gpuwise allocation check: {doc['node']} {c['check']}: {c['status']} ({c['reason']})")
    failed = [c for c in doc["checks"] if c["status"] == "fail"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
