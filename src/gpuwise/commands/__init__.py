"""One module per CLI command. Each defines `register(app)` and imports heavy code lazily.

Shared here: the checks every command does on a file it will write for the user, so that a bad
`-o`/`--save` path fails in a second with a clear message, before minutes of work, and never leaves
a half-written file (writes go through gpuwise.atomic).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gpuwise.i18n import _


def check_output_path(path: Path, option: str) -> None:
    """Raise UserInputError unless a file can be written at `path` (checked by creating a temp file).

    Missing parent folders are fine (gpuwise.atomic creates them) as long as the nearest existing
    one is a writable directory.
    """
    from gpuwise.errors import UserInputError

    path = Path(path).expanduser()
    if path.is_dir():
        raise UserInputError(
            _("{option} {path} is a directory").format(option=option, path=path),
            _("pass a file name, e.g. {option} {value}").format(option=option, value=path / "out"),
        )
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UserInputError(
            _("{option} {path}: {folder} is not a directory").format(option=option, path=path, folder=folder),
            _("choose an output path inside an existing directory"),
        )
    try:
        write_probe(folder)
    except OSError as exc:
        raise UserInputError(
            _("{option} {path}: cannot write in {folder} ({value})").format(
                option=option, path=path, folder=folder, value=exc.strerror or exc
            ),
            _("choose a directory you can write to"),
        ) from None


def write_probe(folder: Path) -> None:
    """Create and remove a file in `folder`, or raise OSError: tried for real, as os.access says yes to root
    on a read-only mount. SIGINT/SIGTERM are held meanwhile, so an interrupt never leaves the file behind."""
    from gpuwise import interrupts

    with interrupts.deferred():
        fd, probe = tempfile.mkstemp(prefix=".gpuwise-write-check.", dir=folder)
        os.close(fd)
        os.unlink(probe)


def write_output(path: Path, text: str | bytes, option: str) -> None:
    """Write `text` to `path` atomically; an OS error (disk full, permissions) becomes a UserInputError."""
    from gpuwise.atomic import write_text_atomic
    from gpuwise.errors import UserInputError

    try:
        write_text_atomic(Path(path).expanduser(), text)
    except OSError as exc:
        raise UserInputError(
            _("{option} {path}: could not write the file ({value}); nothing was written").format(
                option=option, path=path, value=exc.strerror or exc
            ),
            _("free some space or choose another path"),
        ) from None
