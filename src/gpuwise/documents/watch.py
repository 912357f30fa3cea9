"""What `gpuwise watch --from FILE` reads back from a recording (WATCH_FORMAT, JSON lines, written by
export/recording.py's RecordWriter): the header line, and the trailer line with the host-side summary.
The lines between are frames: their model is the writer's own (export/sample.py's Snapshot.from_dict,
which the live source shares), which this view does not copy.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuwise.documents.view import View


class WatchHeader(View):
    """The first line: the format id (any JSON value here; the reader names a wrong one). The writer
    also puts there the readings' source, the command watched and its pid, which no reader reads."""

    format: Any = None


class WatchEnd(View):
    # export/watch.py's HostSummary as JSON (its dataclass reads it); None when no process was watched
    host: dict[str, Any] | None = None


class WatchTrailer(View):
    """The last line of a finished recording."""

    end: WatchEnd = Field(default_factory=WatchEnd)
