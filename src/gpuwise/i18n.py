"""Translations of user-facing text: GNU gettext from the standard library, catalogs managed by Babel.

Text is computed in English and worded in the reader's language only where it is shown. Every layer
below report/ and commands/ writes a message, never a translation:

    from gpuwise.i18n import N_, msg
    msg("{n} of {total} GPUs have persistence mode off", n=len(off), total=len(known))
    title=N_("GPU persistence mode is off")   # module level: marked for extraction; msg(TITLE) at use

`msg()` returns a Msg: a str whose value is the English text, which also keeps its message id, context
and arguments. So facts, findings, plans and their JSON are the same under every --lang, and
report/ (views) and commands/ word them with `word()` / `worded()`; only those two packages call `_()`.

English is the default; `gpuwise --lang zh-CN` or a zh_CN locale in LC_ALL / LC_MESSAGES / LANG
switches (set_language / language_from_env, called by the CLI). Numbers, units, commands, config
lines, rule ids, JSON keys and the JSON "schema" values are never translated.

The catalogs live in gpuwise/locale/<ll_CC>/LC_MESSAGES/gpuwise.po (committed, edited with
`pybabel update`); the build (`make run`, `make test`) compiles them into gpuwise.mo beside each .po.
An install that never ran the build (a plain `pip install -e .` or a wheel built from the sources)
has no .mo, or one older than its .po: then the .po is compiled in memory with Babel (a dependency),
so a language never silently falls back to English because a build step was skipped.
"""

from __future__ import annotations

import contextvars
import functools
import gettext
import io
import os
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path

DOMAIN = "gpuwise"
LOCALE_DIR = Path(__file__).parent / "locale"
DEFAULT = "en"
# --lang value -> the catalog folder under locale/ (None: the source language, no catalog)
LANGUAGES: dict[str, str | None] = {"en": None, "zh-CN": "zh_CN"}

_active: gettext.NullTranslations = gettext.NullTranslations()
_active_lang = DEFAULT


class Said(str):
    """A template in the reader's language, as _() returns it: its .format words the messages (Msg)
    it is given in the same language, so a view can pass a model's text straight in."""

    __slots__ = ()

    def format(self, *pos, **args) -> str:  # type: ignore[override]
        return str.format(
            self, *[_worded_arg(v) for v in pos], **{k: _worded_arg(v) for k, v in args.items()}
        )


def _(message: str) -> str:
    """The message in the active language (the English msgid itself when there is no translation).
    Only report/ and commands/ call it; every other layer makes a msg()."""
    return Said(_active.gettext(message))


def C_(context: str, message: str) -> str:
    """_() for a word whose translation depends on where it stands (gettext's msgctxt), e.g. "source"
    as the input of a run (C_("input", "source")) versus the authority a finding cites."""
    return Said(_active.pgettext(context, message))


def N_(message: str) -> str:
    """Mark a message for extraction only; it is translated with _() where it is shown."""
    return message


