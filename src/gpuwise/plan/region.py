"""Which options an organisation can buy where it is: export controls on builds, data residency on offers.

The rules are data (plan/data/region_rules.yaml, each with its public source). `exclude(...)` is called
where the planner gathers its options; it returns the options that remain and one typed `Exclusion`
per option it removed, which the plan shows with its reason and source. An org without a
`jurisdiction` gets no exclusions: gpuwise never guesses where a user is.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Protocol

import yaml

from gpuwise.i18n import N_, joined, msg

RULES_FILE = "data/region_rules.yaml"


@dataclass(frozen=True)
class Exclusion:
    """One option the plan left out, and why."""

    kind: str  # "build" or "offer"
    name: str  # the build's name, or "provider instance region"
    rule: str  # "export-control:<rule id>" or "data-residency"
    detail: str  # what about this option broke the rule
    reason: str  # the rule itself, the same for every option it excludes
    source: str  # public source of the rule ("" when the rule is gpuwise's own logic)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _ExportRule:
    id: str
    jurisdictions: frozenset[str]
    gpu_classes: tuple[str, ...]
    reason: str
    source: str


@dataclass(frozen=True)
class RegionRules:
    jurisdictions: dict[str, str]  # code -> label
    regions: tuple[tuple[str, str, str], ...]  # (pattern, jurisdiction, source)
    regionless: dict[str, tuple[str, str]]  # provider -> (jurisdiction, source) for offers without a region
    export_rules: tuple[_ExportRule, ...]

    def jurisdiction_of(self, region: str | None, provider: str | None = None) -> tuple[str | None, str]:
        """(jurisdiction code, source) of a cloud region (or of a provider's region-less offers);
        (None, "") when nothing matches."""
        if not region:
            return self.regionless.get((provider or "").lower(), (None, ""))
        for pattern, code, source in self.regions:
            if fnmatch.fnmatchcase(region.lower(), pattern):
                return code, source
        return None, ""


@functools.cache
def load_rules() -> RegionRules:
    """The shipped rules (cached). The file ships with gpuwise; a malformed one is a programming error."""
    raw = yaml.safe_load(resources.files("gpuwise.plan").joinpath(RULES_FILE).read_text(encoding="utf-8"))
    return RegionRules(
        jurisdictions={str(k).lower(): str(v) for k, v in raw["jurisdictions"].items()},
        regions=tuple((r["pattern"].lower(), r["jurisdiction"], r["source"]) for r in raw["regions"]),
        regionless={
            r["provider"].lower(): (r["jurisdiction"], joined(" ", r["source"].split()))
            for r in raw["regionless"]
        },
        export_rules=tuple(
            _ExportRule(
                id=r["id"],
                jurisdictions=frozenset(j.lower() for j in r["jurisdictions"]),
                gpu_classes=tuple(c.upper() for c in r["gpu_classes"]),
                reason=joined(" ", r["reason"].split()),
                source=joined(" ", r["source"].split()),
            )
            for r in raw["export_rules"]
        ),
    )


def known_jurisdictions() -> list[str]:
    return sorted(load_rules().jurisdictions)


def gpu_in_class(gpu_key: str, gpu_class: str) -> bool:
    """Catalog key `gpu_key` belongs to `gpu_class`: "A100" covers "A100-SXM-80GB", never "A10" or "GH200"."""
    key, cls = gpu_key.upper(), gpu_class.upper()
    return key == cls or key.startswith(cls + "-")


class _Org(Protocol):
    jurisdiction: str | None
    data_residency: str


class _Build(Protocol):
    name: str
    gpu: str


class _CloudRow(Protocol):
    provider: str | None
    instance_type: str | None
    region: str | None


def build_exclusion(org: _Org, build: _Build, gpu_key: str | None) -> Exclusion | None:
    """The export rule that forbids buying this build in the org's jurisdiction, if any."""
    where = (org.jurisdiction or "").lower()
    for rule in load_rules().export_rules:
        if where in rule.jurisdictions and any(
            gpu_in_class(gpu_key or build.gpu, c) for c in rule.gpu_classes
        ):
            label = msg(load_rules().jurisdictions.get(where, where))
            detail = msg("{gpu} servers for {jurisdiction}").format(
                gpu=gpu_key or build.gpu, jurisdiction=label
            )
            return Exclusion(
                "build", build.name, f"export-control:{rule.id}", detail, rule.reason, rule.source
            )
    return None


RESIDENCY_REASON = N_(
    "data_residency is 'region': only offers in a region of the organisation's jurisdiction qualify; "
    "an offer whose region is missing or unknown cannot show where the data would live"
)  # shown with msg(); an export rule's reason comes from region_rules.yaml (babel.cfg extracts it)


def offer_exclusion(org: _Org, row: _CloudRow) -> Exclusion | None:
    """Data residency "region": an offer outside the org's jurisdiction (or in no known region) is out."""
    if not org.jurisdiction or org.data_residency != "region":
        return None
    rules = load_rules()
    where, source = rules.jurisdiction_of(row.region, row.provider)
    name = joined(" ", (x for x in (row.provider, row.instance_type, row.region) if x))
    label = msg(rules.jurisdictions.get(org.jurisdiction.lower(), org.jurisdiction))
    if where is None:
        detail = (
            msg("region {region} is not in gpuwise's region table").format(region=row.region)
            if row.region
            else msg("no region listed")
        )
        return Exclusion("offer", name, "data-residency", detail, RESIDENCY_REASON, "")
    if where != org.jurisdiction.lower():
        detail = msg("{where} is in {jurisdiction}, not {org_jurisdiction}").format(
            where=row.region or msg("its price"),
            jurisdiction=msg(rules.jurisdictions[where]),
            org_jurisdiction=label,
        )
        return Exclusion("offer", name, "data-residency", detail, RESIDENCY_REASON, source)
    return None


def exclude(org: _Org, cloud_rows: list, builds: list, gpu_key_of) -> tuple[list, list, list[Exclusion]]:
    """(cloud rows kept, builds kept, exclusions), one exclusion per removed offer or build.

    `gpu_key_of(build)` gives the catalog key of a build's GPU (None when the catalog does not know it).
    """
    excluded: dict[str, Exclusion] = {}
    kept_rows = []
    for row in cloud_rows:
        why = offer_exclusion(org, row)
        if why is None:
            kept_rows.append(row)
        else:
            excluded.setdefault(f"offer:{why.name}", why)  # one line per offer, not per pricing
    kept_builds = []
    for build in builds:
        why = build_exclusion(org, build, gpu_key_of(build))
        if why is None:
            kept_builds.append(build)
        else:
            excluded.setdefault(f"build:{why.name}", why)
    return kept_rows, kept_builds, list(excluded.values())
