"""Helpers for the launch tests: run the real CLI, write job files."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CAPTURES = REPO / "tests" / "captures"
# the clouds' credential variables (each SDK's documented ones): a test never sends a request with yours
CREDENTIAL_VARIABLES = ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY", "ALIBABA_CLOUD_ACCESS_KEY_ID",
                        "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN", "ALIBABA_CLOUD_ECS_METADATA",
                        "ALIBABA_CLOUD_CREDENTIALS_FILE", "ALIBABA_CLOUD_PROFILE", "HUAWEICLOUD_SDK_AK",
                        "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID", "HUAWEICLOUD_SDK_CREDENTIALS_FILE",
                        "VOLCENGINE_ACCESS_KEY", "VOLCENGINE_SECRET_KEY", "VOLCENGINE_SESSION_TOKEN",
                        "VOLCENGINE_CLI_CONFIG_FILE", "VOLCENGINE_PROFILE", "VOLCENGINE_ECS_METADATA",
                        "BCE_ACCESS_KEY_ID", "BCE_SECRET_ACCESS_KEY", "BCE_SESSION_TOKEN")  # fmt: skip


def gpuwise(*args: str, env: dict | None = None, cwd: Path = REPO) -> SimpleNamespace:
    """The real entry point (errors -> exit 3 with 'To fix'), as a user runs it."""
    e = dict(os.environ, COLUMNS="100", **(env or {}))
    for name in CREDENTIAL_VARIABLES:
        e.pop(name, None)  # never send a request from a test
    e["HOME"] = str(cwd)  # no ~/.tencentcloud (~/.alibabacloud, ~/.aliyun) profile either
    e.setdefault("GPUWISE_WHEEL", str(wheel()))  # built once, not by every dry run
    p = subprocess.run([sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, env=e, cwd=cwd,
                       timeout=120)  # fmt: skip
    return SimpleNamespace(
        exit_code=p.returncode, output=p.stdout + p.stderr, stdout=p.stdout, stderr=p.stderr
    )


@functools.cache
def wheel() -> Path:
    """The gpuwise wheel of this checkout, built once per test session (what a launch ships to its nodes)."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gwla-wheel-"))
    atexit.register(shutil.rmtree, folder, True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder),
                    str(REPO)], check=True, capture_output=True, timeout=300)  # fmt: skip
    return next(folder.glob("gpuwise-*.whl"))


def write_job(path: Path, **fields) -> Path:
    import yaml

    base = {"name": "t-job", "command": "torchrun train.py --epochs 1", "nodes": 2, "gpus_per_node": 8}
    base.update(fields)
    path.write_text(yaml.safe_dump(base, sort_keys=False))
    return path


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hostile(marks: Path, field: str) -> str:
    """A value that runs `touch MARKS/pwned-FIELD-*` wherever a shell reads it as code, by each way in:
    $(...), backticks, ; && |, ${IFS} word splitting, quotes that end a quoted string, globs."""
    m = f"{marks}/pwned-{field}"
    return (
        f"x$(touch {m}-subst)`touch {m}-tick`;touch {m}-semi&&touch {m}-and|touch {m}-pipe"
        f" ${{IFS}}touch${{IFS}}{m}-ifs \"$(touch {m}-dq)\" '$(touch {m}-sq)' * ?[a] \\"
    )


def write_hostile_job(path: Path, marks: Path, source: str, **fields) -> Path:
    """A job whose every string field holds shell metacharacters (`hostile`). Names and env keys cannot
    (job.py refuses them); the command's words and the setup are shell by design, so the command carries a
    hostile argument and unquoted ; && | words, and the setup writes MARKS/setup-ran when it runs."""
    import shlex

    base = path.parent
    data = {
        "name": "gwla-hostile",
        "command": "torchrun train.py --tag " + shlex.quote(hostile(marks, "arg"))
        + f" ; touch {marks}/pwned-cmd-semi && touch {marks}/pwned-cmd-and | touch {marks}/pwned-cmd-pipe",
        "nodes": 1,
        "gpus_per_node": 0,
        "image": hostile(marks, "image"),
        "image_versions": {"driver": hostile(marks, "driver"), "cuda": hostile(marks, "cuda")},
        "setup": [f"echo \"setup $(echo 'a;b|c') ${{IFS}}\" >> {marks}/setup-ran"],
        "workdir": str(base / "wd") + hostile(marks, "workdir"),
        "dataset": {"source": source + hostile(marks, "source"), "mount": str(base / "mnt") + hostile(marks, "mount"),
                    "size_gb": 1, "link_gbps": 1},
        "env": {"GWLA_VALUE": hostile(marks, "env") + "\nsecond line"},
        "expect": {"driver": "550.54.15"},
        "exporter_port": free_port(),  # the exporter check asks 127.0.0.1:PORT; not another test's exporter
        "hours": 1,
    }  # fmt: skip
    data.update(fields)
    import yaml

    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_huawei_offers(config: Path) -> Path:
    """A user's offers files ($XDG_CONFIG_HOME/gpuwise/offers/) with two Huawei flavors, two Volcano Engine
    instance types and two Baidu BCC specs: gpuwise ships no price for either (none with a public source was found), so their users name
    the types, and the prices are theirs (here this test's, not the cloud's)."""
    header = (REPO / "src/gpuwise/catalog/data/offers/alibaba.csv").read_text().splitlines()[0]
    folder = config / "gpuwise" / "offers"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [f"huawei,{flavor},V100,{n},{8 * n},{64 * n},{12.5 * n:.2f},,cn-north-4,,,,,CNY,"
            "a test's offers file (not a Huawei price),2026-12-02,,,,,V100-SXM2-32GB,,"
            for flavor, n in (("p2s.2xlarge.8", 1), ("p2s.16xlarge.8", 8))]  # fmt: skip
    (folder / "huawei.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    rows = [f"volcengine,{kind},A10,{n},{8 * n},{32 * n},{10.5 * n:.2f},,cn-beijing,,,,,CNY,"
            "a test's offers file (not a Volcano Engine price),2026-12-02,,,,,A10,,"
            for kind, n in (("ecs.gni2.3xlarge", 1), ("ecs.gni2.28xlarge", 8))]  # fmt: skip
    (folder / "volcengine.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    rows = [f"baidu,{spec},V100,{n},{12 * n},{92 * n},{11.1 * n:.2f},,bj,,,,,CNY,"
            "a test's offers file (not a Baidu price),2026-12-02,,,,,V100-SXM2-32GB,,"
            for spec, n in (("bcc.gn5.c12m92.1v100", 1), ("bcc.gn5.c96m736.8v100", 8))]  # fmt: skip
    (folder / "baidu.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    return config
