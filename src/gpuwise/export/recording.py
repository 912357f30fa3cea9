"""`gpuwise watch --record FILE`: samples streamed to a temporary file beside FILE, renamed into place at the end.

A long watch can hold more samples than memory should, so they are written as they come; the user's
FILE appears only complete (or not at all, if the watch dies): the same promise as gpuwise.atomic.
Format "gpuwise-watch/1", JSON lines: a header, one Snapshot per line, and an {"end": ...} trailer
with the host-side summary. `gpuwise.export.sources` reads it back.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gpuwise.documents.ids import WATCH_FORMAT as RECORD_FORMAT
from gpuwise.errors import UserInputError
from gpuwise.export.sample import Snapshot
from gpuwise.i18n import msg


class RecordWriter:
    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise UserInputError(
                msg("cannot write the recording {path}: {value}").format(
                    path=path, value=exc.strerror or exc
                ),
                msg("pass --record with a path in a writable directory"),
            ) from exc
        self._tmp = Path(tmp)
        self._fh = os.fdopen(fd, "w", encoding="utf-8")
        self._write({"format": RECORD_FORMAT, **header})

    def add(self, snap: Snapshot) -> None:
        self._write(snap.to_dict())

    def finish(self, end: dict[str, Any]) -> None:
        """Write the trailer, fsync and rename into place."""
        self._write({"end": end})
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp, self.path)

    def abandon(self) -> None:
        self._fh.close()
        self._tmp.unlink(missing_ok=True)

    def _write(self, obj: dict[str, Any]) -> None:
        self._fh.write(json.dumps(obj, separators=(",", ":")) + "\n")
