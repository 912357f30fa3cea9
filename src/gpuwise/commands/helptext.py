"""`--help` in the active language.

Typer turns the English `help=` strings into a Click command tree on every run. Each help text is marked
with N_() where it is written (a text filled in with values: help_text()), and before the arguments are
parsed (where --help prints) the CLI calls translate_help() on the new tree: help texts, the help option's
own line and Typer's panel titles are looked up in the catalog, and Chinese lines break between characters
(the text renderer's WrapText). English leaves the tree and Typer untouched.
Option names, metavars, defaults and commands are never translated.
"""

from __future__ import annotations

from gpuwise.i18n import C_, N_, _

# Click's line for --help (not in our sources otherwise: marked here so the catalog has it)
HELP_OPTION = N_("Show this message and exit.")

_filled: dict[str, tuple[str, dict[str, object]]] = {}


def help_text(template: str, **values: object) -> str:
    """`template` (marked with N_ by the caller) with its {placeholders} filled in: the English help.
    translate_help() shows the translated template with the same values."""
    text = template.format(**values)
    _filled[text] = (template, values)
    return text


def translated(text: str) -> str:
    """The active language's version of an English help text."""
    if text in _filled:
        template, values = _filled[text]
        return _(template).format(**values)
    return _(text)


def _typer_labels() -> dict[str, object]:
    """Typer's own words in the help panels (typer.rich_utils constants) in the active language."""
    return {
        "ARGUMENTS_PANEL_TITLE": C_("help panel", "Arguments"),
        "OPTIONS_PANEL_TITLE": C_("help panel", "Options"),
        "COMMANDS_PANEL_TITLE": C_("help panel", "Commands"),
        "DEFAULT_STRING": C_("help", "[default: {}]"),
        "REQUIRED_LONG_STRING": C_("help", "[required]"),
    }


_typer_english: dict[str, object] = {}


def _wrapping(make_rich_text):
    """Typer's help texts as the text renderer's WrapText: Rich breaks lines at spaces only, so a Chinese
    sentence would start a new line or, in the option table, be cropped with '…'."""
    from rich.text import Text

    from gpuwise.report.formats._cjk import WrapText

    def make(**kwargs):
        text = make_rich_text(**kwargs)
        if not isinstance(text, Text):  # Markdown, in Typer's markdown mode
            return text
        return WrapText(justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap).append_text(text)

    return make


TEXT_MAKER = (
    "_make_rich_text"  # typer.rich_utils' private text maker (older Typer releases spelt it otherwise)
)


def _set_typer_text(english: bool) -> None:
    from typer import rich_utils

    if not _typer_english:  # what this Typer has (private names may move between Typer releases)
        _typer_english.update(
            (name, getattr(rich_utils, name))
            for name in [*_typer_labels(), TEXT_MAKER]
            if hasattr(rich_utils, name)
        )
    if english:
        values = dict(_typer_english)
    else:
        values = {name: text for name, text in _typer_labels().items() if name in _typer_english}
        if TEXT_MAKER in _typer_english:  # else Rich's own wrapping: Chinese lines break at spaces
            values[TEXT_MAKER] = _wrapping(_typer_english[TEXT_MAKER])
    for name, value in values.items():
        setattr(rich_utils, name, value)


def translate_help(command, ctx, english: bool) -> None:
    """Put the active language's help on `command` and every subcommand (a tree Typer built for this run).
    English (`english`): the tree stays as it is; Typer's own text is put back if an earlier run in this
    process changed it."""
    if english and not _typer_english:
        return  # never changed: nothing to import or undo
    _set_typer_text(english)
    if not english:
        _translate_tree(command, ctx)


def _translate_tree(command, ctx) -> None:
    for attr in ("help", "short_help", "rich_help_panel"):
        text = getattr(command, attr, None)
        if text:
            setattr(command, attr, translated(text))
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option else [])]:
        for attr in ("help", "rich_help_panel"):
            text = getattr(param, attr, None)
            if text:
                setattr(param, attr, translated(text))
    for sub in getattr(command, "commands", {}).values():
        _translate_tree(sub, ctx)
