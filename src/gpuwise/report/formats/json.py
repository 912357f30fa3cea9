"""--format json: the command's JSON document (Document.data), built from its model, never from the blocks;
strict JSON (gpuwise.strictjson): never NaN or Infinity."""

from __future__ import annotations

from gpuwise import strictjson
from gpuwise.report.document import Document
from gpuwise.report.formats import Renderer


def render_json(doc: Document, *, width: int = 100, color: bool = False) -> str:
    # default=str: dates and paths in a model become strings rather than an error; strictjson: NaN and
    # Infinity become null (with the reason in the object's `unknown` map where it has one)
    return strictjson.dumps(doc.data, indent=2, ensure_ascii=False, default=str) + "\n"


RENDERER = Renderer(name="json", media_type="application/json", render=render_json)
