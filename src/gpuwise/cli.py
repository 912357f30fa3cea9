"""The `gpuwise` command line: a thin Typer app.

Each command lives in gpuwise/commands/<name>.py and registers itself with `register(app)`.
Command modules import only typer at import time, so `gpuwise --help` stays fast and works on a
machine with no GPU, no driver and no torch. Errors from gpuwise (GpuwiseError) are printed as a
clean message ending in "To fix: ..."; a traceback is shown only with --debug.

Exit codes: the one table in gpuwise.errors.EXIT_CODES, for every command and the same with --debug
(which only adds a traceback).
"""

from __future__ import annotations

import sys
import traceback
import warnings

import typer
from typer.core import TyperGroup, TyperOption

from gpuwise import __version__, i18n, interrupts
from gpuwise.commands import (
    bench,
    capture,
    catalog,
    doctor,
    export,
    fleet,
    history,
    launch,
    plan,
    probe,
    profile,
    stability,
    tune,
    watch,
)
from gpuwise.commands.helptext import translate_help
from gpuwise.errors import EXIT_COULD_NOT_RUN, EXIT_INTERRUPTED, EXIT_PIPE_CLOSED, EXIT_TERMINATED
from gpuwise.i18n import N_

_typer_display_type = TyperOption.display_type_rich


def _display_type_without_flag_metavar(self: TyperOption, ctx) -> str | None:
    """Typer labels every flag '<bool>', so `--json` reads as if it took a value: flags get no label."""
    return None if self.is_flag else _typer_display_type(self, ctx)


TyperOption.display_type_rich = _display_type_without_flag_metavar  # type: ignore[method-assign]


def _lang_option(args: list[str]) -> str | None:
    """The --lang value among the options before the command (where lang_first puts it), if any."""
    value, i = None, 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        if args[i] == "--lang" and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        elif args[i].startswith("--lang="):
            value = args[i].partition("=")[2]
        i += 1
    return value


class _GpuwiseGroup(TyperGroup):
    """The root command: sets the language before parsing, because Click prints --help while it parses,
    before the app callback below has read --lang (a command's --help comes later: the callback runs
    first). A bad --lang leaves English here; the callback then reports it."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        try:
            i18n.set_language(_lang_option(args) or i18n.language_from_env())
        except ValueError:
            i18n.set_language(i18n.DEFAULT)
        translate_help(self, ctx, english=i18n.language() == i18n.DEFAULT)
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="gpuwise",
    cls=_GpuwiseGroup,
    help=N_(
        "Measure, diagnose and plan GPU training machines: "
        "cloud instances and self-built clusters.\n\nExit codes: 0 = ok; 1 = warnings, "
        "2 = critical findings (doctor only); 3 = could not run (the message says how to fix it); "
        "4 = a benchmark failed (bench, unless --keep-going); 130 = interrupted. --debug adds a traceback, "
        "never changes the code."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuwise {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help=N_("Print the version and exit.")
    ),
    debug: bool = typer.Option(False, "--debug", help=N_("Show tracebacks for errors.")),
    lang: str | None = typer.Option(
        None,
        "--lang",
        metavar="en|zh-CN",
        help=N_(
            "Language of the reports and messages: en or zh-CN (default: from LC_ALL / LC_MESSAGES / "
            "LANG, else English); may also follow the command. Numbers, units, commands, ids and JSON keys "
            "stay as they are."
        ),
    ),
) -> None:
    _state["debug"] = debug
    try:
        i18n.set_language(lang if lang is not None else i18n.language_from_env())
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lang") from None
    if not debug:
        # numpy's overflow/invalid-value RuntimeWarnings name source lines; a user gets the checked
        # result or a clean error instead (inputs are validated finite). --debug shows them.
        warnings.filterwarnings("ignore", category=RuntimeWarning)


for _module in (
    probe,
    capture,
    bench,
    doctor,
    plan,
    catalog,
    history,
    fleet,
    export,
    watch,
    tune,
    profile,
    launch,
    stability,
):
    _module.register(app)


def _is_usage_error(exc: Exception) -> bool:
    """A click usage error (unknown option, bad value, missing argument). Typer >= 0.2x ships its own
    copy of click, so the class is not always click's: recognise it by what it offers."""
    return callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)


def _debug_traceback() -> None:
    """With --debug, show where an error came from; the exit code stays the one the table gives."""
    if _state["debug"]:
        traceback.print_exc()


def _interrupted() -> None:
    """Exit for Ctrl-C / SIGINT (130) or SIGTERM (143), after every clean-up has run."""
    import signal

    terminated = interrupts.received() == signal.SIGTERM
    typer.echo(i18n._("terminated") if terminated else i18n._("interrupted"), err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def lang_first(argv: list[str]) -> list[str]:
    """`gpuwise doctor --lang zh-CN` means `gpuwise --lang zh-CN doctor`: --lang is a global option, and
    people put it after the command too. Arguments after `--` (a command to run) are left alone."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        if arg == "--lang" and i + 1 < len(argv):
            front += argv[i : i + 2]
            i += 2
            continue
        (front if arg.startswith("--lang=") else rest).append(arg)
        i += 1
    return front + rest


def main() -> None:
    """Console-script entry point: run the app and turn gpuwise errors into clean messages."""
    from gpuwise.errors import GpuwiseError

    interrupts.install()
    try:
        # with standalone_mode=False click returns the exit code a command raised via typer.Exit
        code = app(args=lang_first(sys.argv[1:]), standalone_mode=False)
    except GpuwiseError as exc:
        _debug_traceback()
        typer.secho(
            i18n._("error: {message}").format(message=i18n.word(exc.text())), fg=typer.colors.RED, err=True
        )
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):  # click turns Ctrl-C into Abort
        _interrupted()
    except BrokenPipeError:  # `gpuwise ... | head`: the reader left; not an error worth a message
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit flush
        sys.exit(EXIT_PIPE_CLOSED)
    except OSError as exc:  # a file or device the OS refused (permissions, disk full) that no command caught
        _debug_traceback()
        where = f" ({exc.filename})" if exc.filename else ""
        typer.secho(
            i18n._("error: {message}").format(message=f"{exc.strerror or exc}{where}")
            + "\n"
            + i18n._(
                "To fix: check that the path exists, that you can read or write it, and that the disk has space"
            ),
            fg=typer.colors.RED,
            err=True,
        )
        sys.exit(EXIT_COULD_NOT_RUN)
    except Exception as exc:  # click usage errors and anything unexpected
        if interrupts.received() is not None:
            # the stop signal's exception, wrapped by a library it passed through (pydantic turns a
            # KeyboardInterrupt raised while it builds a model's schema into a SchemaError)
            _interrupted()
        if _is_usage_error(exc):
            exc.show()  # "Usage: ... Try 'gpuwise CMD --help' for help. Error: ..."
            # 3, not click's 2: for doctor 2 means "critical findings", and a typo must not read as that
            sys.exit(EXIT_COULD_NOT_RUN)
        _debug_traceback()
        typer.secho(
            i18n._("internal error: {error}").format(error=f"{type(exc).__name__}: {exc}")
            + "\n"
            + i18n._("Re-run with --debug for a traceback, and please report it."),
            fg=typer.colors.RED,
            err=True,
        )
        sys.exit(EXIT_COULD_NOT_RUN)
    if code == 130:
        _interrupted()  # typer turns Ctrl-C into Exit(130) and, without standalone mode, returns it silently
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
