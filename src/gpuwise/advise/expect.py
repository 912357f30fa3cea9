"""Expectations about a node (`--expect gpus=8,ib=4`): what the operator knows it should have.

A probe can only see what is there; a GPU that fell off the bus or an InfiniBand port that never
came up is simply absent. The operator's expectation turns "7 GPUs" into "7 of 8 GPUs" and a
critical finding. `parse_expect` validates the text, `check_expectations` compares it with Facts.
Doctor can reuse both (issue 11).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from gpuwise.advise.finding import Evidence, Finding, Recommendation
from gpuwise.errors import UserInputError
from gpuwise.facts.models import Facts
from gpuwise.i18n import N_, joined, msg

SOURCE = N_("the operator's expectation (--expect), i.e. this node's known configuration")
FIX = N_("write --expect as comma-separated key=value pairs, e.g. --expect gpus=8,ib=4,pcie_width=16")


@dataclass(frozen=True)
class Check:
    key: str
    describe: str  # "GPUs", "active InfiniBand/RoCE ports"
    kind: type  # int or str
    measure: Callable[[Facts], object]
    evidence_path: str
    at_least: bool = False  # pass when the measured value >= the expected one (a minimum)


def _active_ib(f: Facts) -> int:
    return sum(1 for d in f.network.rdma_devices for p in d.ports if p.state == "ACTIVE")


def _min_pcie_width(f: Facts) -> int | None:
    widths = [g.pcie.width_current for g in f.gpus if g.pcie.width_current is not None]
    return min(widths) if widths else None


CHECKS: dict[str, Check] = {
    c.key: c
    for c in (
        Check("gpus", N_("GPUs"), int, lambda f: len([g for g in f.gpus if g.error is None]), "gpus"),
        Check(
            "ib",
            N_("active InfiniBand/RoCE ports"),
            int,
            _active_ib,
            "network.rdma_devices[*].ports[*].state",
        ),
        Check(
            "driver", N_("NVIDIA driver"), str, lambda f: f.software.driver_version, "software.driver_version"
        ),
        Check(
            "pcie_width",
            N_("narrowest GPU PCIe link width"),
            int,
            _min_pcie_width,
            "gpus[*].pcie.width_current",
            at_least=True,
        ),
    )
}


def parse_expect(text: str) -> dict[str, object]:
    """'gpus=8,ib=4' -> {"gpus": 8, "ib": 4}; UserInputError (with a did-you-mean) on anything else."""
    out: dict[str, object] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        key, raw = key.strip().lower(), raw.strip()
        if not sep or not raw:
            raise UserInputError(msg("--expect: {part!r} is not key=value").format(part=part), msg(FIX))
        if key not in CHECKS:
            near = difflib.get_close_matches(key, CHECKS, n=1)
            hint = msg(" (did you mean {name!r}?)").format(name=near[0]) if near else ""
            raise UserInputError(
                msg("--expect: unknown key {key!r}{hint}; known: {join}").format(
                    key=key, hint=hint, join=joined(", ", CHECKS)
                ),
                msg(FIX),
            )
        if CHECKS[key].kind is int:
            try:
                out[key] = int(raw)
            except ValueError:
                raise UserInputError(
                    msg("--expect {key}={raw}: {key} takes a whole number").format(key=key, raw=raw), msg(FIX)
                ) from None
        else:
            out[key] = raw
    if not out:
        raise UserInputError(msg("--expect is empty"), msg(FIX))
    return out


def check_expectations(facts: Facts, expected: dict[str, object]) -> list[Finding]:
    """One finding per expectation: pass when met, a critical (fail, high) finding when not."""
    out = []
    for key, want in expected.items():
        c = CHECKS[key]
        got = c.measure(facts)
        ok = got is not None and (got >= want if c.at_least else got == want)  # type: ignore[operator]
        found = got if got is not None else msg("unknown")
        if ok:
            title = msg("{what}: {got} as expected").format(what=msg(c.describe), got=got)
        elif c.at_least:
            title = msg("expected {what} >= {want}, found {got}").format(
                what=msg(c.describe), want=want, got=found
            )
        else:
            title = msg("expected {what} {want}, found {got}").format(
                what=msg(c.describe), want=want, got=found
            )
        out.append(
            Finding(
                id=f"expect.{key}",
                layer="network" if key == "ib" else "driver-cuda" if key == "driver" else "hardware",
                priority="high",
                status="pass" if ok else "fail",
                title=title,
                evidence=[
                    Evidence(path=c.evidence_path, value=got),
                    Evidence(path=f"--expect {key}", value=want),
                ],
                recommendation=Recommendation(
                    text=""
                    if ok
                    else msg(
                        "Take the node out of service and repair it, or correct --expect "
                        "if the node's configuration changed on purpose."
                    )
                ),
                source=msg(SOURCE),
            )
        )
    return out


def short_reason(findings: list[Finding], limit: int = 80) -> str:
    """A drain reason for `scontrol update ... reason=`: the failed titles, cut to `limit` characters.
    Slurm shows it to every operator (`sinfo -R`): the titles' English text, whatever this run's --lang."""
    # str.join: the titles' English text, plain (a drain reason is never worded)
    text = "gpuwise: " + joined("; ", (str.__str__(f.title) for f in findings if f.status == "fail"))
    return text if len(text) <= limit else text[: limit - 3] + "..."