class Msg(str):
    """English text that can be worded in any language later: the str value is the English (the message
    id formatted with its arguments); `id`, `context`, `pos` and `args` say how to word it. Arguments may
    be Msg themselves (they are worded too). `+` keeps both sides' messages; other str methods (strip,
    slicing, str.join, f-strings) give plain English text: compose with one message and placeholders."""

    __slots__ = ("args", "context", "id", "pos")

    def __new__(cls, msgid: str, /, *pos, context: str | None = None, **args):
        if isinstance(msgid, Msg):  # msg(a_message): the same message, with any further arguments
            msgid, pos, args, context = msgid.id, (*msgid.pos, *pos), {**msgid.args, **args}, msgid.context
        self = super().__new__(cls, msgid.format(*pos, **args) if (pos or args) else msgid)
        self.id, self.context, self.pos, self.args = msgid, context, pos, args
        return self

    def format(self, *pos, **args) -> Msg:  # type: ignore[override]
        """msg("{n} GPUs").format(n=8) is msg("{n} GPUs", n=8): the arguments stay with the message."""
        return Msg(self.id, *self.pos, *pos, context=self.context, **{**self.args, **args})

    def join(self, items) -> Msg:  # type: ignore[override]
        """msg(" and ").join(parts): the separator and the parts stay messages."""
        items = list(items)
        return Msg("{0}".join(f"{{{i + 1}}}" for i in range(len(items))), self, *items)

    def __add__(self, other: str) -> Msg:
        return Msg("{0}{1}", self, other)

    def __radd__(self, other: str) -> Msg:
        return Msg("{0}{1}", other, self)

    def __format__(self, spec: str) -> str:
        return format(word(self), spec) if _showing.get() else str.__format__(self, spec)

    def __str__(self) -> str:
        return word(self) if _showing.get() else str.__str__(self)

    def __reduce__(self):
        return (_rebuild, (self.id, self.context, self.pos, self.args))

    def __repr__(self) -> str:
        return f"msg({str.__repr__(self)})"


_showing: contextvars.ContextVar[bool] = contextvars.ContextVar("gpuwise_showing", default=False)


def shows(view):
    """Decorator of a view (report/views): while it builds its Document, f"{m}", str(m) and format(m)
    word every Msg in the active language, so text from a model's properties and methods reads right too."""

    @functools.wraps(view)
    def showing(*args, **kwargs):
        token = _showing.set(True)
        try:
            return view(*args, **kwargs)
        finally:
            _showing.reset(token)

    return showing


def _rebuild(msgid: str, context: str | None, pos: tuple, args: dict) -> Msg:
    return Msg(msgid, *pos, context=context, **args)


def msg(message: str, /, *pos, **args) -> Msg:
    """A message to show the user, in English until worded (see Msg). Placeholders are filled from `args`."""
    return Msg(message, *pos, **args)


def cmsg(context: str, message: str, /, *pos, **args) -> Msg:
    """msg() for a word whose translation depends on where it stands (gettext's msgctxt), e.g. "source"
    as the input of a run (cmsg("input", "source")) versus the authority a finding cites."""
    return Msg(message, *pos, context=context, **args)


def joined(separator: str, items) -> str:
    """separator.join(items) that keeps the messages among the items (str.join would give English)."""
    items = list(items)
    if not any(isinstance(i, Msg) for i in items):
        return separator.join(items)
    spec = separator.replace("{", "{{").replace("}", "}}").join(f"{{{i}}}" for i in range(len(items)))
    return Msg(spec, *items)


def clipped(text: str, limit: int) -> str:
    """`text` cut to `limit` characters; a message that fits stays a message (slicing would make it English)."""
    return text if len(text) <= limit else text[:limit]


def word(value):
    """A Msg in the active language (its arguments worded too); anything else as it is."""
    if not isinstance(value, Msg):
        return value
    if not value.id:  # gettext("") is the catalog's header, never a message
        return str.__str__(value)
    text = _active.pgettext(value.context, value.id) if value.context else _active.gettext(value.id)
    if not (value.pos or value.args):
        return text
    pos = [_worded_arg(v) for v in value.pos]
    args = {k: _worded_arg(v) for k, v in value.args.items()}
    try:
        return text.format(*pos, **args)
    except (KeyError, IndexError, ValueError):  # a translation whose placeholders drifted: say it in English
        return value.id.format(*pos, **args)


def _worded_arg(value):
    """An argument worded: a Msg, or an object whose str() is one (an error, a fact's unknown reason)."""
    if isinstance(value, Msg):
        return word(value)
    if isinstance(value, (str, int, float)) or value is None:
        return value
    text = value.__str__()
    return word(text) if isinstance(text, Msg) else value


