"""YAML within the documented input limit costs seconds and megabytes, not minutes and gigabytes
(issue 28.2: a 4 MiB flow list took `plan` 2 min 49 s and 1.67 GB; 16 MiB reached 5.0 GB), and a
number out of range is an error at its line, not "internal error ... please report it".

benchmarks/yaml_input_limits.py measures every shape up to the 64 MiB input limit.
"""

from __future__ import annotations

import pytest
from benchmarks.yaml_input_limits import write_case

from gpuwise.catalog.yamlfile import MAX_NODES
from gpuwise.errors import EXIT_COULD_NOT_RUN
from tests.hostile import builders as b

MiB = 1024 * 1024


@pytest.mark.parametrize(
    ("shape", "needle"),
    [
        ("flow-list", f"more than {MAX_NODES:,} values"),
        ("block-list", f"more than {MAX_NODES:,} values"),
        ("long-value", "the limit is 65,536"),
        ("deep-nesting", "nesting depth"),
        ("huge-ints", "a number with 5,000 digits"),
    ],
)
def test_a_16_mib_hostile_yaml_is_refused_within_bounds(sandbox, shape, needle):
    write_case(sandbox.work / "w.yaml", shape, 16 * MiB)
    sandbox.freeze_inputs()
    sandbox.run("plan", "w.yaml").check(EXIT_COULD_NOT_RUN, "w.yaml:", needle)


def test_a_file_just_within_the_node_limit_is_parsed_within_bounds(sandbox):
    write_case(sandbox.work / "w.yaml", "under-limits", MiB)
    sandbox.freeze_inputs()
    sandbox.run("plan", "w.yaml").check(EXIT_COULD_NOT_RUN, "w.yaml:4: unknown field 'flows'")


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("epochs: 90", "epochs: 1.0e400", "w.yaml:13: 1.0e400 is out of range"),
        ("epochs: 90", 'epochs: "1.0e400"', "w.yaml:13: 'training.epochs' is inf"),
        ("samples: 1281167", "samples: " + "9" * 5000, "w.yaml:20: a number with 5,000 digits"),
        ("epochs: 90", "epochs: .inf", "w.yaml:13: 'training.epochs' is inf"),
    ],
)
def test_a_number_out_of_range_is_an_error_at_its_line(sandbox, old, new, needle):
    text = b.WORKLOAD.read_text()
    assert old in text
    (sandbox.work / "w.yaml").write_text(text.replace(old, new))
    sandbox.freeze_inputs()
    out = sandbox.run("plan", "w.yaml").check(EXIT_COULD_NOT_RUN, needle)
    assert "internal error" not in out.stderr
