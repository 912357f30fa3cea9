"""`gpuwise launch`: the plan's choice -> a running, checked, monitored training job (Slurm, SkyPilot, the clouds' VMs)."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.helptext import help_text
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_
from gpuwise.registry import plugin_modules

LAUNCH_HELP = N_(
    "Launch a training job (JOB.yaml) on Slurm, SkyPilot or a cloud's VMs (Tencent, Alibaba, Huawei, Volcano Engine, Baidu), with a preflight (doctor --expect) "
    "on every node, the exporter beside the job, a migration check, a data-transfer estimate and a cost guard."
    "\n\nThe default is a dry run: it prints what would be created and what it would cost, and writes the "
    "script / task / request into the output folder. --yes creates it. Every created resource is listed with "
    "the command that deletes it (gpuwise launch --down ID).\n\nExit codes: 0 = planned or created; "
    "1 = the job ran and failed (--wait); 3 = could not run (bad file, over --max-cost, tool missing)."
)


def launch(
    job: Path = typer.Argument(
        None, metavar="JOB.yaml", help=N_("The job: command, nodes, GPUs, image, dataset, env.")
    ),
    target: str = typer.Option(
        None,
        "--target",
        help=help_text(N_("Where: {targets}."), targets=", ".join(plugin_modules("gpuwise.launch.targets"))),
    ),
    plan: Path = typer.Option(
        None, "--plan", help=N_("A `gpuwise plan --format json` file: launch its choice.")
    ),
    offer: str = typer.Option(
        None,
        "--offer",
        metavar="PROVIDER:INSTANCE",
        help=N_("A catalog offer, e.g. tencent:GT4.41XLARGE948."),
    ),
    yes: bool = typer.Option(False, "--yes", help=N_("Create it (without --yes nothing is created).")),
    max_cost: float = typer.Option(
        None, "--max-cost", min=0, help=N_("Refuse when the estimated cost is above this (or unknown).")
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help=N_(
            "Output folder (preflight reports, monitoring, scripts); default ./launch-NAME. Slurm: on a shared filesystem."
        ),
    ),
    wait: bool = typer.Option(
        False, "--wait", help=N_("slurm: wait until the job ends and exit with its result.")
    ),
    wait_timeout: float = typer.Option(
        None, "--wait-timeout", min=1, help=N_("With --wait: cancel the job after this many seconds.")
    ),
    textfile: bool = typer.Option(
        False, "--textfile", help=N_("Run the exporter as `export --textfile` (no listening port).")
    ),
    source: Path = typer.Option(
        None,
        "--source",
        help=N_("Capture of the source environment for the migration check (default: this machine)."),
    ),
    target_capture: Path = typer.Option(
        None, "--target-capture", help=N_("Capture of a target node (instead of the job's image_versions).")
    ),
    warn_share: float = typer.Option(
        0.10,
        "--transfer-warn-share",
        min=0,
        max=10,
        help=N_("Warn when moving the dataset takes more than this share of the training time."),
    ),
    partition: str = typer.Option(None, "--partition", help=N_("slurm: partition.")),
    account: str = typer.Option(None, "--account", help=N_("slurm: account.")),
    time_limit: str = typer.Option(None, "--time", help=N_("slurm: time limit (sbatch --time).")),
    qos: str = typer.Option(None, "--qos", help=N_("slurm: quality of service (sbatch --qos).")),
    gpu_request: str = typer.Option(
        "gpus-per-node",
        "--gpu-request",
        metavar="gpus-per-node|gres|none",
        help=N_(
            "slurm: how the GPUs are asked for: --gpus-per-node=N, --gres=gpu:N, or none where the cluster "
            "has no GPU GRES."
        ),
    ),
    exclusive: bool = typer.Option(False, "--exclusive", help=N_("slurm: whole nodes (sbatch --exclusive).")),
    container: str = typer.Option(
        "auto",
        "--container",
        metavar="auto|pyxis|none",
        help=N_(
            "slurm: run training in the job's image through Pyxis/enroot (srun --container-image); "
            "auto = when this srun has Pyxis."
        ),
    ),
    resubmit: int = typer.Option(
        2,
        "--resubmit",
        min=0,
        max=10,
        help=N_(
            "slurm: how many times a job whose preflight failed on some nodes is resubmitted without them "
            "(sbatch --exclude); 0 = never."
        ),
    ),
    zone: str = typer.Option(
        None,
        "--zone",
        help=N_("cloud VM targets: availability zone, e.g. ap-guangzhou-6 (default: the offer's)."),
    ),
    image_id: str = typer.Option(
        None,
        "--image-id",
        help=N_(
            "cloud VM targets: the machine image (its ID) with the GPU driver, if JOB.yaml's image is not one."
        ),
    ),
    vpc: str = typer.Option(
        None, "--vpc", help=N_("cloud VM targets: the VPC the instances join (Huawei: its ID).")
    ),
    subnet: str = typer.Option(
        None,
        "--subnet",
        help=N_("cloud VM targets: the VPC subnet the instances join (Alibaba: a vSwitch, vsw-...)."),
    ),
    security_group: str = typer.Option(
        None, "--security-group", help=N_("cloud VM targets: the instances' security group.")
    ),
    hpc_cluster: str = typer.Option(
        None,
        "--hpc-cluster",
        help=N_("tencent/alibaba/volcengine: HpcClusterId for RDMA (HCC / SCC) instances."),
    ),
    gpuwise_wheel: Path = typer.Option(
        None,
        "--gpuwise-wheel",
        envvar="GPUWISE_WHEEL",
        help=N_(
            "skypilot and the cloud VM targets: the gpuwise wheel the nodes install offline (default: built from this "
            "gpuwise's checkout)."
        ),
    ),
    hosts: str = typer.Option(
        None,
        "--hosts",
        metavar="HOST,HOST,...",
        help=N_(
            "torchrun: the nodes (names or addresses, one per JOB.yaml node); the first is the rendezvous host."
        ),
    ),
    gpuwise_wheel_url: str = typer.Option(
        None,
        "--gpuwise-wheel-url",
        help=N_(
            "cloud VM targets: an https URL the instances fetch that wheel from (e.g. a presigned object-store URL)."
        ),
    ),
    down: str = typer.Option(
        None,
        "--down",
        metavar="ID",
        help=N_(
            "Delete what a launch created, by the ID it printed: slurm:JOBID, skypilot:CLUSTER, tencent:REGION/ins-ID, ..."
        ),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    import sys

    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError
    from gpuwise.i18n import _

    if down is not None:
        if job is not None or yes:
            raise UserInputError(
                _("--down takes only the launch ID"), _("run `gpuwise launch --down ID` on its own")
            )
        from gpuwise.launch.targets import down as take_down

        typer.echo(take_down(down))  # the target the ID names refuses --down if it cannot delete
        return
    if job is None or target is None:
        raise UserInputError(
            _("launch needs JOB.yaml and --target"),
            _("e.g. {command}").format(command="gpuwise launch examples/job-cpu.yaml --target slurm"),
        )
    from gpuwise.launch import targets

    targets.check_flags(targets.get(target), {
        "--partition": partition, "--account": account, "--time": time_limit, "--qos": qos,
        "--gpu-request": gpu_request != "gpus-per-node", "--exclusive": exclusive, "--container": container != "auto",
        "--resubmit": resubmit != 2, "--wait": wait, "--wait-timeout": wait_timeout, "--zone": zone, "--image-id": image_id,
        "--hpc-cluster": hpc_cluster, "--vpc": vpc, "--subnet": subnet, "--security-group": security_group, "--gpuwise-wheel-url": gpuwise_wheel_url, "--hosts": hosts, "--yes": yes,
    })  # fmt: skip
    fmt = output_format(fmt, as_json)
    check_output(output)
    from gpuwise.launch.build import (
        LaunchOptions,
        check_cost_guard,
        check_out_folder,
        plan_launch,
        write_files,
    )

    options = LaunchOptions(
        job_path=job, target=target, plan_path=plan, offer=offer, out=out, max_cost=max_cost, source=source,
        target_capture=target_capture, textfile=textfile, warn_share=warn_share,
        slurm={"partition": partition, "account": account, "time": time_limit, "qos": qos,
               "gpu_request": gpu_request, "exclusive": exclusive, "container": container,
               "resubmit": resubmit},
        cloud={"zone": zone, "image_id": image_id, "hpc_cluster": hpc_cluster, "vpc": vpc, "subnet": subnet, "security_group": security_group,
               "gpuwise_wheel": gpuwise_wheel, "gpuwise_wheel_url": gpuwise_wheel_url, "hosts": hosts},
    )  # fmt: skip
    launch_plan = plan_launch(options)
    check_out_folder(launch_plan)
    check_cost_guard(launch_plan, creating=yes)
    write_files(launch_plan)
    if yes:
        launch_plan.submitted = targets.create(launch_plan, options, wait, wait_timeout)
        write_files(launch_plan)
    from gpuwise.report.views.launch import launch_view

    emit(launch_view(launch_plan), fmt, output)
    code = (launch_plan.submitted or {}).get("exit_code")
    if code:
        typer.echo(
            _("gpuwise launch: the job ended with exit code {code}; see {log}").format(
                code=code, log=launch_plan.submitted.get("log")
            ),
            err=True,
        )
        sys.exit(1)


def register(app: typer.Typer) -> None:
    app.command("launch", help=LAUNCH_HELP)(launch)
