"""JOB.yaml: what to run (a torchrun command), on how many nodes and GPUs, in which image, with which data.

`load_job(path)` validates the file with pydantic; every mistake names file:line (catalog/yamlfile.py).
The command is the one a user runs on one node (`torchrun ... train.py`, or `python train.py`): each
target adds the multi-node flags (--nnodes, --nproc-per-node, c10d rendezvous) itself, so the file
stays the same whichever target it goes to.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator

from gpuwise.catalog import data_paths
from gpuwise.catalog.yamlfile import validate_file
from gpuwise.i18n import N_, joined, msg
from gpuwise.launch.quoting import sh_words
from gpuwise.textmodel import TextModel

SEE_ALSO = N_("see examples/job-cpu.yaml and examples/job-llm.yaml")
# flags each target sets: a job that sets them too would fight the target's rendezvous
TARGET_FLAGS = ("--nnodes", "--nproc-per-node", "--nproc_per_node", "--rdzv-backend", "--rdzv_backend",
                "--rdzv-endpoint", "--rdzv_endpoint", "--rdzv-id", "--rdzv_id", "--node-rank", "--node_rank",
                "--master-addr", "--master_addr", "--master-port", "--master_port", "--standalone")  # fmt: skip
_TORCHRUN = ("torchrun", "python -m torch.distributed.run", "python3 -m torch.distributed.run")
# full-match patterns (re.fullmatch): `$` would also match before a final newline ("ab\n")
_NAME = re.compile(r"[a-z][a-z0-9-]{0,38}[a-z0-9]")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPECT_WORD = re.compile(r"[A-Za-z0-9._+:-]{1,64}")  # a driver version: no ',' or '=' (the --expect syntax)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # newline and tab allowed


def _one_line(v: str) -> str:
    if _CONTROL.search(v):
        raise ValueError(msg("a newline or other control character is not accepted here"))
    return v


def _lines(v: str) -> str:
    if _CONTROL_BUT_LINES.search(v):
        raise ValueError(msg("a control character (other than newline and tab) is not accepted here"))
    return v


OneLine = Annotated[str, AfterValidator(_one_line)]  # paths, names, images: one line, no control characters
Lines = Annotated[str, AfterValidator(_lines)]  # shell commands and env values: newlines allowed


class Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class Dataset(Strict):
    """Where the training data is and where the job sees it."""

    source: OneLine  # a local path, an object-store URL (s3://, cos://, gs://) or an NFS export (host:/path)
    mount: OneLine = "/data"  # where the job reads it on every node
    size_gb: float | None = Field(default=None, gt=0)  # required unless `source` is a local path (measured)
    region: OneLine | None = (
        None  # the bucket's region (e.g. us-east-1, ap-guangzhou); same region: read free
    )
    link_gbps: float | None = Field(default=None, gt=0)  # your measured upload / cross-cloud bandwidth
    dedicated_line_gbps: float | None = Field(default=None, gt=0)  # a Direct Connect / 专线 port you have
    # what the source charges per GB to send the data out, in the run's currency
    egress_price_per_gb: float | None = Field(default=None, ge=0)

    @field_validator("mount")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError(msg("the mount point must be an absolute path such as /data"))
        return v

    @property
    def kind(self) -> Literal["local", "object-store", "nfs"]:
        return data_paths.kind_of(self.source)

    @property
    def scheme(self) -> str:
        return data_paths.scheme_of(self.source)

    @property
    def nfs_export(self) -> str:
        """host:/path for mount -t nfs (nfs://host:/path and host:/path both accepted)."""
        return self.source.removeprefix("nfs://")


class ImageVersions(Strict):
    """The software of the target image, as its documentation lists it (for the migration check)."""

    driver: OneLine | None = None
    cuda: OneLine | None = None
    nccl: OneLine | None = None
    torch: OneLine | None = None


class Job(Strict):
    name: str
    command: Lines
    nodes: int = Field(default=1, ge=1, le=4096)
    gpus_per_node: int = Field(default=8, ge=0, le=64)
    procs_per_node: int | None = Field(default=None, ge=1, le=256)  # default: gpus_per_node (1 without GPUs)
    image: OneLine | None = (
        None  # a container image (skypilot: image_id docker:...; tencent: a CVM ImageId img-...)
    )
    image_versions: ImageVersions | None = None
    setup: list[Lines] = Field(default_factory=list)  # shell commands run once per node before training
    workdir: OneLine | None = None  # a folder synced to every node (skypilot); the job's working directory
    dataset: Dataset | None = None
    env: dict[str, Lines] = Field(default_factory=dict)
    hours: float | None = Field(default=None, gt=0)  # expected training time (else from --plan)
    expect: dict[str, int | str] = Field(default_factory=dict)  # more preflight expectations, e.g. {ib: 4}
    rdzv_port: int = Field(default=29500, ge=1024, le=65535)
    exporter_port: int = Field(default=9401, ge=1024, le=65535)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.fullmatch(v):
            raise ValueError(
                msg("use 2-40 lowercase letters, digits and '-', starting with a letter (a cluster name)")
            )
        return v

    @field_validator("env")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if not _ENV_NAME.fullmatch(k)]
        if bad:
            raise ValueError(msg("{name!r} is not an environment variable name").format(name=bad[0]))
        return {k: str(x) for k, x in v.items()}

    @field_validator("command")
    @classmethod
    def _command(cls, v: str) -> str:
        try:
            words = shlex.split(v)
        except ValueError as exc:
            raise ValueError(
                msg("the command is not valid shell words ({error})").format(error=exc)
            ) from None
        if not words:
            raise ValueError(msg("the command is empty"))
        clash = [w.split("=")[0] for w in words if w.split("=")[0] in TARGET_FLAGS]
        if clash:
            raise ValueError(
                msg("remove {flag}: each target sets the node count and rendezvous itself").format(
                    flag=clash[0]
                )
            )
        return v.strip()

    @field_validator("expect")
    @classmethod
    def _expect(cls, v: dict[str, int | str]) -> dict[str, int | str]:
        from gpuwise.advise.expect import CHECKS

        unknown = [k for k in v if k not in CHECKS or k == "gpus"]
        if unknown:
            raise ValueError(
                msg("expect: {key!r} is not one of {keys} (gpus comes from gpus_per_node)").format(
                    key=unknown[0], keys=joined(", ", (k for k in CHECKS if k != "gpus"))
                )
            )
        for key, value in v.items():
            if isinstance(value, str) and not _EXPECT_WORD.fullmatch(value):
                raise ValueError(
                    msg(
                        "expect: {key}={value!r}: use letters, digits and . _ + : - only (e.g. 550.54.15)"
                    ).format(key=key, value=value)
                )
        return v

    @property
    def nproc_per_node(self) -> int:
        return self.procs_per_node or max(self.gpus_per_node, 1)

    def script_args(self) -> list[str]:
        """The training script and its arguments: the command without its launcher (torchrun or python)."""
        words = shlex.split(self.command)
        for launcher in _TORCHRUN:
            n = len(launcher.split())
            if words[:n] == launcher.split():
                return words[n:]
        if words[0] in ("python", "python3"):
            return words[1:]
        return words  # a script path, run by torchrun directly

    def torchrun(self, nnodes: str, endpoint: str, rdzv_id: str, torchrun: str = "torchrun") -> str:
        """The multi-node launcher line every target runs once per node (c10d rendezvous)."""
        flags = (
            f"--nnodes {nnodes} --nproc-per-node {self.nproc_per_node} --rdzv-backend c10d "
            f"--rdzv-endpoint {endpoint} --rdzv-id {rdzv_id}"
        )
        return f"{torchrun} {flags} {sh_words(self.script_args())}"

    def preflight_expect(self) -> str:
        """The `gpuwise doctor --expect` value: gpus per node, then the job's own expectations."""
        return joined(",", [f"gpus={self.gpus_per_node}", *(f"{k}={v}" for k, v in self.expect.items())])


def load_job(path: str | Path) -> Job:
    """Validate JOB.yaml; DataValidationError (file:line, did-you-mean) on any mistake."""
    return validate_file(Job, path, msg(SEE_ALSO))
