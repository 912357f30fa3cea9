"""The JSON Schema of each document, generated from its model and checked in under schemas/ (package
data), so scripts outside gpuwise can validate a document too. `make schemas` (python -m
gpuwise.documents.schemas) rewrites them; tests/documents/test_schemas.py fails when one is stale.

A view's schema lists the fields gpuwise reads back; the others a writer adds are allowed
(additionalProperties), as readers ignore them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpuwise.documents.bench import BenchReport
from gpuwise.documents.doctor import DoctorReport
from gpuwise.documents.fleet import FleetDocument
from gpuwise.documents.ids import (
    BENCH_SCHEMA,
    FLEET_SCHEMA,
    LAUNCH_SCHEMA,
    LINKS_SCHEMA,
    PLAN_SCHEMA,
    REPORT_SCHEMA,
    STABILITY_SCHEMA,
    TUNE_SCHEMA,
)
from gpuwise.documents.launch import LaunchRecord
from gpuwise.documents.links import LinksDocument
from gpuwise.documents.plan import PlanDocument
from gpuwise.documents.stability import StabilityDocument
from gpuwise.documents.tune import TuneDocument

SCHEMA_DIR = Path(__file__).parent / "schemas"
MODELS: dict[str, Any] = {  # schema id -> the model gpuwise reads it with
    BENCH_SCHEMA: BenchReport,
    REPORT_SCHEMA: DoctorReport,
    PLAN_SCHEMA: PlanDocument,
    TUNE_SCHEMA: TuneDocument,
    FLEET_SCHEMA: FleetDocument,
    STABILITY_SCHEMA: StabilityDocument,
    LAUNCH_SCHEMA: LaunchRecord,
    LINKS_SCHEMA: LinksDocument,
}


def file_name(schema_id: str) -> str:
    """gpuwise-plan/1 -> gpuwise-plan-1.schema.json"""
    return schema_id.replace("/", "-") + ".schema.json"


def schema_of(schema_id: str) -> dict:
    from pydantic import TypeAdapter

    schema = TypeAdapter(MODELS[schema_id]).json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": file_name(schema_id),
        "title": schema.pop("title", schema_id),
        "description": f"{schema_id}, generated from the model gpuwise reads it with (docs/documents.md)",
        **schema,
    }


def schema_text(schema_id: str) -> str:
    return json.dumps(schema_of(schema_id), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write every schema file; with --check, only say which differ (exit 1)."""
    from gpuwise.atomic import write_text_atomic

    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = [sid for sid in MODELS if _read(SCHEMA_DIR / file_name(sid)) != schema_text(sid)]
    for sid in stale:
        if check:
            print(f"stale: {SCHEMA_DIR / file_name(sid)} (run `make schemas`)")
        else:
            write_text_atomic(SCHEMA_DIR / file_name(sid), schema_text(sid))
            print(f"wrote {SCHEMA_DIR / file_name(sid)}")
    return 1 if check and stale else 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
