"""Validation (b): measured data-parallel scaling over an emulated slow network vs the planner's prediction.

    sudo python benchmarks/validate_netns_scaling.py [--ranks 4] [--rates 1000,200] [--steps 12]

What it does (needs root; skips with a message otherwise):
1. Builds network namespaces: one per rank plus a hub namespace with a Linux bridge; each rank is joined
   to the hub by a veth pair. `tc tbf` limits both directions of every veth to the link rate (Mbit/s).
2. Latency: this kernel has no `netem`, so no delay is added. The link's real round-trip time is
   MEASURED (TCP ping-pong through the same veth/bridge/tbf path) and given to the model as α = RTT/2.
3. Runs a real data-parallel training step (torch DDP, gloo backend, an MLP, 1 CPU thread per rank),
   interleaved: 1 rank alone; N ranks in N namespaces all computing in lockstep WITHOUT the all-reduce
   (`no_sync`: ranks that share this host's cores slow each other, GPUs would not); N ranks with DDP.
   Before training, the N-rank DDP run also times gloo all-reduces of 4 KiB-4 MiB over the same links.
4. Measured network efficiency E = T(N ranks, no all-reduce) / T(N ranks, DDP) (weak scaling: same
   batch per rank). Predicted E = the planner's perf model (gpuwise.plan.perf.evaluate) for N nodes of
   one "GPU", compute per step = the lockstep no-all-reduce step, fp32 gradients in DDP's buckets
   (1 MiB first bucket, then bucket_cap_mb) overlapped with backward by the bucket schedule, straggler
   term 0; the link twice: (a) nominal rate × the sourced NCCL-over-TCP achieved-fraction range
   (low / typical / high), (b) calibrated from the measured all-reduce (α–β fit, as `plan --calibrate`).
5. Prints the error per case and removes every namespace it made, always (also on Ctrl-C or timeout).

Everything is bounded: each training run has a subprocess timeout and the whole script a deadline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SUBNET = "10.213.7"
PORT = 29517
BUCKET_MB = 4.0  # DDP bucket_cap_mb used by the workers and given to the model


# ----------------------------------------------------------------------------- worker (runs inside a namespace)
def worker(args) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    torch.manual_seed(0)
    rtt = None
    if args.world > 1:
        rtt = _rtt_probe(args.rank, f"{SUBNET}.1", PORT + 1)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://{SUBNET}.1:{PORT}",
        rank=args.rank,
        world_size=args.world,
        timeout=__import__("datetime").timedelta(seconds=60),
    )
    if args.world > 1:  # rank 1 measured the RTT; give it to rank 0, which writes the result
        shared = torch.tensor([rtt or 0.0], dtype=torch.float64)
        dist.all_reduce(shared, op=dist.ReduceOp.MAX)
        rtt = float(shared.item()) or None
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU()]
    table = _allreduce_table(dist, torch) if args.probe_allreduce else []
    model = DDP(torch.nn.Sequential(*layers), bucket_cap_mb=BUCKET_MB)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(args.batch, args.hidden), torch.randn(args.batch, args.hidden)
    times = []
    import contextlib

    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        with (
            model.no_sync() if args.no_sync else contextlib.nullcontext()
        ):  # no_sync: compute only, no all-reduce
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    dist.barrier()
    if args.rank == 0:
        params = sum(p.numel() for p in model.parameters())
        Path(args.out).write_text(
            json.dumps({"times": times, "params": params, "rtt_s": rtt, "table": table})
        )
    dist.destroy_process_group()


def _allreduce_table(dist, torch, sizes=(1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22)) -> list[dict]:
    """Median time of gloo all-reduces of fp32 tensors over the links, per size (as nccl-tests reports)."""
    rows = []
    for size in sizes:
        t = torch.ones(size // 4)
        dist.all_reduce(t)  # warm-up
        samples = []
        for _ in range(5):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            samples.append(time.perf_counter() - t0)
        rows.append({"bytes": size, "time_us": statistics.median(samples) * 1e6})
    return rows


def _rtt_probe(rank: int, host: str, port: int, n: int = 200) -> float | None:
    """Median TCP round trip of 1-byte messages between rank 0 (echo server) and rank 1."""
    if rank == 0:
        srv = socket.create_server((host, port))
        srv.settimeout(30)
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(n):
            conn.sendall(conn.recv(1))
        conn.close()
        srv.close()
        return None
    if rank != 1:
        return None
    for _ in range(100):  # wait for the server
        try:
            sock = socket.create_connection((host, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    else:
        return None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rtts = []
    for _ in range(n):
        t0 = time.perf_counter()
        sock.sendall(b"x")
        sock.recv(1)
        rtts.append(time.perf_counter() - t0)
    sock.close()
    return statistics.median(rtts)


# ----------------------------------------------------------------------------- namespaces
class Netns:
    """Rank namespaces joined through a bridge in a hub namespace; removed in close(), whatever happens."""

    def __init__(self, ranks: int):
        tag = f"{os.getpid() % 100000}"
        self.hub = f"gwh{tag}"
        self.names = [f"gwr{tag}-{i}" for i in range(ranks)]
        self.links: list[tuple[str, str]] = []  # (namespace, device) pairs that carry a tbf qdisc
        self.made: list[str] = []

    def sh(self, *cmd: str) -> None:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()}")

    def up(self) -> None:
        self.sh("ip", "netns", "add", self.hub)
        self.made.append(self.hub)
        self.sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        self.sh("ip", "-n", self.hub, "link", "set", "br0", "up")
        for i, ns in enumerate(self.names):
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")
            self.sh(
                "ip",
                "-n",
                self.hub,
                "link",
                "add",
                f"h{i}",
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            self.sh("ip", "-n", self.hub, "link", "set", f"h{i}", "master", "br0")
            self.sh("ip", "-n", self.hub, "link", "set", f"h{i}", "up")
            self.sh("ip", "-n", ns, "addr", "add", f"{SUBNET}.{i + 1}/24", "dev", "eth0")
            self.sh("ip", "-n", ns, "link", "set", "eth0", "up")
            self.links += [(ns, "eth0"), (self.hub, f"h{i}")]

    def limit(self, mbit: float) -> None:
        """tbf on both ends of every veth: each direction of each rank's link runs at `mbit`."""
        burst_kb = max(64, int(mbit * 1e6 / 8 / 1000 / 1000 * 4))  # >= 4 ms of traffic and >= one GSO segment
        for ns, dev in self.links:
            self.sh(
                "ip",
                "netns",
                "exec",
                ns,
                "tc",
                "qdisc",
                "replace",
                "dev",
                dev,
                "root",
                "tbf",
                "rate",
                f"{mbit:g}mbit",
                "burst",
                f"{burst_kb}kb",
                "latency",
                "100ms",
            )

    def close(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        self.made.clear()


# ----------------------------------------------------------------------------- orchestration
def run_ranks(
    net: Netns, world: int, args, deadline: float, no_sync: bool = False, probe: bool = False
) -> dict:
    out = Path(tempfile.mkdtemp(prefix="gw-netns-")) / "r.json"
    procs = []
    budget = max(10.0, deadline - time.monotonic())
    for rank in range(world):
        cmd = [
            "ip",
            "netns",
            "exec",
            net.names[rank],
            sys.executable,
            __file__,
            "--worker",
            "--rank",
            str(rank),
            "--world",
            str(world),
            "--hidden",
            str(args.hidden),
            "--layers",
            str(args.layers),
            "--batch",
            str(args.batch),
            "--steps",
            str(args.steps),
            "--warmup",
            str(args.warmup),
            "--out",
            str(out),
        ]
        cmd += ["--no-sync"] if no_sync else []
        cmd += ["--probe-allreduce"] if probe else []
        env = {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1"}  # gloo must use the veth
        procs.append(
            subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
                env=env,
            )
        )
    try:
        for p in procs:
            _, err = p.communicate(timeout=budget)
            if p.returncode != 0:
                raise RuntimeError(f"worker failed (rc {p.returncode}): {err.strip()[-800:]}")
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"training run exceeded {budget:.0f} s") from None
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)  # only the process groups we started
                p.wait()
    data = json.loads(out.read_text())
    shutil.rmtree(out.parent, ignore_errors=True)
    return data


