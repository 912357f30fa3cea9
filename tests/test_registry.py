"""The plugin registry, and one plugin of each kind added as one module in a registry of its own and
seen used by the real code path (the default registries are left alone)."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuwise.errors import UserInputError
from gpuwise.registry import DuplicateName, Registry
from tests.conftest import CAPTURES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CPU_CAPTURE = CAPTURES / "cpu-vm-kvm-docker"


@dataclass(frozen=True)
class Thing:
    name: str
    rank: int = 0


def test_register_as_call_and_decorator_lookup_and_stable_order():
    reg: Registry[object] = Registry("thing", order=lambda t: getattr(t, "rank", 0))
    reg.register(Thing("b", rank=2))
    reg.register(Thing("a", rank=2))
    reg.register(Thing("c", rank=1))

    @reg.register(name="d")
    def d():
        return "d"

    assert reg.names() == ["d", "c", "a", "b"]  # rank, then name
    assert reg["c"] == Thing("c", 1) and reg.lookup(" C ") == Thing("c", 1) and "d" in reg
    assert d() == "d" and reg["d"] is d  # the decorator keeps the definition
    with pytest.raises(UserInputError, match=r"'e' is not one of d, c, a, b") as err:
        reg.lookup("e")
    assert "did you mean" not in str(err.value)
    with pytest.raises(UserInputError, match="did you mean 'a'"):
        reg.lookup("aa")


def test_a_duplicate_name_names_both_modules_and_the_same_object_twice_is_fine():
    reg: Registry[Thing] = Registry("thing")
    one = reg.register(Thing("x"), module="plugins.first")
    reg.register(one, module="plugins.again")  # a module imported twice, a re-export
    with pytest.raises(DuplicateName, match=r"'x'.*plugins\.first.*plugins\.second"):
        reg.register(Thing("x", rank=1), module="plugins.second")
    assert reg.origin("x") == "plugins.first"


def test_discovery_imports_each_module_of_a_package_once_and_skips_helpers(tmp_path, monkeypatch):
    pkg = tmp_path / "gwreg_plugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_helper.py").write_text("raise RuntimeError('a helper is not a plugin')\n")
    for name in ("alpha", "beta"):
        (pkg / f"{name}.py").write_text(
            f"from tests.test_registry import Thing\nPLUGIN = Thing({name!r})\nOTHER = Thing('x-{name}')\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        reg: Registry[Thing] = Registry(
            "thing", packages=("gwreg_plugins",), attribute="PLUGIN", item_type=Thing
        )
        assert reg.module_names() == ["alpha", "beta"] and "gwreg_plugins.alpha" not in sys.modules
        assert reg.names() == ["alpha", "beta"]  # only the declared attribute, only on first read
        assert reg.origin("beta") == "gwreg_plugins.beta"
    finally:
        for mod in [m for m in sys.modules if m.startswith("gwreg_plugins")]:
            sys.modules.pop(mod)


def _module(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def loaded():
    """Plugin modules a test loads from files are removed from sys.modules afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        sys.modules.pop(name, None)


# ------------------------------------------------------------------ the six kinds


def test_a_doctor_rule_is_one_module_and_the_engine_runs_it(tmp_path, loaded):
    from gpuwise.advise.engine import RULES, run_rules
    from tests.advise.factories import cpu_vm

    path = _module(
        tmp_path,
        "gwreg_rule",
        """
        from gpuwise.advise.engine import rule

        @rule(id="test.gwreg_cores", layer="hardware", title="few cores (test)", source="test", priority="low")
        def few_cores(ctx):
            return ctx.finding("warn", [("cpu.threads", ctx.facts.cpu.threads)], "add cores")
        """,
    )
    rules = RULES.like()
    loaded.append(rules.load_file(path).__name__)
    assert rules.names() == ["test.gwreg_cores"] and "test.gwreg_cores" not in RULES
    (finding,) = run_rules(cpu_vm(), None, "cloud", rules=rules)
    assert (finding.id, finding.status, finding.recommendation.text) == (
        "test.gwreg_cores",
        "warn",
        "add cores",
    )


