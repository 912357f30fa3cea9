"""`gpuwise --lang zh-CN launch`: the dry-run report, its checks (cost, transfer, migration, provider dry
run), what --yes adds, and the errors are Chinese throughout; the numbers and commands are the same as in
English, and every file the launch writes (sbatch script, node script, SkyPilot task, Tencent request and
user data) is byte for byte the English one, since Slurm, SkyPilot, Tencent's API and bash read them.

"Chinese throughout" is tests/report/zh_check.py's check: no run of 4+ English words in what gpuwise
wrote, once what the report quotes is set aside (paths, the job's names and command, instance names, the
citations of English documents, commands inside a note).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.catalog import data_paths
from gpuwise.errors import GpuwiseError
from gpuwise.launch import migration, resources, targets, transfer
from gpuwise.launch.build import LaunchOptions, check_out_folder, plan_launch
from gpuwise.launch.model import LaunchPlan
from gpuwise.plan.currency import default_rates
from gpuwise.report.document import Code, Document, Table
from gpuwise.report.formats import render
from gpuwise.report.views.launch import launch_view
from tests.conftest import REAL
from tests.launch import kit
from tests.launch.kit import CAPTURES, EXAMPLES, gpuwise, write_job
from tests.report.zh_check import ENGLISH_RUN, english_runs, written_texts

pytest.importorskip("tencentcloud.cvm.v20170312.models", reason="the tencent extra is not installed")

H200 = CAPTURES / "h200-1gpu-kvm-vm"
A100_RECORDING = REAL / "nvidia_smi_text" / "azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out"
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?%?")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No Tencent credentials: the provider dry run is written, never sent."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def plan_json(tmp_path_factory) -> Path:
    """A real `gpuwise plan --json` of the shipped example and options (its choice is an AWS offer)."""
    out = tmp_path_factory.mktemp("gwla-zh-plan") / "plan.json"
    options = str(EXAMPLES / "plan-options.yaml")
    r = gpuwise(
        "plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--options", options, "--json", "-o", str(out)
    )
    assert r.exit_code == 0, r.output
    return out


def _inputs(tmp: Path, plan_json: Path) -> list[tuple[str, LaunchOptions]]:
    """Every kind of launch report: three targets, the cost guard both ways, the four dataset kinds,
    the migration check against documented versions, a recorded capture and a real GPU recording."""
    ds = tmp / "ds"
    if not ds.is_dir():
        ds.mkdir()
        for i in range(2):
            (ds / f"part-{i}.bin").write_bytes(b"\0" * 2_000_000)
    local = write_job(tmp / "local.yaml", name="zh-local", hours=0.01, dataset={"source": str(ds)})
    nfs = write_job(tmp / "nfs.yaml", name="zh-nfs", gpus_per_node=0,
                    dataset={"source": "10.0.0.9:/export/data", "mount": "/mnt/cfs", "size_gb": 50},
                    image_versions={"cuda": "99.0", "torch": "2.11.0+cu130", "nccl": "2.21.5"})  # fmt: skip
    bucket = write_job(tmp / "bucket.yaml", name="zh-bucket", hours=5,
                       dataset={"source": "cos://zh-bucket-1250000000/data", "mount": "/data"})  # fmt: skip
    tencent = {"zone": "ap-guangzhou-6", "image_id": "img-gwla0001", "gpuwise_wheel": kit.wheel()}
    llm, cpu = EXAMPLES / "job-llm.yaml", EXAMPLES / "job-cpu.yaml"
    out = [
        ("slurm", LaunchOptions(cpu, "slurm", out=tmp / "o-slurm", max_cost=5, source=H200)),
        ("slurm nfs", LaunchOptions(nfs, "slurm", out=tmp / "o-nfs", source=H200, textfile=True,
                                    slurm={"partition": "gpu", "gres": False})),
        ("skypilot over budget", LaunchOptions(llm, "skypilot", offer="aws:p4d.24xlarge", out=tmp / "o-sky",
                                               max_cost=100, source=H200)),
        ("skypilot local dataset", LaunchOptions(local, "skypilot", offer="aws:p4d.24xlarge", max_cost=1000,
                                                 out=tmp / "o-local", source=H200)),
        ("skypilot plan", LaunchOptions(llm, "skypilot", plan_path=plan_json, out=tmp / "o-plan", source=H200)),
        ("tencent", LaunchOptions(llm, "tencent", offer="tencent:GT4.41XLARGE948", out=tmp / "o-tc",
                                  source=H200, target_capture=CAPTURES / "cpu-vm-kvm-docker", cloud=tencent)),
        ("tencent bucket", LaunchOptions(bucket, "tencent", offer="tencent:GT4.41XLARGE948", out=tmp / "o-cos",
                                         source=H200, cloud=tencent)),
    ]  # fmt: skip
    if A100_RECORDING.is_file():  # the driver and CUDA of a real 8x A100 node as the target
        from tests.advise.capture_kit import make_capture

        target = make_capture(tmp / "a100", {"nvidia-smi-q": A100_RECORDING.read_text()}, hostname="a100")
        out.append(("slurm a100", LaunchOptions(cpu, "slurm", out=tmp / "o-a100", source=H200,
                                                target_capture=target)))  # fmt: skip
    return out


def _plans(tmp: Path, plan_json: Path) -> list[tuple[str, LaunchPlan]]:
    plans = [(name, plan_launch(o)) for name, o in _inputs(tmp, plan_json)]
    # what --yes adds, as slurm.create records it (the submission itself runs in test_slurm_e2e.py)
    name, created = next((n, p) for n, p in plans if n == "slurm")
    created.creates[0].id = "slurm:4242"
    created.submitted = {"id": "slurm:4242", "job_id": "4242", "log": str(created.out / "slurm-4242.out"),
                         "exit_code": 0}  # fmt: skip
    return plans


def _quoted(p: LaunchPlan) -> list[str]:
    """What a launch report quotes rather than writes."""
    r, job = p.resources, p.job
    out = [str(p.out), p.job_path, job.name, job.command, r.instance_type or "", r.provider or ""]
    out += [job.dataset.source, job.dataset.mount] if job.dataset else []
    out += [m.source for m in p.migration] + [migration.CUDA_COMPAT, transfer.INGRESS_AWS]
    out += data_paths.all_sources() + [source for *_, source in default_rates().values()]
    # commands inside a note: the torchrun line of the Tencent note, `sky launch`, `rsync`
    out += [job.torchrun(str(job.nodes), f"<private IP of the first instance>:{job.rdzv_port}", job.name)]
    return [q for q in out if q]


def _english(p: LaunchPlan) -> list[str]:
    return english_runs(launch_view(p), _quoted(p))


def test_launch_report_in_chinese_leaves_no_english_sentence(zh, offline, tmp_path, plan_json):
    plans = _plans(tmp_path, plan_json)
    assert len(plans) >= 7
    left = {name: runs for name, p in plans if (runs := _english(p))}
    assert not left, f"untranslated text (wrap it in _() and translate it): {left}"
    # every part of the report was there to be checked
    statuses = {m.status for _, p in plans for m in p.migration}
    assert {"pass", "warn", "fail", "unknown"} <= statuses, statuses
    assert any(p.transfer and p.transfer.warning for _, p in plans)
    assert any(p.cloud_check for _, p in plans) and any(p.submitted for _, p in plans)
    assert any(p.over_budget for _, p in plans) and any(p.max_cost and not p.over_budget for _, p in plans)
    created = render(launch_view(next(p for _, p in plans if p.submitted)), "text", width=100)
    assert "已提交" in created and "启动 ID（用于 --down）: slurm:4242" in created and "作业日志" in created


def test_the_check_finds_the_english_report_english(offline, tmp_path, plan_json):
    """The same check must be able to fail: in English every report is full of English runs."""
    for name, p in _plans(tmp_path, plan_json):
        assert len(_english(p)) >= 5, name


def test_chinese_report_keeps_numbers_commands_files_and_json(zh, offline, tmp_path, plan_json):
    chinese = _plans(tmp_path, plan_json)
    i18n.set_language("en")
    english = _plans(tmp_path, plan_json)
    for (name, zh_plan), (_name, en_plan) in zip(chinese, english, strict=True):
        i18n.set_language("en")
        en_text = render(launch_view(en_plan), "text", width=100)
        i18n.set_language("zh-CN")
        zh_doc = launch_view(zh_plan)
        zh_text = render(zh_doc, "text", width=100)
        assert zh_text != en_text, name
        # the numbers (costs, prices, hours, sizes, ports, versions) are the same in both languages
        assert set(NUMBER.findall(en_text)) - set(NUMBER.findall(zh_text)) == set(), name
        # the commands shown are the English ones
        code = [line for b in zh_doc.blocks if isinstance(b, Code) for line in b.lines]
        assert code == [line for b in launch_view(en_plan).blocks if isinstance(b, Code) for line in b.lines]
        # the files Slurm, SkyPilot, Tencent and bash read do not change with the language
        assert zh_plan.files == en_plan.files, name
        assert all(not re.search(r"[\u4e00-\u9fff]", text) for text in zh_plan.files.values()), name
        assert zh_plan.scrape_config == en_plan.scrape_config and zh_plan.preflight == en_plan.preflight
        for zc, ec in zip(zh_plan.creates, en_plan.creates, strict=True):  # the same delete command
            assert zc.delete.startswith(ec.delete.split("  (or: ")[0]), (zc.delete, ec.delete)
        # launch.json / --format json: the same keys, enums and numbers; only the prose follows the language
        zj, ej = zh_plan.to_json(), en_plan.to_json()
        assert _shape(zj) == _shape(ej), name
        for key in ("schema", "target", "dry_run", "out", "job", "preflight", "exporter", "files"):
            assert zj[key] == ej[key], key
        assert {k: v for k, v in zj["resources"].items() if not k.endswith("_source")} == {
            k: v for k, v in ej["resources"].items() if not k.endswith("_source")
        }
        assert {k: v for k, v in zj["cost"].items() if k != "source"} == {
            k: v for k, v in ej["cost"].items() if k != "source"
        }
        assert [(m["status"], m["what"], m["source_value"], m["target_value"]) for m in zj["migration"]] == [
            (m["status"], m["what"], m["source_value"], m["target_value"]) for m in ej["migration"]
        ]


def _shape(node):
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return type(node).__name__


@pytest.mark.parametrize("width", [80, 100])
def test_chinese_report_fits_the_width_and_nothing_is_cut(zh, offline, tmp_path, plan_json, width):
    for name, p in _plans(tmp_path, plan_json):
        doc = launch_view(p)
        out = render(doc, "text", width=width)
        code = {line.strip() for b in doc.blocks if isinstance(b, Code) for line in b.lines}
        for line in out.splitlines():
            if line.strip().removeprefix("$ ") not in code:
                assert cell_len(line) <= width, (name, line)
        assert "…" not in out.replace("...", "")
        flat = re.sub(r"\s+", "", out)
        # every character, in order (a table's cells share their lines with the next column's)
        prose = Document(title=doc.title, blocks=[b for b in doc.blocks if not isinstance(b, Table)])
        for text in written_texts(prose):
            assert re.sub(r"\s+", "", text) in flat, (name, text)
        # no Latin word (a command, an option, an instance name) broken across two lines, except inside a
        # path or URL too long for any line, which is folded
        long_piece = re.compile(rf"https?://\S+|[^\s\u2e80-\uffef]{{{width - 4},}}")
        texts = [long_piece.sub(" ", t) for t in written_texts(doc)]
        words = {w for t in texts for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]{3,}", t)}
        on_lines = {w for line in out.splitlines() for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", line)}
        broken = {w for w in words if cell_len(w) < width - 20 and w not in on_lines}
        assert not broken, (name, sorted(broken)[:5])


def _errors(tmp: Path) -> list[tuple[str, object]]:
    """The launch errors a user meets, each as a call that raises it."""
    job, llm = write_job(tmp / "j.yaml"), EXAMPLES / "job-llm.yaml"
    tencent = {"zone": "ap-guangzhou-6", "image_id": "img-gwla0001"}
    not_a_plan = tmp / "not-a-plan.json"
    not_a_plan.write_text('{"schema": "gpuwise-report/1"}')
    kept = tmp / "kept"
    kept.mkdir(exist_ok=True)
    (kept / "launch.json").write_text('{"submitted": {"id": "slurm:4242"}}')

    def launch(target: str, **kw):
        return lambda: plan_launch(
            LaunchOptions(kw.pop("job", llm), target, out=tmp / "o", source=H200, **kw)
        )

    def kept_folder():
        plan = plan_launch(LaunchOptions(EXAMPLES / "job-cpu.yaml", "slurm", out=kept, source=H200))
        check_out_folder(plan)

    return [
        ("unknown target", launch("k8s")),
        ("no instance type", launch("skypilot")),
        ("plan and offer", launch("skypilot", offer="aws:p4d.24xlarge", plan_path=not_a_plan)),
        ("not a plan", launch("skypilot", plan_path=not_a_plan)),
        ("skypilot on tencent", launch("skypilot", offer="tencent:GT4.41XLARGE948")),
        ("gpus per node", launch("skypilot", job=EXAMPLES / "job-cpu.yaml", offer="aws:p4d.24xlarge")),
        ("bad offer", launch("skypilot", offer="p4d.24xlarge")),
        ("unknown offer", launch("skypilot", offer="aws:p9.huge")),
        ("no zone", launch("tencent", offer="tencent:GT4.41XLARGE948", cloud={"image_id": "img-gwla0001"})),
        ("no image", launch("tencent", offer="tencent:GT4.41XLARGE948", cloud={"zone": "ap-guangzhou-6"})),
        ("hcc", launch("tencent", job=job, offer="tencent:HCCPNV4h", cloud=tencent)),
        ("record kept", kept_folder),
        ("down id", lambda: targets.down("k8s:x")),
        ("down slurm id", lambda: targets.down("slurm:abc")),
        ("down tencent id", lambda: targets.down("tencent:ap-guangzhou")),
        ("down tencent offline", lambda: targets.down("tencent:ap-guangzhou/ins-gwla0001")),
        ("offer text", lambda: resources.parse_offer("tencent")),
    ]


def _raised(call) -> str:
    with pytest.raises(GpuwiseError) as exc:
        call()
    return i18n.word(exc.value.text())


def _english_in(message: str) -> list[str]:
    # commands and options are quoted as they are (`...`, --flags with their values, ids, URLs)
    text = re.sub(r"`[^`]*`|https?://\S+|--?[\w-]+(?:[ =][^\s，。；：（）]+)?", " ", message)
    return ENGLISH_RUN.findall(text)


def test_launch_errors_in_chinese_keep_the_fix(zh, offline, tmp_path):
    left = {}
    for name, call in _errors(tmp_path):
        message = _raised(call)
        assert "解决方法：" in message, (name, message)
        assert re.search(r"[\u4e00-\u9fff]", message.split("解决方法：")[0]), (name, message)
        if runs := _english_in(message):
            left[name] = runs
    assert not left, left


def test_the_error_check_finds_english_errors(offline, tmp_path):
    english = [_english_in(_raised(call)) for _, call in _errors(tmp_path)]
    assert sum(1 for runs in english if runs) >= len(english) // 2


def test_job_file_reasons_are_chinese_inside_the_file_line_frame(zh, tmp_path):
    """The job's own validation reasons are translated; the frame around them (file:line, 'also', the
    value that was read) comes from catalog/yamlfile.py, shared with every YAML file gpuwise reads."""
    bad = write_job(tmp_path / "bad.yaml", name="Bad_Name", command="torchrun --nnodes 2 train.py",
                    env={"1X": "a"}, dataset={"source": "/x", "mount": "data"})  # fmt: skip
    message = _raised(lambda: plan_launch(LaunchOptions(bad, "slurm", out=tmp_path / "o")))
    for reason in ("以字母开头", "请删除 --nnodes", "不是合法的环境变量名", "挂载点必须是绝对路径"):
        assert reason in message, message
    assert f"{bad}:1" in message and "参见 examples/job-cpu.yaml" in message


def test_cli_prints_the_dry_run_in_chinese_and_writes_the_same_files(tmp_path):
    args = ["launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm"]
    en = gpuwise(*args, "--out", str(tmp_path / "en"))
    zh_ = gpuwise("--lang", "zh-CN", *args, "--out", str(tmp_path / "zh"))
    assert en.exit_code == zh_.exit_code == 0, zh_.output
    assert "试运行：未创建任何资源" in zh_.stdout and "dry run" not in zh_.stdout
    assert "#SBATCH --job-name=gw-ddp-cpu" in zh_.stdout
    assert "dry run: nothing created" in en.stdout
    for name in ("job.sbatch", "node.sh"):
        assert (tmp_path / "zh" / name).read_text() == (tmp_path / "en" / name).read_text().replace(
            str(tmp_path / "en"), str(tmp_path / "zh")
        )
    record = json.loads((tmp_path / "zh" / "launch.json").read_text())
    assert record["schema"] == "gpuwise-launch/1" and record["dry_run"] is True
    for yes in ([], ["--yes"]):  # an unknown cost cannot be checked against --max-cost: refused, dry run too
        refused = gpuwise("--lang", "zh-CN", *args, "--max-cost", "5", *yes, "--out", str(tmp_path / "no"))
        assert refused.exit_code == 3 and "已拒绝：无法核对 --max-cost 5，预估费用为 未知" in refused.stderr
        assert "解决方法：请提供价格" in refused.stderr and not (tmp_path / "no").exists()