def predict(
    t_compute: float, params: int, ranks: int, link_bytes_s: float, latency_s: float, batch: int
) -> dict:
    """The planner's model for `ranks` nodes of 1 'GPU' each on this link, compute per step = t_compute."""
    import numpy as np

    from gpuwise.plan.perf import NodeNumbers, OptionArrays, WorkloadNumbers, evaluate

    w = WorkloadNumbers(
        flops_per_sample=1.0,
        total_samples=ranks * batch,
        global_batch=float(ranks * batch),
        micro_batch=float(batch),
        params=float(params),
        weight_bytes=4.0,
        grad_bytes=4.0,
        reduce_bytes=4.0,  # fp32 gradients
        optimizer_bytes=4.0,
        zero_stage=0,
        tp=1,
        pp=1,
        fixed_dp=0,
        bucket_bytes=BUCKET_MB * 2**20,
        layers=0.0,
        hidden=0.0,
        heads=0.0,
        seq_len=0.0,
        activation_checkpointing=False,
        flash_attention=True,
        activation_bytes_per_sample=0.0,
        bytes_per_sample=0.0,
        recompute_factor=1.0,
        random_reads=False,
        avg_read_bytes=1.0,
    )
    opt = NodeNumbers(
        gpus_per_node=1,
        peak_flops=batch / t_compute,
        mfu=1.0,
        gpu_memory_bytes=np.nan,
        intra_bytes_s=1e12,
        intra_latency_s=0.0,
        inter_bytes_s=link_bytes_s,
        inter_latency_s=latency_s,
        compute_cv=0.0,  # the planner's default: no straggler term unless calibrated
        network_cv=0.0,
        storage_bytes_s=1e12,
        storage_iops=1e12,
        storage_shared=False,
        time_overhead=0.0,
        usable_memory_fraction=1.0,
    )
    r = evaluate(w, OptionArrays.stack([opt]), [1, ranks])
    return {
        "efficiency": float(r.efficiency[0, 1]),
        "step_s": float(r.step_s[0, 1]),
        "comm_s": float(r.comm_s[0, 1]),
        "exposed_comm_s": float(r.exposed_comm_s[0, 1]),
    }


