"""Files given to doctor beside a capture (NCCL logs, step profiles) are read like every other input:
a FIFO under such a name hung `doctor` forever; it is now refused at once, exit 3."""

from __future__ import annotations

import shutil

import pytest

from gpuwise.errors import EXIT_COULD_NOT_RUN
from tests.hostile import builders as b


@pytest.mark.parametrize(
    ("option", "needle"),
    [("--nccl-log", "NCCL log"), ("--profile", "cannot read profile"), ("--evidence", "evidence file")],
)
def test_a_fifo_given_to_doctor_never_blocks(sandbox, option, needle):
    shutil.copytree(b.TESTS / "captures" / "h200-1gpu-kvm-vm", sandbox.work / "cap")
    b.fifo(sandbox.work / "in.log")
    sandbox.freeze_inputs()
    sandbox.run("doctor", "--from", "cap", option, "in.log").check(
        EXIT_COULD_NOT_RUN, needle, "not a regular file"
    )
