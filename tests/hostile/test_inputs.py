"""Hostile inputs (issue 10's table plus more), each through the real CLI with bounded memory and time.

Every case asserts a named exit code (gpuwise.errors.EXIT_*), a message that says how to fix it, peak
RSS < 500 MB and < 10 s (harness.Outcome.check), and that no file outside the sandbox changed
(the `sandbox` fixture's teardown).
"""

from __future__ import annotations

import json
import os
import re
import tarfile

import pytest

from gpuwise.errors import EXIT_COULD_NOT_RUN, EXIT_OK
from tests.hostile import builders as b


def test_yaml_alias_bomb_is_refused_at_its_line(sandbox):
    b.yaml_alias_bomb(sandbox.work / "b.yaml")
    sandbox.freeze_inputs()
    sandbox.run("plan", "b.yaml").check(EXIT_COULD_NOT_RUN, "b.yaml:2:", "aliases are not accepted")


def test_gzip_bomb_capture_stops_at_the_member_cap(sandbox):
    b.gzip_bomb_tar(sandbox.work / "bomb.tar.gz")
    assert (sandbox.work / "bomb.tar.gz").stat().st_size < 4 * 1024 * 1024
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "bomb.tar.gz").check(
        EXIT_COULD_NOT_RUN, "exceeds the limit of 16,777,216", "GPUWISE_CAPTURE_MAX_FILE_BYTES"
    )


def test_gzip_bomb_under_a_raised_member_cap_still_stops_at_the_stream_cap(sandbox):
    """Raise the per-member cap past the bomb: the total and decompressed-stream caps still hold."""
    b.gzip_bomb_tar(sandbox.work / "bomb.tar.gz")
    sandbox.freeze_inputs()
    env = sandbox.env(GPUWISE_CAPTURE_MAX_FILE_BYTES=str(4 * b.GiB))
    sandbox.run("probe", "--from", "bomb.tar.gz", env=env).check(EXIT_COULD_NOT_RUN, "exceeds the limit")


@pytest.mark.parametrize("command", [("probe",), ("doctor",)])
def test_symlink_out_of_a_directory_capture_is_refused(sandbox, command):
    cap = b.capture_copy(sandbox.work / "cap")
    target = cap / "files/etc/os-release"
    target.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to("/etc/os-release")
    sandbox.freeze_inputs()
    out = sandbox.run(*command, "--from", "cap").check(EXIT_COULD_NOT_RUN, "leads outside the capture")
    with open("/etc/os-release") as fh:
        assert fh.readline().strip() not in out.stdout  # the reader's own OS never shows up


def test_symlink_inside_a_directory_capture_is_followed(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    (cap / "files/etc/hostname").unlink(missing_ok=True)
    (cap / "files/etc/hostname").symlink_to("../proc/cmdline")  # stays inside the capture root
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_OK)


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("symlink", lambda m: (setattr(m, "type", tarfile.SYMTYPE), setattr(m, "linkname", "/etc/shadow"))),
        ("hardlink", lambda m: (setattr(m, "type", tarfile.LNKTYPE), setattr(m, "linkname", "meta.json"))),
        ("fifo", lambda m: setattr(m, "type", tarfile.FIFOTYPE)),
        ("device", lambda m: setattr(m, "type", tarfile.CHRTYPE)),
    ],
)
def test_non_regular_tar_members_are_refused_by_name(sandbox, kind, make):
    path = sandbox.work / "c.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        meta = json.dumps(b.META).encode()
        info = tarfile.TarInfo("meta.json")
        info.size = len(meta)
        tar.addfile(info, __import__("io").BytesIO(meta))
        member = tarfile.TarInfo("files/etc/os-release")
        make(member)
        tar.addfile(member)
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "c.tar.gz").check(
        EXIT_COULD_NOT_RUN, "'files/etc/os-release' is", "only regular files"
    )


def test_capture_tarball_with_100k_members_stops_at_the_count_cap(sandbox):
    b.many_members_tar(sandbox.work / "many.tar.gz")
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "many.tar.gz").check(
        EXIT_COULD_NOT_RUN, "number of members exceeds the limit of 10,000", "GPUWISE_CAPTURE_MAX_FILES"
    )


