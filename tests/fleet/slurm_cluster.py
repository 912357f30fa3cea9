"""A real multi-node Slurm cluster on this machine, for the fleet and launch tests (root only).

munged + slurmctld in the root network namespace, and one slurmd per node, each in its own network,
UTS and mount namespace with its own hostname and address on a bridge (the measured recipe in
/work/shared/notes/slurm-on-one-machine.md). Cluster, partition and nodes are named after `name`
(gwfl: nodes gwfl1, gwfl2 ...). The host-wide pieces are unique to each cluster of each run, so two test
runs on one machine (or two clusters in one run) never collide: bridge, namespaces and veths are
`<prefix><pid><n>b`, `...ns<i>`, `...v<i>` (prefix $GW_SLURM_NET_PREFIX, default `gwsl-`), the /24 is a
169.254.x.0 that no interface here holds, and slurmctld's port is one the kernel gives free.
`down()` leaves no process, namespace, link or file behind.

GRES (`gpus=N`): slurm.conf `GresTypes=gpu` and `Gres=gpu:N` on each node, gres.conf
`Name=gpu File=<dir>/dev/gw-sl-gpu[0-N-1]`. There are no GPUs here: the files are stand-ins.
What this Slurm (22.05.8) accepts, measured here: slurmd starts with plain files there too (sinfo shows
gpu:N) but logs "... is not a valid character or block device, fix your gres.conf", and a job is then
granted the count without device indexes (no CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS in its tasks). With
character devices (`mknod c 1 3`, the numbers of /dev/null: nothing is reachable through them) the tasks get
CUDA_VISIBLE_DEVICES=0,1 and SLURM_JOB_GPUS=0,1. GW_SL_PLAIN_FILES=1 makes plain files, to re-measure.
`AccountingStorageTRES=gres/gpu` (for a gres/gpu entry in the job's TRES) needs slurmdbd, so a test reads
the grant from `scontrol show job -d` (JOB_GRES) instead.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

NODE_PORT = 16918  # slurmd listens inside each node's own namespace: no other run can hold it there
_CLUSTERS = itertools.count()  # clusters started by this process


def run(*cmd: str, check: bool = True, env: dict | None = None, timeout: float = 60) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p.stdout


def _net_prefix() -> str:
    """Unique to this cluster of this process; the longest name made from it (`...v9`) fits IFNAMSIZ."""
    prefix = f"{os.environ.get('GW_SLURM_NET_PREFIX', 'gwsl-')}{os.getpid() % 10000}{next(_CLUSTERS)}"
    if len(prefix) + 2 > 15:
        raise RuntimeError(f"GW_SLURM_NET_PREFIX is too long for interface names: {prefix!r}")
    return prefix


def _free_subnet() -> str:
    """A 169.254.x.0/24 (x in 100..249) that no interface on this machine holds."""
    used = set(re.findall(r"inet 169\.254\.(\d+)\.", run("ip", "-o", "-4", "addr", "show")))
    start = os.getpid() % 150
    for k in range(150):
        x = 100 + (start + k) % 150
        if str(x) not in used:
            return f"169.254.{x}"
    raise RuntimeError("no free 169.254.x.0/24 for the test cluster")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, nodes: int = 3, gpus: int = 0, name: str = "gwfl"):
        self.name, self.gpus = name, gpus
        self.names = [f"{name}{i}" for i in range(1, nodes + 1)]
        self.net = _net_prefix()
        self.bridge = f"{self.net}b"
        self.subnet = _free_subnet()
        self.ctl_port = _free_port()
        self.ips = {n: f"{self.subnet}.{10 + i}" for i, n in enumerate(self.names, start=1)}
        self.dir = Path(tempfile.mkdtemp(prefix=f"{name}-slurm-"))
        self.conf = self.dir / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.ctl_host = socket.gethostname()

    def ns(self, node: str) -> str:
        return f"{self.net}ns{self.names.index(node) + 1}"

    def veth(self, node: str) -> str:
        return f"{self.net}v{self.names.index(node) + 1}"

    # ------------------------------------------------------------------ up

    def up(self) -> SlurmCluster:
        t = self.dir
        for sub in ("etc", "munge", "log", "run", "state", "dev", *(f"spool/{n}" for n in self.names)):
            (t / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(t, 0o755)
        os.chmod(t / "munge", 0o755)
        for i in range(self.gpus):
            stand_in = t / "dev" / f"gw-sl-gpu{i}"
            if os.environ.get("GW_SL_PLAIN_FILES"):  # to re-measure what this Slurm accepts
                stand_in.write_text("")
            else:
                os.mknod(stand_in, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # stand-in char devices
        if self.gpus:
            (t / "etc" / "gres.conf").write_text(f"Name=gpu File={t}/dev/gw-sl-gpu[0-{self.gpus - 1}]\n")
        key = t / "munge" / "munge.key"
        run("mungekey", "-c", "-k", str(key), "-b", "1024", "-f")
        os.chmod(key, 0o600)
        m = t / "munge"
        run("munged", "-f", f"--key-file={key}", f"--socket={m}/munge.sock", f"--pid-file={m}/munged.pid",
            f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed")  # fmt: skip
        self._network()
        hosts = ["127.0.0.1 localhost", f"{self.subnet}.1 {self.ctl_host}"] + [
            f"{ip} {n}" for n, ip in self.ips.items()
        ]
        (t / "etc" / "hosts").write_text("\n".join(hosts) + "\n")
        self.set_healthcheck("exit 0")
        self.conf.write_text(self._slurm_conf())
        run("slurmctld", "-f", str(self.conf), "-c", env=self.env)
        for n in self.names:
            run("nsenter", f"--net=/run/netns/{self.ns(n)}", "--", "unshare", "--mount", "--uts", "--", "sh", "-c",
                f"mount --bind {t}/etc/hosts /etc/hosts && hostname {n} && exec slurmd -f {self.conf} -N {n}",
                env=self.env)  # fmt: skip
        self.wait_idle(self.names, 30)
        return self

    def _network(self) -> None:
        run("ip", "link", "add", self.bridge, "type", "bridge")
        run("ip", "addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        run("ip", "link", "set", self.bridge, "up")
        for n, ip in self.ips.items():
            ns, veth = self.ns(n), self.veth(n)
            run("ip", "netns", "add", ns)
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            run("ip", "link", "set", veth, "master", self.bridge, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
            run("ip", "-n", ns, "link", "set", "eth0", "up")

    def _slurm_conf(self) -> str:
        hw = run("slurmd", "-C").split("\n")[0]
        get = {k: v for k, v in re.findall(r"(\w+)=(\S+)", hw)}
        topo = (
            f"CPUs={get['CPUs']} Sockets={get['SocketsPerBoard']} CoresPerSocket={get['CoresPerSocket']} "
            f"ThreadsPerCore={get['ThreadsPerCore']} RealMemory=1000"
            + (f" Gres=gpu:{self.gpus}" if self.gpus else "")
        )
        t = self.dir
        lines = [
            f"ClusterName={self.name}",
            f"SlurmctldHost={self.ctl_host}({self.subnet}.1)",
            f"SlurmctldPort={self.ctl_port}",
            f"SlurmdPort={NODE_PORT}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={t}/munge/munge.sock",
            f"StateSaveLocation={t}/state",
            f"SlurmdSpoolDir={t}/spool/%n",
            f"SlurmctldPidFile={t}/run/slurmctld.pid",
            f"SlurmdPidFile={t}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={t}/log/slurmctld.log",
            f"SlurmdLogFile={t}/log/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=300",
            "MailProg=/bin/true",
            *(["GresTypes=gpu"] if self.gpus else []),
            # slurmd runs this every 2 s; it does nothing until a test writes a real check into it
            f"HealthCheckProgram={t}/etc/healthcheck.sh",
            "HealthCheckInterval=2",
            "HealthCheckNodeState=ANY",
            *(f"NodeName={n} NodeAddr={ip} {topo} State=UNKNOWN" for n, ip in self.ips.items()),
            f"PartitionName={self.name} Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP",
        ]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ use

    def slurm(self, *cmd: str, check: bool = True, timeout: float = 60) -> str:
        return run(*cmd, check=check, env=self.env, timeout=timeout)

    def state(self, node: str) -> str:
        return self.slurm("sinfo", "-h", "-N", "-n", node, "-o", "%T").strip()

    def wait_idle(self, nodes: list[str], timeout: float) -> None:
        """Poll (never a fixed sleep) until every node is idle."""
        deadline = time.monotonic() + timeout
        while True:
            states = {n: self.state(n) for n in nodes}
            if all(s == "idle" for s in states.values()):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"nodes not idle after {timeout}s: {states}; logs in {self.dir}/log")
            time.sleep(0.2)

    def resume(self, node: str) -> None:
        self.slurm("scontrol", "update", f"nodename={node}", "state=resume")
        self.wait_idle([node], 30)

    def nsenter(self, node: str, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a command on a node as its slurmd would: its network namespace, hostname and hosts file."""
        script = f'mount --bind {self.dir}/etc/hosts /etc/hosts && hostname {node} && exec "$@"'
        return subprocess.run(
            ["nsenter", f"--net=/run/netns/{self.ns(node)}", "--", "unshare", "--mount", "--uts", "--",
             "sh", "-c", script, "sh", *cmd],
            capture_output=True, text=True, env=self.env, timeout=timeout,
        )  # fmt: skip

    def healthchecks_running(self) -> list[int]:
        """Pids of `gpuwise fleet healthcheck` runs started by this cluster's slurmd (their environment
        names this cluster's slurm.conf; other test runs on the machine have their own)."""
        conf = f"SLURM_CONF={self.conf}".encode() + b"\0"
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if (
                    b"fleet\0healthcheck" in (entry / "cmdline").read_bytes()
                    and conf in (entry / "environ").read_bytes()
                ):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile
                continue
        return found

    def set_healthcheck(self, body: str) -> None:
        """Replace the HealthCheckProgram script (atomically: slurmd may be running it right now)."""
        script = self.dir / "etc" / "healthcheck.sh"
        tmp = script.with_suffix(".tmp")
        tmp.write_text(f"#!/bin/sh\nexport SLURM_CONF={self.conf}\n{body}\n")
        tmp.chmod(0o755)
        tmp.replace(script)

    def limit_link(self, node: str, rate: str) -> None:
        """Token-bucket limit on the traffic the bridge sends to `node` (its veth's egress = node's ingress)."""
        run("tc", "qdisc", "replace", "dev", self.veth(node), "root", "tbf", "rate", rate,
            "burst", "64kb", "latency", "400ms")  # fmt: skip

    def unlimit_link(self, node: str) -> None:
        run("tc", "qdisc", "del", "dev", self.veth(node), "root", check=False)

    # ------------------------------------------------------------------ down

    def down(self) -> None:
        """Cancel jobs, stop the daemons (in parallel), kill strays, remove namespaces, bridge and files."""
        if self.conf.exists():
            self.slurm("scancel", "--quiet", "--full", f"--partition={self.name}", check=False)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.slurm("squeue", "-h", check=False).strip():
                time.sleep(0.2)
        run_dir = self.dir / "run"
        self._stop([run_dir / f"slurmd-{n}.pid" for n in self.names])
        self._stop([run_dir / "slurmctld.pid", self.dir / "munge" / "munged.pid"])
        for n in self.names:
            ns = self.ns(n)
            for pid in run("ip", "netns", "pids", ns, check=False).split():
                _kill(int(pid), signal.SIGKILL)
            run("ip", "netns", "del", ns, check=False)
        run("ip", "link", "del", self.bridge, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    @staticmethod
    def _stop(pid_files: list[Path]) -> None:
        pids = []
        for f in pid_files:
            try:
                pids.append(int(f.read_text().strip()))
            except (OSError, ValueError):
                continue
        for pid in pids:
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.1)
        for pid in pids:
            _kill(pid, signal.SIGKILL)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a killed daemon is a zombie until init reaps it: that counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def available() -> str | None:
    """None when a cluster can start here, else the reason to skip."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, daemons)"
    missing = [t for t in ("slurmctld", "slurmd", "munged", "mungekey", "sbatch", "nsenter", "unshare", "ip", "tc")
               if shutil.which(t) is None]  # fmt: skip
    return (
        f"missing tools: {', '.join(missing)} (scripts/install-system-deps.sh installs them)"
        if missing
        else None
    )
