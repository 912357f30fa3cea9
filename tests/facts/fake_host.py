"""A dict-backed Host for parser tests, and readers for the shared real fixtures' text formats."""

from __future__ import annotations

import fnmatch
import re

from hypothesis import strategies as st

from gpuwise.capture.host import CommandResult, HostMeta


def json_shaped(keys: list[str] | None = None) -> st.SearchStrategy:
    """Any JSON document whose objects use `keys` (the names a parser looks up; any short text if None),
    for "never raises on JSON of any shape" tests."""
    key = st.sampled_from(keys) if keys else st.text(max_size=8)
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda children: st.lists(children) | st.dictionaries(key, children),
    )


class FakeHost:
    """files: {absolute path: text}; commands: {id: stdout text or CommandResult}. Anything else is not captured."""

    name = "fake"

    def __init__(
        self, files: dict[str, str] | None = None, commands: dict[str, str | CommandResult] | None = None
    ):
        self.files = dict(files or {})
        self.commands = {
            cid: (res if isinstance(res, CommandResult) else CommandResult(cid, res))
            for cid, res in (commands or {}).items()
        }

    def read_file(self, path: str) -> str | None:
        return self.files.get(path)

    def glob(self, pattern: str) -> list[str]:
        return sorted(p for p in self.files if fnmatch.fnmatchcase(p, pattern))

    def run(self, command_id: str) -> CommandResult | None:
        return self.commands.get(command_id)

    def meta(self) -> HostMeta:
        return HostMeta("fake-host", None, None, "fake")

    def executed(self) -> list[str]:
        return sorted(self.commands)

    def prefetch(self, command_ids: list[str]) -> None:
        pass


def missing(cid: str) -> CommandResult:
    return CommandResult(cid, "", "not found", None, "missing")


def failed(cid: str, rc: int, stderr: str = "", stdout: str = "") -> CommandResult:
    return CommandResult(cid, stdout, stderr, rc, "ok")


def parse_ttar(text: str, strip_prefix: str = "fixtures") -> dict[str, str]:
    """prometheus/procfs 'ttar' archives: 'Path: p' / 'Lines: n' / n lines of content. -> {'/sys/...': text}."""
    files: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^Path: (.+)$", lines[i])
        if m and i + 1 < len(lines) and lines[i + 1].startswith("Lines: "):
            count = int(lines[i + 1].split()[1])
            body = lines[i + 2 : i + 2 + count]
            path = m.group(1)
            path = path[len(strip_prefix) :] if path.startswith(strip_prefix) else "/" + path
            files[path] = "\n".join(body) + "\n"
            i += 2 + count
        else:
            i += 1
    return files


def md_blocks(text: str, command: str) -> list[str]:
    """Bodies of ``` code blocks in a markdown report whose prompt line runs `command` (prompt line dropped)."""
    out = []
    for block in re.findall(r"```\n(.*?)```", text, re.DOTALL):
        first, _, rest = block.partition("\n")
        if command in first and "$" in first:
            out.append(rest)
    return out