def test_one_gigabyte_single_line_capture_file_is_refused(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    b.sparse_file(cap / "files/proc/cpuinfo", b.GiB, b"processor : 0 ")
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_COULD_NOT_RUN, "files/proc/cpuinfo", "exceeds the limit")


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("plan", "{}"), "w.yaml"),
        (("plan", "examples.yaml", "--options", "{}"), "o.yaml"),
        (("catalog", "offers", "--catalog", "."), "x.csv"),
        (("catalog", "import-skypilot", "{}", "--provider", "aws", "-o", "out.csv"), "vms.csv"),
        (("plan", "examples.yaml", "--calibrate", "{}"), "b.json"),
        (("doctor", "--from", "cap", "--bench-results", "{}"), "b.json"),
    ],
)
def test_one_gigabyte_single_line_inputs_are_refused_at_once(sandbox, args, name):
    b.capture_copy(sandbox.work / "cap")
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    head = b"x: " if name.endswith("yaml") else b"InstanceType," if name == "vms.csv" else b"Provider,"
    b.sparse_file(sandbox.work / name, b.GiB, head)
    sandbox.freeze_inputs()
    out = sandbox.run(*(a.format(name) if a == "{}" else a for a in args))
    out.check(EXIT_COULD_NOT_RUN, "larger than the limit of 67,108,864 bytes", "GPUWISE_MAX_INPUT_BYTES")


@pytest.mark.parametrize(
    ("args", "name", "needle"),
    [
        (("plan", "{}"), "w.yaml", "not a regular file"),
        (("catalog", "offers", "--catalog", "."), "x.csv", "not a regular file"),
        (("plan", "examples.yaml", "--calibrate", "{}"), "b.json", "not a regular file"),
        (("probe", "--from", "{}"), "cap", "not a gpuwise capture"),
    ],
)
def test_a_fifo_as_input_never_blocks(sandbox, args, name, needle):
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    b.fifo(sandbox.work / name)
    sandbox.freeze_inputs()
    sandbox.run(*(a.format(name) if a == "{}" else a for a in args)).check(EXIT_COULD_NOT_RUN, needle)


def test_a_fifo_inside_a_directory_capture_never_blocks(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    (cap / "files/proc/cpuinfo").unlink()
    b.fifo(cap / "files/proc/cpuinfo")
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_COULD_NOT_RUN, "not a regular file")


LATIN1 = "name: caf\xe9\n".encode("latin-1")


@pytest.mark.parametrize(
    ("args", "name", "content"),
    [
        (("plan", "{}"), "w.yaml", LATIN1),
        (("plan", "examples.yaml", "--options", "{}"), "o.yaml", LATIN1),
        (("catalog", "offers", "--catalog", "."), "x.csv", b"Provider,InstanceType\nacme,caf\xe9\n"),
        (("plan", "examples.yaml", "--calibrate", "{}"), "b.json", b'{"schema": "caf\xe9"}'),
    ],
)
def test_non_utf8_inputs_name_the_file_and_line(sandbox, args, name, content):
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    (sandbox.work / name).write_bytes(content)
    sandbox.freeze_inputs()
    out = sandbox.run(*(a.format(name) if a == "{}" else a for a in args))
    out.check(EXIT_COULD_NOT_RUN, "not UTF-8", name)


def test_non_utf8_bytes_inside_a_capture_are_read_not_fatal(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    (cap / "files/etc/os-release").write_bytes(b'NAME="Caf\xe9 \xff\xfe Linux"\n')
    (cap / "commands/lscpu.txt").write_bytes((cap / "commands/lscpu.txt").read_bytes() + b"\xff\xfe\x00\n")
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_OK)


def test_deep_json_nesting_in_a_capture_is_a_reason_not_a_crash(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    (cap / "commands/ip-j-addr.txt").write_text(b.deep_json())
    (cap / "commands/findmnt-J.txt").write_text(b.deep_json())
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_OK)


def test_deep_json_nesting_in_meta_and_bench_results_is_refused(sandbox):
    cap = b.capture_copy(sandbox.work / "cap")
    (cap / "meta.json").write_text(b.deep_json())
    (sandbox.work / "b.json").write_text(b.deep_json())
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    sandbox.freeze_inputs()
    sandbox.run("probe", "--from", "cap").check(EXIT_COULD_NOT_RUN, "meta.json is not valid JSON")
    sandbox.run("plan", "examples.yaml", "--calibrate", "b.json").check(
        EXIT_COULD_NOT_RUN, "nested too deeply"
    )


def test_deep_yaml_nesting_is_refused(sandbox):
    (sandbox.work / "w.yaml").write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    sandbox.freeze_inputs()
    sandbox.run("plan", "w.yaml").check(EXIT_COULD_NOT_RUN, "w.yaml")


