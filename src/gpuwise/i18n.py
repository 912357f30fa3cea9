"""Translations of user-facing text: GNU gettext from the standard library, catalogs managed by Babel.

Mark text where it is written, never after it is formatted:

    from gpuwise.i18n import _, C_, N_
    _("{n} of {total} GPUs have persistence mode off").format(n=len(off), total=len(known))
    title=N_("GPU persistence mode is off")   # module level: marked for extraction, translated at use

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

import gettext
import io
import os
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "gpuwise"
LOCALE_DIR = Path(__file__).parent / "locale"
DEFAULT = "en"
# --lang value -> the catalog folder under locale/ (None: the source language, no catalog)
LANGUAGES: dict[str, str | None] = {"en": None, "zh-CN": "zh_CN"}

_active: gettext.NullTranslations = gettext.NullTranslations()
_active_lang = DEFAULT


def _(message: str) -> str:
    """The message in the active language (the English msgid itself when there is no translation)."""
    return _active.gettext(message)


def C_(context: str, message: str) -> str:
    """_() for a word whose translation depends on where it stands (gettext's msgctxt), e.g. "source"
    as the input of a run (C_("input", "source")) versus the authority a finding cites."""
    return _active.pgettext(context, message)


def N_(message: str) -> str:
    """Mark a message for extraction only; it is translated with _() where it is shown."""
    return message


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
