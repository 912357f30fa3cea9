"""Workload files: the examples validate, and bad files get file:line errors with the field and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.plan.workload import load_workload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = """\
model:
  params: 7.0e9
  seq_len: 4096
training:
  tokens: 1.0e12
  global_batch: 1024
data:
  size_gb: 2000
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "w.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "name", ["llm-7b-pretrain-1t.yaml", "resnet50-imagenet.yaml", "llm-13b-finetune.yaml"]
)
def test_examples_validate(name):
    wl = load_workload(EXAMPLES / name)
    assert wl.total_train_flops() > 0 and wl.steps() > 0


def test_six_n_d_plus_attention():
    wl = load_workload(EXAMPLES / "llm-7b-pretrain-1t.yaml")
    m = wl.model
    per_token = 6 * 6.74e9 + 12 * 32 * 4096 * 4096  # PaLM appendix B: 6N + 12·L·H·Q·T
    assert wl.total_train_flops() == pytest.approx(per_token * 1e12, rel=1e-9)
    assert m.param_count() == 6.74e9


def test_params_derived_from_shape(tmp_path):
    text = GOOD.replace("  params: 7.0e9\n", "  layers: 32\n  hidden: 4096\n  vocab: 32000\n")
    wl = load_workload(write(tmp_path, text))
    assert wl.model.param_count() == pytest.approx(12 * 32 * 4096**2 + 32000 * 4096)


def test_unknown_field_did_you_mean_and_line(tmp_path):
    p = write(tmp_path, GOOD.replace("  global_batch: 1024", "  global_bach: 1024"))
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    msg = str(err.value)
    assert f"{p}:6:" in msg and "training.global_bach" in msg
    assert "did you mean 'global_batch'" in msg and "To fix:" in msg


def test_bad_choice_lists_allowed_values(tmp_path):
    p = write(tmp_path, GOOD.replace("  global_batch: 1024", "  global_batch: 1024\n  precision: bf61"))
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    msg = str(err.value)
    assert f"{p}:7:" in msg and "'bf16'" in msg and "did you mean 'bf16'" in msg
    assert err.value.line == 7


def test_missing_required_points_at_parent(tmp_path):
    p = write(tmp_path, GOOD.replace("data:\n  size_gb: 2000\n", "data:\n  read_pattern: random\n"))
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    assert (
        "missing required field 'data.size_gb'" in str(err.value) and err.value.line == 7
    )  # the "data:" line


def test_cross_field_rule_and_number_range(tmp_path):
    p = write(tmp_path, GOOD.replace("  tokens: 1.0e12\n", "  tokens: 1.0e12\n  samples: 5\n"))
    with pytest.raises(DataValidationError, match="exactly one of 'tokens', 'samples' or 'epochs'"):
        load_workload(p)
    p = write(tmp_path, GOOD.replace("global_batch: 1024", "global_batch: -3"))
    with pytest.raises(DataValidationError, match=r"w.yaml:6: 'training.global_batch'"):
        load_workload(p)


def test_all_errors_listed(tmp_path):
    p = write(
        tmp_path,
        GOOD.replace("  seq_len: 4096\n", "  seq_len: 4096\n  colour: red\n").replace(
            "size_gb: 2000", "size_gb: lots"
        ),
    )
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    assert "colour" in str(err.value) and "also" in str(err.value) and "size_gb" in str(err.value)


def test_yaml_syntax_error_has_line(tmp_path):
    p = write(tmp_path, "model:\n  params: [1, 2\ntraining: {}\n")
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    assert "not valid YAML" in str(err.value) and err.value.line is not None


def test_not_a_mapping_and_missing_file(tmp_path):
    with pytest.raises(DataValidationError, match="mapping"):
        load_workload(write(tmp_path, "- a\n- b\n"))
    with pytest.raises(UserInputError, match="file not found"):
        load_workload(tmp_path / "nope.yaml")


def test_validation_errors_in_chinese_keep_fields_lines_and_values(tmp_path):
    """The wording around each error follows --lang; field names, lines, values and pydantic's own
    constraint text stay as they are."""
    from gpuwise import i18n

    p = write(
        tmp_path,
        GOOD.replace("  seq_len: 4096\n", "  seq_len: 4096\n  colour: red\n").replace(
            "global_batch: 1024", "global_bach: 1024"
        ),
    )
    with pytest.raises(DataValidationError) as err:
        load_workload(p)
    i18n.set_language("zh-CN")
    try:
        msg = i18n.word(err.value.text())  # the error is English until the CLI words it
    finally:
        i18n.set_language("en")
    assert "未知字段 'model.colour'" in msg or "未知字段 'training.global_bach'" in msg
    assert "另外 " in msg and "是不是想写 'global_batch'" in msg
    assert "unknown field" not in msg and "also " not in msg and "did you mean" not in msg
