"""JOB.yaml validation and the torchrun line every target runs."""

from __future__ import annotations

import pytest

from gpuwise.errors import DataValidationError
from gpuwise.launch.job import Dataset, load_job
from tests.launch.kit import EXAMPLES, write_job


@pytest.mark.parametrize("name", ["job-cpu.yaml", "job-llm.yaml"])
def test_examples_load(name):
    job = load_job(EXAMPLES / name)
    assert job.nodes == 2 and job.command.startswith("torchrun")


def test_torchrun_line_adds_the_multi_node_flags(tmp_path):
    job = load_job(write_job(tmp_path / "j.yaml", command="python train.py --lr 3e-4 --name 'a b'"))
    line = job.torchrun("2", "node1:29500", "x1")
    assert line == (
        "torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint node1:29500 "
        "--rdzv-id x1 train.py --lr 3e-4 --name 'a b'"
    )
    assert job.preflight_expect() == "gpus=8"


def test_a_job_that_sets_its_own_rendezvous_is_refused_at_its_line(tmp_path):
    path = write_job(tmp_path / "j.yaml", command="torchrun --nnodes=4 train.py")
    with pytest.raises(DataValidationError) as exc:
        load_job(path)
    msg = str(exc.value)
    assert f"{path}:2" in msg and "remove --nnodes" in msg and "To fix:" in msg


def test_typo_gets_did_you_mean_and_line(tmp_path):
    path = tmp_path / "j.yaml"
    path.write_text("name: t-job\ncommand: torchrun t.py\ngpu_per_node: 8\n")
    with pytest.raises(DataValidationError) as exc:
        load_job(path)
    assert f"{path}:3" in str(exc.value) and "did you mean 'gpus_per_node'" in str(exc.value)


def test_bad_expectation_key_names_the_known_ones(tmp_path):
    with pytest.raises(DataValidationError, match="'ibb' is not one of ib, driver, pcie_width"):
        load_job(write_job(tmp_path / "j.yaml", expect={"ibb": 4}))


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("s3://bucket/x", "object-store"),
        ("cos://bkt-125/x", "object-store"),
        ("10.0.0.4:/export/data", "nfs"),
        ("nfs://cfs.local:/imagenet", "nfs"),
        ("/data/imagenet", "local"),
        ("./rel/path", "local"),
    ],
)
def test_dataset_kind(source, kind):
    assert Dataset(source=source).kind == kind


def test_mount_must_be_absolute(tmp_path):
    with pytest.raises(DataValidationError, match="absolute path"):
        load_job(write_job(tmp_path / "j.yaml", dataset={"source": "s3://b/x", "mount": "data"}))


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"name": "ab\n"}, "name", "lowercase letters"),  # `$` in re.match matched before the final newline
        ({"env": {"X\n": "1"}}, "env", "is not an environment variable name"),
        ({"expect": {"driver": "550,gpus=0"}}, "expect", "use letters, digits"),  # would add an expectation
        ({"image": "img\nnext"}, "image", "newline or other control character"),
        ({"workdir": "/w\x1b[2J"}, "workdir", "newline or other control character"),
        (
            {"dataset": {"source": "s3://b/x\ny", "size_gb": 1}},
            "dataset",
            "newline or other control character",
        ),
        ({"dataset": {"source": "s3://b/x", "mount": "/d\n", "size_gb": 1}}, "dataset", "newline or other"),
        ({"setup": ["echo a\x00"]}, "setup", "control character (other than newline and tab)"),
    ],
)
def test_a_value_that_would_add_a_line_to_a_script_is_refused_at_its_line(tmp_path, fields, field, reason):
    path = write_job(tmp_path / "j.yaml", **fields)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith(f"{field}:"))
    with pytest.raises(DataValidationError) as exc:
        load_job(path)
    msg = str(exc.value)
    assert f"{path}:" in msg and reason in msg and "To fix:" in msg
    assert exc.value.line is not None and exc.value.line >= line, msg


def test_newlines_stay_allowed_where_a_shell_takes_them(tmp_path):
    job = load_job(
        write_job(tmp_path / "j.yaml", env={"A": "one\ntwo"}, setup=["for i in 1 2\ndo echo $i\ndone"])
    )
    assert job.env["A"] == "one\ntwo" and job.setup[0].count("\n") == 2
