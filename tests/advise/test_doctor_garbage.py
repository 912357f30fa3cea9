"""Doctor never crashes on partial or garbage captures (hypothesis)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwise.capture.sources import COMMANDS, FILES
from gpuwise.report.formats import render
from gpuwise.report.views.doctor import doctor_view
from tests.advise.capture_kit import doctor_report, make_capture
from tests.conftest import REAL

_SAMPLES = (
    [
        p
        for sub in ("nvidia_smi_xml", "nvidia_smi_text", "topo", "infiniband", "lscpu", "numactl")
        for p in sorted((REAL / sub).glob("*"))[:4]
    ]
    if REAL.is_dir()
    else []
)


def _sample_texts() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in _SAMPLES]


SAMPLE_TEXTS = _sample_texts()

text = st.one_of(
    st.text(max_size=300),
    st.sampled_from(
        [
            "",
            "\n",
            "N/A",
            "[Not Supported]",
            "-1",
            "99999999999999999999",
            "{",
            "<nvidia_smi_log>",
            "Persistence Mode : Enabled",
            "GPU 0: X (UUID: y)\n  Link 0: <inactive>",
            "null",
        ]
    ),
    # a real recording cut at a random point: the commonest real-world garbage
    st.builds(
        lambda t, frac: t[: int(len(t) * frac)],
        st.sampled_from(SAMPLE_TEXTS or ["x"]),
        st.floats(min_value=0, max_value=1),
    ),
)

capture = st.fixed_dictionaries(
    {
        "commands": st.dictionaries(
            st.sampled_from(sorted(COMMANDS) + ["nvidia-smi-q", "nvml", "env", "python-env"]),
            text,
            max_size=6,
        ),
        "files": st.dictionaries(st.sampled_from(sorted(FILES)), text, max_size=6),
        "rcs": st.dictionaries(st.sampled_from(sorted(COMMANDS)), st.integers(-2, 255), max_size=2),
        "env": st.sampled_from(["auto", "cloud", "onprem"]),
    }
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(capture)
def test_doctor_survives_garbage(case):
    with tempfile.TemporaryDirectory() as tmp:
        cap = make_capture(Path(tmp) / "c", case["commands"], case["files"], rcs=case["rcs"])
        report = doctor_report(cap, env=case["env"])
        assert report.summary.exit_code in (0, 1, 2)
        # The engine would survive a raising rule, but a rule should not raise on odd facts either.
        assert not [f.title for f in report.findings if f.title.startswith("rule ")]
        render(doctor_view(report), "text")
        render(doctor_view(report), "md")
        json.dumps(report.to_json_dict())
