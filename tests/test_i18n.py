"""The translation catalogs: every marked message translated, placeholders intact, compiled by Babel,
and the language chosen from --lang or the locale variables (English by default)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from gpuwise import i18n

SRC = Path(i18n.__file__).parent
PO = SRC / "locale" / "zh_CN" / "LC_MESSAGES" / "gpuwise.po"
# the keywords `make messages` extracts with (Babel's defaults include _ and N_; C_ and cmsg carry a context)
KEYWORDS = {"_": None, "N_": None, "C_": ((1, "c"), 2), "msg": None, "cmsg": ((1, "c"), 2)}
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _extracted() -> dict[tuple[str | None, str], str]:
    """(context, msgid) -> where, for every message marked in the source, as `make messages` finds them
    (with the same babel.cfg: Python files and the data files whose text the code translates)."""
    with (SRC.parent.parent / "babel.cfg").open(encoding="utf-8") as fh:
        method_map, options_map = parse_mapping_cfg(fh)
    out = {}
    for filename, lineno, message, _comments, context in extract_from_dir(
        str(SRC), method_map=method_map, options_map=options_map, keywords=KEYWORDS
    ):
        out.setdefault((context, message), f"{filename}:{lineno}")
    return out


def _catalog():
    with PO.open("rb") as fh:
        return read_po(fh)


def test_every_extracted_message_has_a_zh_cn_translation():
    catalog, extracted = _catalog(), _extracted()
    assert len(extracted) > 500, "extraction found almost nothing: are the keywords right?"
    missing = []
    for (context, msgid), where in sorted(extracted.items(), key=lambda kv: kv[1]):
        entry = catalog.get(msgid, context=context)
        if entry is None or not entry.string or entry.fuzzy:
            missing.append(f"{where}: {msgid!r}")
    assert not missing, (
        f"{len(missing)} message(s) without a zh_CN translation: run `make messages`, translate "
        "the empty msgstr entries in "
        + str(PO.relative_to(SRC.parent.parent))
        + "\n"
        + "\n".join(missing[:40])
    )


def test_translations_keep_every_placeholder():
    """A translation that drops or renames {name} would raise KeyError at .format() or lose a number."""
    bad = [
        (m.id, m.string)
        for m in _catalog()
        if m.id and m.string and sorted(PLACEHOLDER.findall(m.id)) != sorted(PLACEHOLDER.findall(m.string))
    ]
    assert not bad, bad[:10]


def test_catalog_has_no_stale_messages():
    """Entries nothing extracts any more are noise for the next translator (`make messages` drops them)."""
    extracted = set(_extracted())
    stale = [m.id for m in _catalog() if m.id and (m.context, m.id) not in extracted]
    assert not stale, stale[:10]


def test_catalogs_compile_with_pybabel(tmp_path):
    """What `make catalogs` (run by `make test` and `make run`) does, with Babel's format checks."""
    locale = tmp_path / "locale"
    shutil.copytree(SRC / "locale", locale, ignore=shutil.ignore_patterns("*.mo", "*.pot"))
    pybabel = Path(sys.executable).parent / "pybabel"
    done = subprocess.run(
        [str(pybabel), "compile", "-D", "gpuwise", "-d", str(locale)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (locale / "zh_CN" / "LC_MESSAGES" / "gpuwise.mo").stat().st_size > 10_000


def test_without_a_compiled_catalog_the_po_is_compiled_in_memory(tmp_path, monkeypatch):
    """A plain `pip install -e .` never ran `make catalogs`: Chinese must still work."""
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    shutil.copy(PO, folder / "gpuwise.po")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    try:
        i18n.set_language("zh-CN")
        assert i18n._("GPU persistence mode is off") == "GPU 持久模式未开启"
        assert not (folder / "gpuwise.mo").exists()  # read-only installs stay untouched
    finally:
        i18n.set_language("en")


def test_a_mo_older_than_its_po_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    po = folder / "gpuwise.po"
    shutil.copy(PO, po)
    (folder / "gpuwise.mo").write_bytes(b"not a catalog")  # would raise if it were read
    import os

    os.utime(folder / "gpuwise.mo", (1, 1))
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    try:
        assert i18n.set_language("zh_CN.UTF-8") == "zh-CN"
        assert i18n._("yes") == "可以"
    finally:
        i18n.set_language("en")


def test_english_is_the_default_and_untranslated_text_passes_through(zh):
    assert i18n.language() == "zh-CN"
    assert i18n._("a sentence no catalog has") == "a sentence no catalog has"
    i18n.set_language("en")
    assert i18n._("GPU persistence mode is off") == "GPU persistence mode is off"


def test_data_file_text_is_extracted_too():
    """Xid meanings and actions live in advise/data/xid_catalog.yaml; babel.cfg extracts them."""
    messages = {msgid for _context, msgid in _extracted()}
    assert "GPU has fallen off the bus (it no longer answers on PCIe)" in messages


def test_context_separates_the_same_english_word(zh):
    assert i18n._("source") != i18n.C_("input", "source")


@pytest.mark.parametrize(
    "env,expected",
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh-CN"),
        ({"LANG": "zh_CN.GB18030"}, "zh-CN"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh-CN"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, "en"),  # LC_ALL wins, as in POSIX
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": ""}, "zh-CN"),  # set but empty counts as unset
        ({"LANG": "de_DE.UTF-8"}, "en"),  # no catalog: English, not an error
        ({"LANG": "zh_TW.UTF-8"}, "en"),  # Traditional Chinese is another catalog, not zh_CN
    ],
)
def test_language_from_the_locale_variables(env, expected):
    assert i18n.language_from_env(env) == expected


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="zh-CN"):
        i18n.set_language("fr")
    assert i18n.language() == "en"


def _assigned_underscore(tree, functions: set[str]) -> list[int]:
    """Lines that bind one of `functions` (the translation functions the module imports: _, C_, msg,
    cmsg): assignments, loop and comprehension targets, parameters. A comprehension has its own scope,
    but `_(x) for _, x in pairs` calls the value it just bound."""
    import ast

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in functions and isinstance(node.ctx, ast.Store):
            lines.append(node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            names += [a.arg for a in (args.vararg, args.kwarg) if a]
            lines += [node.lineno] if functions & set(names) else []
    return lines


def _imported_translators(tree) -> set[str]:
    import ast

    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "gpuwise.i18n":
            names |= {a.asname or a.name for a in node.names}
    return names & {"_", "C_", "msg", "cmsg"}


def test_no_module_shadows_the_translation_function():
    """`x, _ = f()` or `for _ in ...` in a module that imports _ from gpuwise.i18n makes `_` a local
    (UnboundLocalError) or a value (TypeError: 'list' object is not callable) where the function is
    called: name unused values something else (_rest, _unused), in comprehensions too."""
    import ast

    bad = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = _imported_translators(tree)
        if functions:
            bad += [f"{path.relative_to(SRC)}:{line}" for line in _assigned_underscore(tree, functions)]
    assert not bad, bad


def test_catalogs_ship_in_the_wheel():
    """package-data lists the .po (compiled at import when no .mo was built) and the built .mo."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((SRC.parent.parent / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["gpuwise"]
    for name in ("locale/zh_CN/LC_MESSAGES/gpuwise.po", "locale/zh_CN/LC_MESSAGES/gpuwise.mo"):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name
    assert any(dep.startswith("babel") for dep in pyproject["project"]["dependencies"])
