"""Every schema id gpuwise writes into a JSON document or file format, in one place.

A writer puts its id in the document's "schema" (or "format") field; a reader checks it before it
reads anything else. Bump the number only for a change an old reader would misread (docs/documents.md).
"""

from __future__ import annotations

# documents commands pass to each other (their models are in this package, their JSON Schemas in schemas/)
FACTS_SCHEMA = "gpuwise-facts/1"  # gpuwise probe --json
BENCH_SCHEMA = "gpuwise-bench/1"  # gpuwise bench --save
REPORT_SCHEMA = "gpuwise-report/1"  # gpuwise doctor --format json (the doctor document)
PLAN_SCHEMA = "gpuwise-plan/1"  # gpuwise plan --format json
TUNE_SCHEMA = "gpuwise-tune/1"  # gpuwise tune --format json
FLEET_SCHEMA = "gpuwise-fleet/1"  # gpuwise fleet report --format json
STABILITY_SCHEMA = "gpuwise-stability/1"  # gpuwise stability --save
PROFILE_SCHEMA = "gpuwise-profile/1"  # gpuwise profile --format json
LAUNCH_SCHEMA = "gpuwise-launch/1"  # the launch record gpuwise launch writes next to its scripts
LINKS_SCHEMA = "gpuwise-links/1"  # the fleet link test's result (fleet/linktest.py)
ALLOCATION_SCHEMA = "gpuwise-allocation/1"  # a node's cross-node preflight result (fleet/allocation.py)
PREFLIGHT_VERDICT_SCHEMA = "gpuwise-preflight-verdict/1"  # which nodes a launch excludes (launch/verdict.py)

# formats of raw recordings
CAPTURE_FORMAT = "gpuwise-capture/1"  # gpuwise capture: a directory or tarball
NVML_FORMAT = "gpuwise-nvml/1"  # commands/nvml.txt inside a capture
WATCH_FORMAT = "gpuwise-watch/1"  # gpuwise watch --record (JSON lines)
ONPREM_COSTS_SCHEMA = "gpuwise-onprem-costs/1"  # the on-prem costs YAML plan reads

# outputs only a person or a script reads (no gpuwise command reads them back)
COMPARE_SCHEMA = "gpuwise-compare/1"
CATALOG_SCHEMA = "gpuwise-catalog/1"
CAPTURE_SUMMARY_SCHEMA = "gpuwise-capture-summary/1"
FLEET_HEALTH_SCHEMA = "gpuwise-fleet-health/1"
HISTORY_SCHEMA = "gpuwise-history/1"
STABILITY_RANK_SCHEMA = "gpuwise-stability-rank/1"
WATCH_SUMMARY_SCHEMA = "gpuwise-watch-summary/1"

SCHEMA_IDS: tuple[str, ...] = tuple(
    value for name, value in sorted(globals().items()) if name.endswith(("_SCHEMA", "_FORMAT"))
)
