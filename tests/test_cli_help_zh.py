"""`--help` in Chinese: every command's help, option lines and Typer's panel words come from the catalog
(--lang zh-CN anywhere on the line, or a zh_CN locale), nothing is cropped at 80 columns, and English
stays Typer's own text, also after a Chinese run in the same process."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from gpuwise import i18n
from gpuwise.cli import app, lang_first
from tests.report.zh_check import ENGLISH_RUN

runner = CliRunner()
# what stays as it is: the usage line (the command and its metavars), `commands` and option names
KEPT = re.compile(r"^ *Usage: .*$|`[^`]*`|(?<![\w-])--?[A-Za-z][\w-]*", re.MULTILINE)


def _command_paths(command, path=()):
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _command_paths(sub, (*path, name))


PATHS = list(_command_paths(typer.main.get_command(app)))


def _help(path, *lang: str, columns: int = 250) -> str:
    i18n.set_language("en")  # what an earlier test left must not matter: the CLI picks the language itself
    r = runner.invoke(app, lang_first([*path, "--help", *lang]), env={"COLUMNS": str(columns)})
    assert r.exit_code == 0, r.output
    return r.output


def english_runs(text: str) -> list[str]:
    return ENGLISH_RUN.findall(KEPT.sub(" ", text))


def test_every_command_has_a_help_to_check():
    assert len(PATHS) > 25 and ("fleet", "healthcheck") in PATHS and ("catalog", "fetch", "tencent") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "gpuwise")
def test_help_in_chinese_leaves_no_english_sentence(path):
    zh = _help(path, "--lang", "zh-CN")
    assert not english_runs(zh), english_runs(zh)
    assert "选项" in zh and "显示此帮助信息后退出。" in zh
    assert english_runs(_help(path))  # the same check finds the English help English


def test_the_check_sees_english_left_in_the_chinese_help(monkeypatch):
    """An option whose help has no translation shows up (its text is kept English by gettext)."""
    from gpuwise.commands import helptext

    monkeypatch.setattr(helptext, "translated", lambda text: text if "history database" in text else "译文")
    assert english_runs(_help(("doctor",), "--lang", "zh-CN")) == [
        "Do not record this run in the history database"
    ]


@pytest.mark.parametrize("path", [(), ("bench",), ("fleet", "run"), ("launch",), ("catalog", "offers")])
def test_chinese_help_fits_80_columns_and_crops_nothing_english_does_not(path):
    zh, en = _help(path, "--lang", "zh-CN", columns=80), _help(path, columns=80)
    assert max(cell_len(line) for line in zh.splitlines()) <= 80
    # Rich breaks lines at spaces and crops a longer run with '…' in the option table: Chinese folds
    assert zh.count("…") <= en.count("…")
    # Chinese breaks between characters (the text renderer's WrapText), not before closing punctuation
    # (at 80 columns launch's help column is narrower than '（--gpus-per-node）；', which is then folded)
    wide = _help(path, "--lang", "zh-CN", columns=100)
    assert not [line for line in wide.splitlines() if re.search(r"(^|  )[，。；：、）]", line)]
    # folded between characters, never cropped (fleet run's option column narrowed when its GPU options came)
    fleet = _help(("fleet", "run"), "--lang", "zh-CN", columns=80)
    assert "通过 Slurm（" in fleet and "sbatch/srun）" in fleet


def test_values_options_and_commands_stay_as_they_are():
    zh = _help(("doctor",), "--lang", "zh-CN")
    for kept in ("--bench-results", "KEY=N,...", "gpus=8,ib=4,pcie_width=16", "`gpuwise bench --quick`"):
        assert kept in zh
    assert "[默认: none]" in zh and "Usage: gpuwise doctor [OPTIONS]" in zh
    assert "输出格式：html, json, md, text。" in zh  # a help filled in with values: the values stay


def test_bench_help_lists_the_benchmarks_in_chinese_before_the_exit_codes():
    zh = _help(("bench",), "--lang", "zh-CN")
    listed, codes = zh.index("基准测试（--only 可选）："), zh.index("退出码：")
    assert listed < zh.index("compute: 各数据类型") < codes
    assert "（也可写作：matmul）" in zh


def test_english_help_is_typers_own_after_a_chinese_run():
    """The Chinese labels and folding are put on Typer's module: the next English run takes them off."""
    code = (
        "import os; os.environ['COLUMNS'] = '100'\n"
        "from typer.testing import CliRunner; from gpuwise.cli import app\n"
        "print(CliRunner().invoke(app, ['doctor', '--help'], env={'COLUMNS': '100'}).output, end='')"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES")}
    fresh = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    ).stdout
    _help(("doctor",), "--lang", "zh-CN", columns=100)
    again = _help(("doctor",), columns=100)
    assert again == fresh
    assert "╭─ Options ─" in again and "Show this message and exit." in again and "[default: text]" in again


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES")}
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, "COLUMNS": "120", **env},
        timeout=300,
    )


def test_the_locale_picks_the_help_language():
    """LANG=zh_CN.UTF-8 gpuwise doctor --help: the root command reads the locale before --help prints."""
    zh = _cli("doctor", "--help", LANG="zh_CN.UTF-8")
    assert (
        zh.returncode == 0
        and "列出这台机器（或一个采集包）该改什么" in zh.stdout
        and "╭─ 选项 ─" in zh.stdout
    )
    en = _cli("doctor", "--help", LANG="zh_CN.UTF-8", LC_ALL="C")  # LC_ALL wins, as for the reports
    assert en.returncode == 0 and "Rank what to change on this machine" in en.stdout


def test_lang_before_or_after_the_command_and_for_the_command_list():
    top = _cli("--lang", "zh-CN", "--help")
    assert top.returncode == 0 and "╭─ 命令 ─" in top.stdout and "测量、诊断并规划 GPU 训练机器" in top.stdout
    assert not english_runs(top.stdout)
    after = _cli("fleet", "healthcheck", "--help", "--lang", "zh-CN")  # lang_first moves it to the front
    assert after.returncode == 0 and "出现严重问题时，在 Slurm 中排空（drain）此节点。" in after.stdout
    bad = _cli("--lang", "fr", "doctor")  # a bad --lang is still the callback's usage error
    assert bad.returncode == 3 and "zh-CN" in bad.stderr


def test_a_typer_without_the_private_text_maker_still_gives_chinese_help(monkeypatch):
    """`typer>=0.12` is allowed and `rich_utils._make_rich_text` is private (older Typer spelt it
    differently): without it the help is still Chinese, folded by Rich at spaces, never a crash."""
    from typer import rich_utils

    from gpuwise.commands import helptext

    monkeypatch.setattr(helptext, "_typer_english", {})
    monkeypatch.setattr(helptext, "TEXT_MAKER", "_make_rich_text_renamed")  # a Typer that lacks the name
    out = _help(("doctor",), "--lang", "zh-CN", columns=100)
    assert "选项" in out and "诊断" in out
    assert "Options" in _help(("doctor",), columns=100)  # and back to English
    assert not hasattr(rich_utils, "_make_rich_text_renamed")
