"""Readers read gpuwise documents through their models: no `.get()` on a document's dict in the modules
that load one, and no schema id spelled out anywhere in src/ but gpuwise/documents/ids.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gpuwise
from gpuwise.documents.ids import SCHEMA_IDS

SRC = Path(gpuwise.__file__).parent
READERS = [  # modules that load a gpuwise document (plan, doctor, bench, tune, fleet, stability, launch record, watch recording)
    "launch/resources.py",
    "launch/build.py",
    "fleet/layout.py",
    "fleet/analyze.py::_read_links",  # the rest of analyze.py works on the bench model's free-form params
    "store/records.py",
    "store/identity.py",
    "store/history.py",
    "commands/history.py",
    "report/compare.py",
    "export/sources.py::_recording_frames",  # the rest of sources.py reads NVML's sampler, not a document
    "export/sources.py::recording_end",
    "commands/watch.py::_replay",
]
NOT_DOCUMENTS = {  # receivers of .get() in those modules that are not a document
    "os.environ": "an environment variable",
    "db": "History.get(run id): a row of the history database",
}
SCHEMA_ID = re.compile(r"gpuwise-[a-z]+(?:-[a-z]+)*/\d+")


def _get_calls(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (node.lineno, ast.unparse(node.func.value))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
    ]


def _reader_tree(entry: str) -> ast.AST:
    """A module, or one function of it ("module.py::function")."""
    module, _, function = entry.partition("::")
    tree = ast.parse((SRC / module).read_text())
    return next(n for n in tree.body if getattr(n, "name", None) == function) if function else tree


def test_no_get_on_a_document_outside_its_model():
    found = [
        f"{entry}:{line}: {receiver}.get(...)"
        for entry in READERS
        for line, receiver in _get_calls(_reader_tree(entry))
        if receiver not in NOT_DOCUMENTS
    ]
    assert found == [], "read the field through the document's model in gpuwise/documents/"


def test_the_scan_sees_a_get_on_a_document():
    tree = ast.parse("def f(plan):\n    return plan.get('options') or []\n")
    assert _get_calls(tree) == [(2, "plan")]


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def schema_id_literals(text: str) -> list[tuple[int, str]]:
    """String constants that are a schema id, or quote one ('"gpuwise-x/1"'): a value, not prose
    (docstrings and help text may name a document)."""
    tree = ast.parse(text)
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            v = node.value
            if SCHEMA_ID.fullmatch(v.strip("'\"")) or re.search(
                r"""["']""" + SCHEMA_ID.pattern + r"""["']""", v
            ):
                out.append((node.lineno, v))
    return out


def test_no_schema_id_literal_outside_the_documents_package():
    found = [
        f"{path.relative_to(SRC)}:{line}: {value!r}"
        for path in sorted(SRC.rglob("*.py"))
        if "documents" not in path.relative_to(SRC).parts
        for line, value in schema_id_literals(path.read_text())
    ]
    assert found == [], "use the constant from gpuwise.documents.ids"


def test_the_literal_scan_sees_an_id_and_a_quoted_one_but_not_prose():
    code = (
        'SCHEMA = "gpuwise-plan/1"\nif \'"gpuwise-bench/1"\' in head: pass\nHELP = "JSON (gpuwise-tune/1)"\n'
    )
    assert [line for line, _ in schema_id_literals(code)] == [1, 2]


def test_every_schema_id_named_in_src_is_a_known_one():
    named = {m for path in SRC.rglob("*.py") for m in SCHEMA_ID.findall(path.read_text())}
    assert named - set(SCHEMA_IDS) == set()
    assert len(set(SCHEMA_IDS)) == len(SCHEMA_IDS)