def test_a_benchmark_is_one_module_and_the_runner_lists_and_runs_it(tmp_path, loaded):
    from gpuwise.bench import registry
    from gpuwise.bench.context import BenchContext, BenchOptions
    from gpuwise.bench.runner import run_benchmarks

    path = _module(
        tmp_path,
        "gwreg_bench",
        """
        from dataclasses import dataclass

        from gpuwise.documents.bench import Measurement
        from gpuwise.bench.registry import BenchInfo

        BENCHMARK = BenchInfo(
            name="noop", layer="noop", title="No-op (harness check)", help="does nothing, quickly",
            order=5, quick_timeout_s=10, full_timeout_s=20, aliases=("nothing",),
        )

        @dataclass(frozen=True)
        class Spec:
            value: float = 1.0

        def make_spec(ctx):
            return Spec()

        def run(ctx, spec):
            return [Measurement(name="noop", layer="noop", unit="x", value=spec.value)]
        """,
    )
    reg = registry.BENCHMARKS.like()
    for entry in registry.benchmarks():
        reg.register(entry)
    loaded.append(reg.load_file(path).__name__)
    assert [e.name for e in registry.benchmarks(reg)][:2] == ["noop", "compute"]  # order=5 runs first
    assert registry.titles(reg)["noop"] == "No-op (harness check)"
    entries = registry.select("nothing", reg)
    ctx = BenchContext(BenchOptions(data_dir=str(tmp_path)), device="cpu")
    report = run_benchmarks(ctx, entries, isolate=False)
    assert [(m.name, m.value, m.status) for m in report.results] == [("noop", 1.0, "ok")]
    assert "noop" not in [e.name for e in registry.benchmarks()]


def test_a_report_format_is_one_module_and_a_document_renders_in_it(tmp_path, loaded):
    from gpuwise.report.document import Document, Paragraph
    from gpuwise.report.formats import FORMATS, format_names, render

    path = _module(
        tmp_path,
        "gwreg_upper",
        """
        from gpuwise.report.formats import Renderer

        def _render(doc, *, width=100, color=False):
            return "\\n".join([doc.title.upper(), *(b.text.upper() for b in doc.blocks)]) + "\\n"

        RENDERER = Renderer(name="upper", media_type="text/plain", render=_render)
        """,
    )
    formats = FORMATS.like()
    loaded.append(formats.load_file(path).__name__)
    doc = Document("gpuwise doctor", [Paragraph("all good")])
    assert render(doc, "upper", registry=formats) == "GPUWISE DOCTOR\nALL GOOD\n"
    assert format_names(formats) == ["upper"] and "upper" not in format_names()
    with pytest.raises(UserInputError, match="--format 'uper' is not one of upper"):
        render(doc, "uper", registry=formats)


def test_an_offer_source_is_one_module_and_facts_and_the_catalog_read_it(tmp_path, loaded):
    from gpuwise.catalog.offers import find_offer, load_offers
    from gpuwise.facts.platform import match_cloud
    from gpuwise.providers import PROVIDERS

    offers_csv = tmp_path / "gwreg-cloud.csv"
    offers_csv.write_text(
        "Provider,InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,Currency,"
        "PriceSource,AsOf\n"
        "gwreg-cloud,gw.h100x8,H100,8,192,2048,20.5,gw-east-1,USD,test price list,2026-12-01\n"
    )
    path = _module(
        tmp_path,
        "gwreg_cloud",
        f"""
        from gpuwise.providers import DmiRule, Provider

        PROVIDER = Provider(
            name="gwreg-cloud",
            label="GW Registry Cloud",
            dmi=(DmiRule(conditions=(("sys_vendor", "GW Registry Cloud"),), confidence="strong", source="test"),),
            offers_files=({str(offers_csv)!r},),
        )
        """,
    )
    providers = PROVIDERS.like()
    loaded.append(providers.load_file(path).__name__)
    rule, evidence = match_cloud({"sys_vendor": "GW Registry Cloud"}, providers)
    assert (rule.provider, rule.label) == ("gwreg-cloud", "GW Registry Cloud") and "sys_vendor" in evidence
    assert match_cloud({"sys_vendor": "GW Registry Cloud"}) is None  # the default providers do not know it
    (offer,) = find_offer("gw.h100x8", load_offers(providers=providers))
    assert (offer.provider, offer.accelerator_count, offer.price) == ("gwreg-cloud", 8, 20.5)


