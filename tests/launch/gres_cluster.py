"""A real 2-node Slurm cluster with a GPU GRES on each node, for the launch GRES test (root only).

The recipe of tests/fleet/slurm_cluster.py (munged + slurmctld in the root network namespace, one slurmd
per node in its own network + UTS + mount namespace), with its own names so that both can run at once:
bridge gw-sl-br0, namespaces gw-sl-ns<i>, nodes gwsl<i>, subnet 169.254.216.0/24, ports 16937/16938.

The GRES: slurm.conf `GresTypes=gpu` and `Gres=gpu:2` on each node, gres.conf
`Name=gpu File=<dir>/dev/gw-sl-gpu[0-1]`. There are no GPUs here: the files are stand-ins the test creates.
What this Slurm (22.05.8) accepts, measured here: slurmd starts with plain files there too (sinfo shows
gpu:2) but logs "... is not a valid character or block device, fix your gres.conf", and a job is then
granted the count without device indexes (no CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS in its tasks). With
character devices (`mknod c 1 3`, the numbers of /dev/null: nothing is reachable through them) the tasks get
CUDA_VISIBLE_DEVICES=0,1 and SLURM_JOB_GPUS=0,1. GW_SL_PLAIN_FILES=1 makes plain files, to re-measure.
`AccountingStorageTRES=gres/gpu` (for a gres/gpu entry in the job's TRES) needs slurmdbd, so the test reads
the grant from `scontrol show job -d` (JOB_GRES) instead.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import tempfile
import time
from pathlib import Path

from tests.fleet.slurm_cluster import _alive, _kill, run

SUBNET = "169.254.216"
BRIDGE = "gw-sl-br0"
CTL_PORT, NODE_PORT = 16937, 16938
GPUS = 2


class GresCluster:
    def __init__(self, nodes: int = 2):
        self.names = [f"gwsl{i}" for i in range(1, nodes + 1)]
        self.ips = {n: f"{SUBNET}.{10 + i}" for i, n in enumerate(self.names, start=1)}
        self.dir = Path(tempfile.mkdtemp(prefix="gw-sl-slurm-"))
        self.conf = self.dir / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.ctl_host = socket.gethostname()

    def ns(self, node: str) -> str:
        return f"gw-sl-ns{node[4:]}"

    def up(self) -> GresCluster:
        t = self.dir
        for sub in ("etc", "munge", "log", "run", "state", "dev", *(f"spool/{n}" for n in self.names)):
            (t / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(t, 0o755)
        os.chmod(t / "munge", 0o755)
        for i in range(GPUS):
            stand_in = t / "dev" / f"gw-sl-gpu{i}"
            if os.environ.get("GW_SL_PLAIN_FILES"):  # to re-measure what this Slurm accepts
                stand_in.write_text("")
            else:
                os.mknod(stand_in, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # stand-in char devices
        key = t / "munge" / "munge.key"
        run("mungekey", "-c", "-k", str(key), "-b", "1024", "-f")
        os.chmod(key, 0o600)
        m = t / "munge"
        run("munged", "-f", f"--key-file={key}", f"--socket={m}/munge.sock", f"--pid-file={m}/munged.pid",
            f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed")  # fmt: skip
        self._network()
        hosts = [
            "127.0.0.1 localhost",
            f"{SUBNET}.1 {self.ctl_host}",
            *(f"{ip} {n}" for n, ip in self.ips.items()),
        ]
        (t / "etc" / "hosts").write_text("\n".join(hosts) + "\n")
        (t / "etc" / "gres.conf").write_text(f"Name=gpu File={t}/dev/gw-sl-gpu[0-{GPUS - 1}]\n")
        self.conf.write_text(self._slurm_conf())
        run("slurmctld", "-f", str(self.conf), "-c", env=self.env)
        for n in self.names:
            run("nsenter", f"--net=/run/netns/{self.ns(n)}", "--", "unshare", "--mount", "--uts", "--", "sh", "-c",
                f"mount --bind {t}/etc/hosts /etc/hosts && hostname {n} && exec slurmd -f {self.conf} -N {n}",
                env=self.env)  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            states = self.slurm("sinfo", "-h", "-N", "-o", "%N %T", check=False).split()
            if states.count("idle") == len(self.names):
                return self
            time.sleep(0.2)
        raise RuntimeError(f"nodes not idle: {self.slurm('sinfo', '-N', check=False)} "
                           f"{(t / 'log' / 'slurmctld.log').read_text()[-2000:]}")  # fmt: skip

    def _network(self) -> None:
        run("ip", "link", "add", BRIDGE, "type", "bridge")
        run("ip", "addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
        run("ip", "link", "set", BRIDGE, "up")
        for n, ip in self.ips.items():
            ns, veth = self.ns(n), f"gw-sl-v{n[4:]}"
            run("ip", "netns", "add", ns)
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            run("ip", "link", "set", veth, "master", BRIDGE, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
            run("ip", "-n", ns, "link", "set", "eth0", "up")

    def _slurm_conf(self) -> str:
        get = dict(re.findall(r"(\w+)=(\S+)", run("slurmd", "-C").split("\n")[0]))
        topo = (f"CPUs={get['CPUs']} Sockets={get['SocketsPerBoard']} CoresPerSocket={get['CoresPerSocket']} "
                f"ThreadsPerCore={get['ThreadsPerCore']} RealMemory=1000 Gres=gpu:{GPUS}")  # fmt: skip
        t = self.dir
        lines = [
            "ClusterName=gwsl", f"SlurmctldHost={self.ctl_host}({SUBNET}.1)", f"SlurmctldPort={CTL_PORT}",
            f"SlurmdPort={NODE_PORT}", "SlurmUser=root", "SlurmdUser=root", "AuthType=auth/munge",
            "CredType=cred/munge", f"AuthInfo=socket={t}/munge/munge.sock", f"StateSaveLocation={t}/state",
            f"SlurmdSpoolDir={t}/spool/%n", f"SlurmctldPidFile={t}/run/slurmctld.pid",
            f"SlurmdPidFile={t}/run/slurmd-%n.pid", f"SlurmctldLogFile={t}/log/slurmctld.log",
            f"SlurmdLogFile={t}/log/slurmd-%n.log", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "SwitchType=switch/none", "MpiDefault=none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "SchedulerType=sched/backfill", "ReturnToService=2",
            "SlurmctldTimeout=30", "SlurmdTimeout=30", "InactiveLimit=0", "KillWait=5", "MinJobAge=300",
            "MailProg=/bin/true", "GresTypes=gpu",
            *(f"NodeName={n} NodeAddr={ip} {topo} State=UNKNOWN" for n, ip in self.ips.items()),
            f"PartitionName=gwsl Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP",
        ]  # fmt: skip
        return "\n".join(lines) + "\n"

    def slurm(self, *cmd: str, check: bool = True, timeout: float = 60) -> str:
        return run(*cmd, check=check, env=self.env, timeout=timeout)

    def down(self) -> None:
        if self.conf.exists():
            self.slurm("scancel", "--quiet", "--full", "--partition=gwsl", check=False)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.slurm("squeue", "-h", check=False).strip():
                time.sleep(0.2)
        pids = []
        for f in [*(self.dir / "run").glob("slurmd-*.pid"), self.dir / "run" / "slurmctld.pid",
                  self.dir / "munge" / "munged.pid"]:  # fmt: skip
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
        for n in self.names:
            for pid in run("ip", "netns", "pids", self.ns(n), check=False).split():
                _kill(int(pid), signal.SIGKILL)
            run("ip", "netns", "del", self.ns(n), check=False)
        run("ip", "link", "del", BRIDGE, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
