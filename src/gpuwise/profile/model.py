"""What a profile run returns (JSON `gpuwise-profile/1`) and how tune and doctor read it back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, ValidationError

from gpuwise.datafiles import read_input_text
from gpuwise.documents.ids import PROFILE_SCHEMA as SCHEMA
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, msg
from gpuwise.textmodel import TextModel


class Phase(TextModel):
    name: str  # data | forward | backward | optimizer | all-reduce | other
    ms_per_step: float
    fraction: float


class TopOp(TextModel):
    name: str
    calls_per_step: float
    ms_per_step: float


class ProfileFinding(TextModel):
    id: str  # data-loader-bound | exposed-communication | launch-bound | host-to-device-stall
    severity: str  # warning | info
    title: str
    evidence: str
    recommendation: str
    source: str


class ProfileResult(TextModel):
    schema_: str = Field(SCHEMA, alias="schema")
    workload: str
    device: str
    batch_size: int
    wait_steps: int
    warmup_steps: int
    active_steps: int = Field(ge=1)
    trace_path: str
    step_ms: float = Field(gt=0)
    samples_per_s: float
    phases: list[Phase]
    top_ops: list[TopOp] = Field(default_factory=list)
    gpu_kernels: dict = Field(default_factory=dict)
    findings: list[ProfileFinding] = Field(default_factory=list)
    analysis: str = ""  # how the trace was analysed (and why not with HTA)

    model_config = {"populate_by_name": True}

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def prior(self) -> str | None:
        """The category tune should search first: "data", "communication" or None."""
        ids = {f.id for f in self.findings}
        if "exposed-communication" in ids:
            return "communication"
        if "data-loader-bound" in ids:
            return "data"
        return None


@dataclass(frozen=True)
class LoadedProfile:
    """A profile and the file it came from (findings cite it; the tune command passes it back)."""

    source: str
    result: ProfileResult


MAX_PROFILE_BYTES = 64 << 20  # a profile JSON is a few KB; the trace it summarises is a separate file


def read_profile(path: Path) -> ProfileResult:
    """Load a gpuwise-profile/1 JSON; a wrong or broken file becomes a UserInputError."""
    from gpuwise.errors import UserInputError

    fix = msg("pass the JSON written by `gpuwise profile --format json -o FILE`")
    try:
        if Path(path).stat().st_size > MAX_PROFILE_BYTES:
            raise UserInputError(
                msg("{path} is larger than {mib} MiB: not a {schema} document (a profiler trace?)").format(
                    path=path, mib=MAX_PROFILE_BYTES >> 20, schema=SCHEMA
                ),
                fix=fix,
            )
        data = json.loads(read_input_text(path, N_("profile")))  # regular files only: a FIFO never blocks
    except DataValidationError as exc:
        raise UserInputError(
            msg("cannot read profile {path}: {exc}").format(path=path, exc=exc.reason), fix=fix
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserInputError(
            msg("cannot read profile {path}: {exc}").format(path=path, exc=exc), fix=fix
        ) from None
    if isinstance(data, dict) and "traceEvents" in data:
        raise UserInputError(
            msg("{path} is a Chrome/Kineto trace, not a {schema} document").format(path=path, schema=SCHEMA),
            fix=msg(
                "profile with `gpuwise profile ... --format json -o profile.json` and pass profile.json "
                "(the trace stays for Perfetto)"
            ),
        )
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise UserInputError(
            msg("{path} is not a {schema} document (schema: {got!r})").format(
                path=path, schema=SCHEMA, got=got
            ),
            fix=fix,
        )
    try:
        return ProfileResult.model_validate(data)
    except ValidationError as exc:
        raise UserInputError(
            msg("{path}: invalid {schema} document: {errors}").format(
                path=path, schema=SCHEMA, errors=exc.errors()[0]["msg"]
            ),
            fix=fix,
        ) from None


def read_profiles(paths: list[Path]) -> list[LoadedProfile]:
    """Read each gpuwise-profile/1 file (doctor --profile, repeatable); the first bad one stops with why."""
    return [LoadedProfile(source=str(p), result=read_profile(p)) for p in paths]