def test_a_launch_target_is_one_module_and_launch_dispatches_to_it(tmp_path, loaded):
    from gpuwise.launch import targets
    from gpuwise.launch.build import LaunchOptions, plan_launch, write_files

    path = _module(
        tmp_path,
        "gwreg_target",
        """
        from gpuwise.launch.model import Created
        from gpuwise.launch.targets import Feature, Target

        class Echo(Target):
            name = "echo"
            label = "Echo"
            id_form = "echo:NAME"
            options = ("--zone",)
            unsupported = {Feature.WAIT: "echo never waits"}
            own_machines = True

            def build(self, plan, o):
                plan.files["echo.sh"] = "echo " + plan.job.name + "\\n"
                plan.creates.append(Created("echo", plan.job.name, "gpuwise launch --down echo:" + plan.job.name))

            def create(self, plan, o, wait, timeout_s):
                return {"id": "echo:" + plan.job.name}

            def down(self, rest):
                return "deleted " + rest

        TARGET = Echo()
        """,
    )
    reg = targets.TARGETS.like()
    loaded.append(reg.load_file(path).__name__)
    options = LaunchOptions(job_path=EXAMPLES / "job-cpu.yaml", target="echo", out=tmp_path / "out")
    options.source = CPU_CAPTURE  # the migration check reads a capture, not this machine
    plan = plan_launch(options, reg)
    write_files(plan)
    assert (tmp_path / "out" / "echo.sh").read_text() == f"echo {plan.job.name}\n"
    assert targets.create(plan, options, False, None, reg) == {"id": f"echo:{plan.job.name}"}
    assert targets.down("echo:x", reg) == "deleted x"
    echo = targets.get("echo", reg)
    targets.check_flags(echo, {"--zone": "z1", "--wait": False}, reg)  # its own option; --wait not given
    with pytest.raises(UserInputError, match="--target echo does not support --wait: echo never waits"):
        targets.check_flags(echo, {"--wait": True}, reg)
    with pytest.raises(UserInputError, match="'echo' is not one of"):
        targets.get("echo")  # the default targets do not know it


def test_a_tune_knob_is_one_module_and_the_search_offers_it(tmp_path, loaded):
    from gpuwise.tune import knobs, snippet
    from gpuwise.tune.knob_plugins import KNOB_CODE

    rows = tmp_path / "knobs.yaml"
    rows.write_text(
        "- name: matmul_precision\n  category: precision\n  values: [highest, high]\n  numerics: rounding\n"
        "  why: TF32 inside float32 matmuls\n  priority: 1\n"
        "  source: https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html\n"
    )
    path = _module(
        tmp_path,
        "gwreg_knob",
        """
        from gpuwise.tune.knob_plugins import KnobCode

        MATMUL_PRECISION = KnobCode(
            name="matmul_precision",
            skip=lambda value, m: None if m.device == "cuda" else "float32 matmul precision is for GPUs",
            python=lambda value, device, batch: [f"torch.set_float32_matmul_precision({value!r})"],
        )
        """,
    )
    code = KNOB_CODE.like()
    loaded.append(code.load_file(path).__name__)
    rows_here = knobs.catalogue(rows)
    gpu = knobs.Machine(device="cuda", capability=(9, 0))
    space, skipped = knobs.search_space(gpu, keep_numerics=False, knobs=rows_here, code=code)
    assert space == {"matmul_precision": ("highest", "high")} and skipped == []
    space, skipped = knobs.search_space(knobs.Machine(), keep_numerics=False, knobs=rows_here, code=code)
    assert space == {} and [(s.value, s.reason) for s in skipped] == [
        ("high", "float32 matmul precision is for GPUs")
    ]
    assert snippet.python_lines({"matmul_precision": "high"}, "cuda", 32, code) == [
        "torch.set_float32_matmul_precision('high')"
    ]
    assert "matmul_precision" not in KNOB_CODE


def test_a_format_or_target_module_must_be_named_as_what_it_declares():
    import types

    from gpuwise.registry import named_after_module

    make = named_after_module("pkg")
    module = types.ModuleType("pkg.md")
    with pytest.raises(ValueError, match="declares 'html', not 'md'"):
        make(types.SimpleNamespace(name="html"), module)
    assert make(types.SimpleNamespace(name="md"), module).name == "md"
    outside = types.SimpleNamespace(name="html")
    assert make(outside, types.ModuleType("elsewhere.md")) is outside  # a plugin file from outside: any name
