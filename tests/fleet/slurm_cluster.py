"""A real multi-node Slurm cluster on this machine, for the fleet tests (root only).

munged + slurmctld in the root network namespace, and one slurmd per node, each in its own network,
UTS and mount namespace with its own hostname and address on a bridge (the measured recipe in
/work/shared/notes/slurm-on-one-machine.md). Every name is prefixed `gwfl` (bridge gwfl-br0, namespaces
gwfl-ns<i>, nodes gwfl<i>, subnet 169.254.214.0/24, ports 16917/16918) so it cannot collide with
other test runs. `down()` leaves no process, namespace, link or file behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SUBNET = "169.254.214"
BRIDGE = "gwfl-br0"
CTL_PORT, NODE_PORT = 16917, 16918


def run(*cmd: str, check: bool = True, env: dict | None = None, timeout: float = 60) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p.stdout


class SlurmCluster:
    def __init__(self, nodes: int = 3):
        self.names = [f"gwfl{i}" for i in range(1, nodes + 1)]
        self.ips = {n: f"{SUBNET}.{10 + i}" for i, n in enumerate(self.names, start=1)}
        self.dir = Path(tempfile.mkdtemp(prefix="gwfl-slurm-"))
        self.conf = self.dir / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.ctl_host = socket.gethostname()

    # ------------------------------------------------------------------ up

    def up(self) -> SlurmCluster:
        t = self.dir
        for sub in ("etc", "munge", "log", "run", "state", *(f"spool/{n}" for n in self.names)):
            (t / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(t, 0o755)
        os.chmod(t / "munge", 0o755)
        key = t / "munge" / "munge.key"
        run("mungekey", "-c", "-k", str(key), "-b", "1024", "-f")
        os.chmod(key, 0o600)
        m = t / "munge"
        run("munged", "-f", f"--key-file={key}", f"--socket={m}/munge.sock", f"--pid-file={m}/munged.pid",
            f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed")  # fmt: skip
        self._network()
        hosts = ["127.0.0.1 localhost", f"{SUBNET}.1 {self.ctl_host}"] + [
            f"{ip} {n}" for n, ip in self.ips.items()
        ]
        (t / "etc" / "hosts").write_text("\n".join(hosts) + "\n")
        self.set_healthcheck("exit 0")
        self.conf.write_text(self._slurm_conf())
        run("slurmctld", "-f", str(self.conf), "-c", env=self.env)
        for n in self.names:
            run("nsenter", f"--net=/run/netns/gwfl-ns{n[4:]}", "--", "unshare", "--mount", "--uts", "--", "sh", "-c",
                f"mount --bind {t}/etc/hosts /etc/hosts && hostname {n} && exec slurmd -f {self.conf} -N {n}",
                env=self.env)  # fmt: skip
        self.wait_idle(self.names, 30)
        return self

    def _network(self) -> None:
        run("ip", "link", "add", BRIDGE, "type", "bridge")
        run("ip", "addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
        run("ip", "link", "set", BRIDGE, "up")
        for n, ip in self.ips.items():
            ns, veth = f"gwfl-ns{n[4:]}", f"gwfl-v{n[4:]}"
            run("ip", "netns", "add", ns)
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            run("ip", "link", "set", veth, "master", BRIDGE, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
            run("ip", "-n", ns, "link", "set", "eth0", "up")

    def _slurm_conf(self) -> str:
        hw = run("slurmd", "-C").split("\n")[0]
        get = {k: v for k, v in re.findall(r"(\w+)=(\S+)", hw)}
        topo = (
            f"CPUs={get['CPUs']} Sockets={get['SocketsPerBoard']} CoresPerSocket={get['CoresPerSocket']} "
            f"ThreadsPerCore={get['ThreadsPerCore']} RealMemory=1000"
        )
        t = self.dir
        lines = [
            "ClusterName=gwfl",
            f"SlurmctldHost={self.ctl_host}({SUBNET}.1)",
            f"SlurmctldPort={CTL_PORT}",
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
            # slurmd runs this every 2 s; it does nothing until a test writes a real check into it
            f"HealthCheckProgram={t}/etc/healthcheck.sh",
            "HealthCheckInterval=2",
            "HealthCheckNodeState=ANY",
            *(f"NodeName={n} NodeAddr={ip} {topo} State=UNKNOWN" for n, ip in self.ips.items()),
            f"PartitionName=gwfl Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP",
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
            ["nsenter", f"--net=/run/netns/gwfl-ns{node[4:]}", "--", "unshare", "--mount", "--uts", "--",
             "sh", "-c", script, "sh", *cmd],
            capture_output=True, text=True, env=self.env, timeout=timeout,
        )  # fmt: skip

    def set_healthcheck(self, body: str) -> None:
        """Replace the HealthCheckProgram script (atomically: slurmd may be running it right now)."""
        script = self.dir / "etc" / "healthcheck.sh"
        tmp = script.with_suffix(".tmp")
        tmp.write_text(f"#!/bin/sh\nexport SLURM_CONF={self.conf}\n{body}\n")
        tmp.chmod(0o755)
        tmp.replace(script)

    def limit_link(self, node: str, rate: str) -> None:
        """Token-bucket limit on the traffic the bridge sends to `node` (its veth's egress = node's ingress)."""
        run("tc", "qdisc", "replace", "dev", f"gwfl-v{node[4:]}", "root", "tbf", "rate", rate,
            "burst", "64kb", "latency", "400ms")  # fmt: skip

    def unlimit_link(self, node: str) -> None:
        run("tc", "qdisc", "del", "dev", f"gwfl-v{node[4:]}", "root", check=False)

    # ------------------------------------------------------------------ down

    def down(self) -> None:
        """Cancel jobs, stop the daemons (in parallel), kill strays, remove namespaces, bridge and files."""
        if self.conf.exists():
            self.slurm("scancel", "--quiet", "--full", "--partition=gwfl", check=False)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.slurm("squeue", "-h", check=False).strip():
                time.sleep(0.2)
        run_dir = self.dir / "run"
        self._stop([run_dir / f"slurmd-{n}.pid" for n in self.names])
        self._stop([run_dir / "slurmctld.pid", self.dir / "munge" / "munged.pid"])
        for n in self.names:
            ns = f"gwfl-ns{n[4:]}"
            for pid in run("ip", "netns", "pids", ns, check=False).split():
                _kill(int(pid), signal.SIGKILL)
            run("ip", "netns", "del", ns, check=False)
        run("ip", "link", "del", BRIDGE, check=False)
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