@pytest.mark.parametrize(
    ("header", "row", "needle"),
    [
        (
            "Provider,InstanceType,AcceleratorName,Prise",
            "acme,x1,H100,2.5",
            "unknown column 'Prise' (did you mean \"Price\"?)",
        ),
        ("Provider,InstanceType,Price", "acme,x1,nan", "'nan' is not a finite number"),
        ("Provider,InstanceType,Price,Price", "acme,x1,2.5,3", "column 'Price' appears twice"),
        ("Provider,InstanceType,Price", "acme,x1,inf", "'inf' is not a finite number"),
    ],
)
def test_offers_csv_typos_nan_and_duplicate_columns_are_errors(sandbox, header, row, needle):
    (sandbox.work / "acme.csv").write_text(f"{header}\n{row}\n")
    sandbox.freeze_inputs()
    sandbox.run("catalog", "offers", "--catalog", ".").check(EXIT_COULD_NOT_RUN, "acme.csv:", needle)


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN"])
def test_workload_non_finite_numbers_are_refused_without_numpy_warnings(sandbox, value):
    text = b.WORKLOAD.read_text().replace("params: 25.6e6", f"params: {value}")
    (sandbox.work / "w.yaml").write_text(text)
    sandbox.freeze_inputs()
    out = sandbox.run("plan", "w.yaml").check(EXIT_COULD_NOT_RUN, "'model.params' is", "not a finite number")
    assert "Warning" not in out.stderr and re.search(r"w\.yaml:\d+:", out.stderr)


def test_options_file_non_finite_numbers_are_refused(sandbox):
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    (sandbox.work / "o.yaml").write_text("cloud:\n  max_price_per_hour: .inf\n")
    sandbox.freeze_inputs()
    sandbox.run("plan", "examples.yaml", "--options", "o.yaml").check(
        EXIT_COULD_NOT_RUN, "not a finite number"
    )


def test_bench_json_nan_is_refused(sandbox):
    (sandbox.work / "examples.yaml").write_text(b.WORKLOAD.read_text())
    doc = (b.TESTS / "captures" / "h200-1gpu-kvm-vm.bench-quick.json").read_text()
    (sandbox.work / "b.json").write_text(re.sub(r'"value": [0-9.e+-]+', '"value": NaN', doc, count=1))
    sandbox.freeze_inputs()
    sandbox.run("plan", "examples.yaml", "--calibrate", "b.json").check(EXIT_COULD_NOT_RUN, "NaN")


@pytest.mark.parametrize("debug", [(), ("--debug",)])
def test_debug_keeps_the_exit_code(sandbox, debug):
    sandbox.freeze_inputs()
    out = sandbox.run(*debug, "probe", "--from", "garbage")
    assert out.rc == EXIT_COULD_NOT_RUN and "To fix" in out.stderr
    assert ("Traceback" in out.stderr) == bool(debug)


@pytest.mark.parametrize(
    "command", ["", "probe", "capture", "bench", "doctor", "plan", "catalog", "catalog offers"]
)
def test_help_shows_no_bool_metavar(sandbox, command):
    sandbox.freeze_inputs()
    out = sandbox.run(*command.split(), "--help")
    assert out.rc == EXIT_OK and "Usage" in out.stdout
    assert "<bool>" not in out.stdout and "BOOLEAN" not in out.stdout


def test_exit_code_table_is_in_the_top_level_help(sandbox):
    sandbox.freeze_inputs()
    out = sandbox.run("--help")
    for text in ("3 = could not run", "4 = a benchmark failed", "130 = interrupted"):
        assert text in out.stdout.replace("\n", " ").replace("│", " ").replace("  ", " ")


def test_environment_overrides_of_the_caps_are_checked(sandbox):
    b.capture_copy(sandbox.work / "cap")
    sandbox.freeze_inputs()
    env = sandbox.env(GPUWISE_CAPTURE_MAX_FILES="many")
    sandbox.run("probe", "--from", "cap", env=env).check(EXIT_COULD_NOT_RUN, "GPUWISE_CAPTURE_MAX_FILES")
    assert os.environ.get("GPUWISE_CAPTURE_MAX_FILES") is None


def test_a_key_set_twice_in_a_yaml_file_is_refused_at_its_line(sandbox):
    """PyYAML keeps the last of two equal keys without a word: `params` written twice would plan a model
    the user did not mean. The error names both lines."""
    lines = b.WORKLOAD.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "params: 25.6e6" in line)
    lines.insert(at + 1, lines[at].replace("25.6e6", "25.6e9"))
    (sandbox.work / "w.yaml").write_text("\n".join(lines) + "\n")
    sandbox.freeze_inputs()
    sandbox.run("plan", "w.yaml").check(
        EXIT_COULD_NOT_RUN, f"w.yaml:{at + 2}:", f"'model.params' is set twice (first on line {at + 1})"
    )
