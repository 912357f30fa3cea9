"""TextModel: the pydantic base of every gpuwise model that carries user-facing text.

pydantic turns a str subclass into a plain str when it validates a field, so a message (i18n.Msg)
given to a model would lose its id and could only be shown in English. TextModel validates as
BaseModel does, then puts back each Msg the input held where the validated value is the same text
(in fields, lists, tuples and dict values), so views can word it in the reader's language.
"""

from __future__ import annotations

from pydantic import BaseModel, model_validator

from gpuwise.i18n import Msg


def _kept(raw, value):
    """`value` (validated) with the Msg objects of `raw` (the input) put back where the text is equal."""
    if isinstance(raw, Msg):
        return raw if type(value) is str and value == raw else value
    if isinstance(raw, (list, tuple)) and isinstance(value, (list, tuple)) and len(raw) == len(value):
        items = [_kept(r, v) for r, v in zip(raw, value, strict=True)]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(raw, dict) and isinstance(value, dict):
        changed = {k: _kept(raw[k], v) for k, v in value.items() if k in raw}
        changed = {k: v for k, v in changed.items() if v is not value[k]}
        return {**value, **changed} if changed else value
    return value


class TextModel(BaseModel):
    @model_validator(mode="wrap")
    @classmethod
    def _keep_messages(cls, data, handler):
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, BaseModel):
            for name, raw in data.items():
                if name in model.__dict__:
                    value = model.__dict__[name]
                    kept = _kept(raw, value)
                    if kept is not value:
                        model.__dict__[name] = kept
        return model