def worded(obj):
    """A copy of `obj` (a model, dataclass, list, tuple, dict or text) with every Msg inside it worded in
    the active language; parts without messages are shared, not copied. Views call it on the model they
    show, after taking the JSON data from the original (which stays English)."""
    if isinstance(obj, Msg):
        return word(obj)
    if obj is None or isinstance(obj, (str, int, float, bytes)):
        return obj
    if isinstance(obj, list):
        new = [worded(v) for v in obj]
        return new if any(a is not b for a, b in zip(new, obj, strict=True)) else obj
    if isinstance(obj, tuple):
        items = [worded(v) for v in obj]
        if all(a is b for a, b in zip(items, obj, strict=True)):
            return obj
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        new = {worded(k): worded(v) for k, v in obj.items()}
        same = all(a is b for a, b in zip(new.values(), obj.values(), strict=True)) and all(
            not isinstance(k, Msg) for k in obj
        )
        return obj if same else type(obj)(new) if type(obj) is not dict else new
    names = list(type(obj).model_fields) if hasattr(type(obj), "model_fields") else None
    if names is None and is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in fields(obj)]
    if names is None:
        return obj
    changed = {}
    for name in names:
        value = getattr(obj, name, None)
        new = worded(value)
        if new is not value:
            changed[name] = new
    if not changed:
        return obj
    import copy

    out = copy.copy(obj)
    for name, value in changed.items():
        object.__setattr__(out, name, value)  # frozen dataclasses and models too: this is a fresh copy
    return out


def language() -> str:
    """The active language code ('en' or 'zh-CN')."""
    return _active_lang


def normalize(lang: str) -> str | None:
    """'zh-CN', 'zh_CN', 'zh_CN.UTF-8', 'zh-cn' -> 'zh-CN'; 'en', 'en_US.UTF-8', 'C', 'POSIX' -> 'en';
    anything else -> None."""
    code = lang.split(".")[0].split("@")[0].replace("_", "-").lower()
    if code in ("c", "posix") or code.split("-")[0] == "en":
        return "en"
    return next((name for name in LANGUAGES if name.lower() == code), None)


def language_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale variables ask for, in POSIX precedence (LC_ALL, LC_MESSAGES, LANG):
    the first one set decides; a locale with no catalog (de_DE, ...) means English."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if value:
            return normalize(value) or DEFAULT
    return DEFAULT


def _load(folder: str) -> gettext.NullTranslations:
    po = LOCALE_DIR / folder / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as fh:
            return gettext.GNUTranslations(fh)
    return gettext.GNUTranslations(io.BytesIO(compile_po(po)))


def compile_po(po: Path) -> bytes:
    """The .mo bytes of a .po catalog (Babel's compiler, as `pybabel compile` runs it; fuzzy entries
    are left out, so they show in English)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as fh:
        catalog = read_po(fh)
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def extract_yaml(fileobj, keywords, comment_tags, options):
    """Babel extraction method for data files (babel.cfg): the string values of the mapping keys listed
    in the section's `keys` option, e.g. an Xid's `meaning` and `action`. The code shows them with _()."""
    import yaml

    keys = set(options.get("keys", "").split())

    def walk(node):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(value, yaml.ScalarNode) and key.value in keys and value.value.strip():
                    yield value.start_mark.line + 1, None, value.value, []
                else:
                    yield from walk(value)
        elif isinstance(node, yaml.SequenceNode):
            for value in node.value:
                yield from walk(value)

    root = yaml.compose(fileobj.read().decode("utf-8"))
    yield from walk(root) if root is not None else ()


def set_language(lang: str) -> str:
    """Switch every later _() to `lang` ('en', 'zh-CN' or a locale name such as zh_CN.UTF-8).

    Raises ValueError for a language gpuwise has no catalog for (the CLI turns it into a usage error)."""
    global _active, _active_lang
    code = normalize(lang)
    if code is None:
        raise ValueError(f"unknown language {lang!r}; choose one of: {', '.join(LANGUAGES)}")
    folder = LANGUAGES[code]
    _active = gettext.NullTranslations() if folder is None else _load(folder)
    _active_lang = code
    return code
