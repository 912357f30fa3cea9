"""--target torchrun: plain shell scripts for machines you can reach by ssh (bare metal, no scheduler).

`gpuwise launch JOB.yaml --target torchrun --hosts a,b` writes, in the output folder:
- node.sh: what one host runs: the job's setup, the dataset check, the preflight (`gpuwise doctor
  --expect`, a critical finding stops the host), the exporter beside the job, then the job's torchrun
  line (c10d rendezvous on the first host, as torch.distributed.run documents for multi-node jobs);
- launch.sh: run by you, from a machine that reaches every host by ssh: copies node.sh to each host,
  starts it on all of them, keeps each host's output in logs/HOST.log and exits with the first failure;
  Ctrl-C (or a failed host) stops torchrun on every host.
Nothing is started by gpuwise (no --yes): the scripts are the launch.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, joined, msg
from gpuwise.launch import steps
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import sh, sh_words
from gpuwise.launch.targets import Feature, Target

NODE_SCRIPT = "node.sh"
LAUNCH_SCRIPT = "launch.sh"
NODE_OUT = "$HOME/gpuwise-launch"  # on each host: preflight reports and monitoring samples
# an ssh destination: [user@]host, a name or an IPv4/IPv6 address (no spaces, no shell characters)
_HOST = re.compile(r"(?:[A-Za-z0-9._-]+@)?(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])")


def parse_hosts(text: str | None, nodes: int) -> list[str]:
    """--hosts a,b,c -> one host per node of the job; a clear error for a missing, malformed or wrong count."""
    hosts = [h.strip() for h in (text or "").split(",") if h.strip()]
    if not hosts:
        raise UserInputError(
            msg("--target torchrun needs the hosts to run on: --hosts HOST,HOST,..."),
            msg("e.g. {option} (one per node of JOB.yaml, reachable by ssh from here)").format(
                option="--hosts gpu-01,gpu-02"
            ),
        )
    bad = [h for h in hosts if not _HOST.fullmatch(h)]
    if bad:
        raise UserInputError(
            msg("--hosts: {host!r} is not a host name, address or user@host").format(host=bad[0]),
            msg("separate hosts with commas, without spaces or other characters"),
        )
    if len(set(hosts)) != len(hosts) or len(hosts) != nodes:
        raise UserInputError(
            msg("--hosts names {count} distinct host(s) of {given}; the job has {nodes} node(s)").format(
                count=len(set(hosts)), given=len(hosts), nodes=nodes
            ),
            msg("give one host per node, or set {line} in JOB.yaml").format(line=f"nodes: {len(set(hosts))}"),
        )
    return hosts


def _address(host: str) -> str:
    """The host part of [user@]host, brackets of an IPv6 address removed (what torchrun and Prometheus dial)."""
    return host.rpartition("@")[2].strip("[]")


def node_script(plan: LaunchPlan, head: str, textfile: bool) -> str:
    job = plan.job
    data = job.dataset.source if job.dataset is not None and job.dataset.kind == "local" else None
    if job.dataset is not None and job.dataset.kind == "nfs":
        data = job.dataset.mount
    check_data = steps.dataset_check(job, data) if data else ":"
    workdir = str(Path(job.workdir or ".").expanduser().absolute())
    train = job.torchrun(str(job.nodes), f"{sh(head)}:{job.rdzv_port}", sh(f"gw-{job.name}"))
    return joined(
        "\n",
        [
            "#!/bin/bash",
            "# Written by `gpuwise launch --target torchrun`: what each host runs (launch.sh starts it).",
            "set -uo pipefail",
            "NODE=$(hostname)",
            f'OUT="{NODE_OUT}/"{sh(job.name)}',
            'GPUWISE="${GPUWISE:-gpuwise}"',
            'PYTHON="${PYTHON:-python3}"',
            "export NODE OUT GPUWISE PYTHON",
            'if ! command -v "$GPUWISE" >/dev/null; then',
            '  echo "gpuwise launch: gpuwise is not installed on $NODE (set GPUWISE=/path/to/gpuwise)" >&2',
            "  exit 1",
            "fi",
            *steps.env_exports(job, data),
            steps.user_setup(job) + " || exit 1" if job.setup else ":",
            check_data,
            steps.preflight(job),
            f"( {steps.exporter(job, textfile)} ) &",
            "EXPORTER=$!",
            steps.exporter_check(job, textfile),
            f"cd {sh(workdir)} || exit 1",
            train,
            "rc=$?",
            'kill "$EXPORTER" 2>/dev/null; wait "$EXPORTER" 2>/dev/null',
            'echo "gpuwise launch: training on $NODE ended with exit code $rc"',
            "exit $rc",
            "",
        ],
    )


def launch_script(plan: LaunchPlan, hosts: list[str]) -> str:
    name = f"gw-{plan.job.name}"
    remote = f"/tmp/gpuwise-{plan.job.name}-node.sh"
    stop = f"pkill -f -- {sh('--rdzv-id ' + name)}"
    return joined(
        "\n",
        [
            "#!/bin/bash",
            "# Written by `gpuwise launch --target torchrun`: starts node.sh on every host over ssh.",
            "set -uo pipefail",
            'HERE=$(cd "$(dirname "$0")" && pwd)',
            f"HOSTS=({sh_words(hosts)})",
            'mkdir -p "$HERE/logs"',
            "stop() {",
            f'  for h in "${{HOSTS[@]}}"; do ssh -o BatchMode=yes "$h" {sh(stop)} 2>/dev/null; done',
            "}",
            "trap 'stop; exit 130' INT TERM",
            "PIDS=()",
            'for h in "${HOSTS[@]}"; do',
            f'  scp -q -o BatchMode=yes "$HERE/{NODE_SCRIPT}" "$h:{remote}" || {{ echo "gpuwise launch: cannot copy to $h" >&2; stop; exit 1; }}',
            f'  ssh -o BatchMode=yes "$h" bash {remote} > "$HERE/logs/$h.log" 2>&1 &',
            "  PIDS+=($!)",
            "done",
            # the first host to fail stops the others at once (they would wait in the rendezvous), and
            # again each second while any is left (a host still in its preflight starts torchrun later);
            # polled rather than `wait -n`, so that the bash 3.2 of macOS runs it too
            "rc=0",
            "while :; do",
            "  left=0",
            '  for i in "${!PIDS[@]}"; do',
            '    pid=${PIDS[$i]}; [ -n "$pid" ] || continue',
            '    if kill -0 "$pid" 2>/dev/null; then left=1; continue; fi',
            '    wait "$pid"; status=$?; PIDS[$i]=""',
            '    if [ "$status" -ne 0 ]; then',
            '      echo "gpuwise launch: ${HOSTS[$i]} failed; see $HERE/logs/${HOSTS[$i]}.log" >&2',
            '      [ "$rc" -eq 0 ] && stop',
            "      rc=1",
            "    fi",
            "  done",
            '  [ "$left" -eq 0 ] && break',
            '  [ "$rc" -ne 0 ] && stop',
            "  sleep 1",
            "done",
            "exit $rc",
            "",
        ],
    )


class Torchrun(Target):
    name = "torchrun"
    label = "torchrun over ssh"
    id_form = "torchrun"
    options = ("--hosts",)
    unsupported = {
        Feature.CREATE: N_(
            "gpuwise does not log in to your machines; run the launch.sh it wrote, from a machine that "
            "reaches every host by ssh"
        ),
        Feature.WAIT: N_("launch.sh runs in your terminal until the job ends and exits with its result"),
        Feature.DOWN: N_(
            "gpuwise created nothing to delete; Ctrl-C on launch.sh stops torchrun on every host"
        ),
    }
    own_machines = True
    where = N_("the hosts of --hosts, over ssh")

    def build(self, plan, o) -> None:
        hosts = parse_hosts(o.cloud.get("hosts"), plan.job.nodes)
        plan.files[NODE_SCRIPT] = node_script(plan, _address(hosts[0]), o.textfile)
        plan.files[LAUNCH_SCRIPT] = launch_script(plan, hosts)
        name = f"gw-{plan.job.name}"
        plan.creates.append(
            Created(
                msg("torchrun processes"),
                msg("{name} ({nodes} hosts: {hosts})").format(
                    name=name, nodes=len(hosts), hosts=joined(", ", hosts)
                ),
                msg("Ctrl-C on launch.sh (or on each host: {command})").format(
                    command=f"pkill -f -- '--rdzv-id {name}'"
                ),
            )
        )
        plan.notes += [
            msg("run it: {command} (ssh from here to every host, gpuwise installed on each)").format(
                command=sh_words(["bash", plan.out / LAUNCH_SCRIPT])
            ),
            msg("the hosts must reach {head} on TCP {rdzv_port} (rendezvous) and each other for NCCL").format(
                head=_address(hosts[0]), rdzv_port=plan.job.rdzv_port
            ),
            msg(
                "each host runs the job in {workdir} (JOB.yaml's workdir, else the folder you launched from): "
                "it must exist there"
            ).format(workdir=str(Path(plan.job.workdir or ".").expanduser().absolute())),
        ]
        plan.scrape_config = steps.scrape_config(plan.job, [_address(h) for h in hosts])


TARGET = Torchrun()
