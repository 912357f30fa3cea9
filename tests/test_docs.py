"""The README stays a short front page, and every relative link in it and in docs/ resolves.

`make docs` (mkdocs build --strict, run by `make test`) checks the built site; this test checks the same
links without mkdocs, in milliseconds, and also the README's links, which the site does not contain.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 300

FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
COMMENT = re.compile(r"<!--.*?-->")  # not rendered, so not a link (MkDocs does not check it either)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:, ...


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (MkDocs) gives a heading: markup dropped, ASCII, lower
    case, punctuation removed, runs of spaces and hyphens made one hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"[`*]", "", text)  # code spans and emphasis render as their text
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _n, line in prose_lines(page.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}_{count}")
    return out


def links(page: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(INLINE_CODE.sub("", COMMENT.sub("", line))):
            if not EXTERNAL.match(target):
                out.append((n, target))
    return out


def broken_links(page: Path) -> list[str]:
    problems = []
    for n, target in links(page):
        path_part, _hash, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(ROOT)}:{n}: ({target})"
        if not dest.exists():
            problems.append(f"{where} no such file")
            continue
        if page.is_relative_to(DOCS) and not dest.is_relative_to(DOCS):
            problems.append(f"{where} leads out of docs/, which the site does not contain")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{where} no heading with the anchor #{anchor} in {dest.relative_to(ROOT)}")
    return problems


def test_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_keeps_the_two_fresh_machine_commands():
    """The Quickstart's two commands (`.ci/run` runs `make test`), and the Makefile targets behind them."""
    commands = [line.split("#")[0].strip() for _n, line in _code_lines(README)]
    assert "make run" in commands and "make test" in commands
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def _code_lines(page: Path) -> list[tuple[int, str]]:
    prose = {n for n, _line in prose_lines(page.read_text(encoding="utf-8"))}
    return [
        (n, line)
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if n not in prose and not FENCE.match(line.strip())
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_every_docs_page_is_in_the_site_nav_and_every_nav_entry_exists():
    nav = re.findall(r"^\s*-\s*(?:[^:#\n]+:\s*)?([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    listed = set(nav)
    present = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert sorted(listed - present) == [], "in mkdocs.yml's nav but not in docs/"
    assert sorted(present - listed) == [], "in docs/ but not in mkdocs.yml's nav (uncomment or add it)"


def test_the_link_check_finds_a_broken_link_and_a_missing_anchor(tmp_path, monkeypatch):
    """The checker itself can fail: a missing file, a missing anchor and a link out of docs/."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A page\n\n## Real `heading`: here\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# Out\n", encoding="utf-8")
    page = docs / "b.md"
    page.write_text(
        "[ok](a.md#real-heading-here) [ok](#b) `[not a link](nowhere.md)`\n\n# B\n\n"
        "```\n[in code](nowhere.md)\n```\n"
        "[gone](missing.md) [no anchor](a.md#nope) [out](../outside.md) [web](https://example.com/x.md)\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "DOCS", docs)
    problems = broken_links(page)
    assert len(problems) == 3, problems
    assert "no such file" in problems[0] and "#nope" in problems[1] and "out of docs/" in problems[2]