def predictions(
    t_compute: float, params: int, ranks: int, mbit: float, rtt_s: float, table, batch: int
) -> dict:
    """(a) nominal rate × the plan's TCP range at that rate, (b) calibrated from the measured all-reduce table."""
    from gpuwise.plan.defaults import PlanDefaults
    from gpuwise.plan.network_fit import fit_measurement
    from gpuwise.plan.options import achieved_range

    low, typical, high = achieved_range(PlanDefaults(), rdma=False, gbps=mbit / 1000)
    line = mbit * 1e6 / 8
    out = {
        name: predict(t_compute, params, ranks, line * frac, rtt_s / 2, batch)
        for name, frac in (("tcp_low", low), ("tcp_typical", typical), ("tcp_high", high))
    }
    fit, why = fit_measurement(table, ranks, ranks, "tcp", "gloo all-reduce in the namespaces")
    if fit is not None:
        bytes_s, lat = fit.inter_for(
            1e12, 0.0, BUCKET_MB * 2**20
        )  # the rate at DDP's bucket size, as plan does
        out["calibrated"] = {
            **predict(t_compute, params, ranks, bytes_s, lat, batch),
            "link_gb_s": bytes_s / 1e9,
            "fraction_of_rate": bytes_s / line,
            "latency_us": lat * 1e6,
        }
    else:
        out["calibrated"] = {"error": why}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description="netns + tbf validation of the planner's scaling model")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--no-sync", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--probe-allreduce", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ranks", type=int, default=4, help="ranks (network namespaces), at least 2")
    ap.add_argument("--rates", default="1000,200", help="link rates to test, Mbit/s (comma separated)")
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256, help="samples per rank per step")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2, help="interleaved (1, N lockstep, N DDP) runs per rate")
    ap.add_argument("--timeout", type=float, default=300.0, help="deadline for the whole script, seconds")
    ap.add_argument("--json", default="", help="also write results to this file")
    ap.add_argument(
        "--reanalyse", default="", help="recompute the predictions from a --json file of an earlier run"
    )
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.reanalyse:
        results = json.loads(Path(args.reanalyse).read_text())
        for r in results:
            r["predicted"] = predictions(
                r["t_lockstep_s"], r["params"], r["ranks"], r["rate_mbit"], r["rtt_ms"] / 1e3,
                r["allreduce_table"], r["batch"],
            )  # fmt: skip
            r["error_points"] = {
                k: (v["efficiency"] - r["measured_efficiency"]) * 100
                for k, v in r["predicted"].items()
                if "efficiency" in v
            }
        args.batch = results[0]["batch"]  # the table header names it; layers/hidden are the defaults used
        return report(results, args)
    if os.geteuid() != 0:
        print("SKIP: needs root to create network namespaces and tc qdiscs (run with sudo)")
        return 0
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            print(f"SKIP: '{tool}' not found (apt-get install -y iproute2)")
            return 0
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIP: torch is not installed (pip install torch, the CPU build is enough)")
        return 0

    deadline = time.monotonic() + args.timeout
    ranks = args.ranks
    if ranks < 2:
        print("--ranks must be at least 2", file=sys.stderr)
        return 2
    net = Netns(ranks)
    results = []

    def on_signal(signum, _frame):
        net.close()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    timer = threading.Timer(args.timeout + 30, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.daemon = True
    timer.start()
    try:
        net.up()
        for mbit in (float(r) for r in args.rates.split(",") if r.strip()):
            net.limit(mbit)
            t1s, tcs, tns, rtts, tables, params = [], [], [], [], [], 0
            for _ in range(args.repeats):
                one = run_ranks(net, 1, args, deadline)
                busy = run_ranks(net, ranks, args, deadline, no_sync=True)  # all computing, no all-reduce
                ddp = run_ranks(net, ranks, args, deadline, probe=True)
                t1s += one["times"]
                tcs += busy["times"]
                tns += ddp["times"]
                params = ddp["params"]
                tables.append(ddp["table"])
                if ddp.get("rtt_s"):
                    rtts.append(ddp["rtt_s"])
            t1, tc, tn = statistics.median(t1s), statistics.median(tcs), statistics.median(tns)
            rtt = statistics.median(rtts) if rtts else 0.0
            table = [
                {"bytes": rows[0]["bytes"], "time_us": statistics.median(r["time_us"] for r in rows)}
                for rows in zip(*tables, strict=True)
            ]
            measured = tc / tn  # lockstep compute without vs with the all-reduce: what GPUs would see
            pred = predictions(tc, params, ranks, mbit, rtt, table, args.batch)
            results.append(
                {
                    "ranks": ranks,
                    "rate_mbit": mbit,
                    "batch": args.batch,
                    "params": params,
                    "grad_mb": params * 4 / 1e6,
                    "rtt_ms": rtt * 1e3,
                    "t1_s": t1,
                    "t_lockstep_s": tc,
                    "t_ddp_s": tn,
                    "t_ddp_min_s": min(tns),
                    "t_ddp_max_s": max(tns),
                    "allreduce_table": table,
                    "measured_efficiency": measured,
                    "predicted": pred,
                    "error_points": {
                        k: (v["efficiency"] - measured) * 100 for k, v in pred.items() if "efficiency" in v
                    },
                }
            )
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
        net.close()

    return report(results, args)


def report(results: list[dict], args) -> int:
    """Print the table (and write --json)."""
    ranks = results[0]["ranks"]
    r0 = results[0]
    print(
        f"{ranks} ranks, MLP {args.layers}x{args.hidden} ({r0['params'] / 1e6:.2f}M params, "
        f"{r0['grad_mb']:.1f} MB fp32 gradients), batch {args.batch}/rank, gloo DDP, bucket {BUCKET_MB:g} MiB, "
        "1 CPU thread per rank; latency = measured RTT (no netem in this kernel)"
    )
    print(
        "| link | RTT | step: 1 rank / N lockstep no comm / N DDP (min–max) | measured E | predicted E: "
        "TCP range low–typical–high | error (typical) | predicted E, calibrated (fit) | error (calibrated) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        p, e = r["predicted"], r["error_points"]
        cal = p["calibrated"]
        cal_text = (
            f"{cal['efficiency']:.1%} ({cal['link_gb_s'] * 8e3:.0f} Mbit/s, {cal['latency_us']:.0f} us)"
            if "efficiency" in cal
            else cal["error"]
        )
        cal_err = f"{e['calibrated']:+.1f} pts" if "calibrated" in e else "n/a"
        print(
            f"| {r['rate_mbit']:g} Mbit/s tbf | {r['rtt_ms']:.3f} ms "
            f"| {r['t1_s'] * 1e3:.0f} / {r['t_lockstep_s'] * 1e3:.0f} / {r['t_ddp_s'] * 1e3:.0f} ms "
            f"({r['t_ddp_min_s'] * 1e3:.0f}–{r['t_ddp_max_s'] * 1e3:.0f}) "
            f"| {r['measured_efficiency']:.1%} "
            f"| {p['tcp_low']['efficiency']:.1%}–{p['tcp_typical']['efficiency']:.1%}–{p['tcp_high']['efficiency']:.1%} "
            f"| {e['tcp_typical']:+.1f} pts | {cal_text} | {cal_err} |"
        )
    print(
        "measured E = T(N ranks computing in lockstep, no all-reduce) / T(N ranks DDP); predicted E = planner "
        "model for N nodes on the same link, compute = that lockstep step; TCP range = the sourced NCCL-over-"
        "TCP achieved fractions (plan_defaults.yaml network_achieved_fraction.tcp) × the tbf rate; calibrated = "
        "α–β fit of the gloo all-reduces measured over the same links"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
