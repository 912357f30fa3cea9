"""Write files so that an interrupted write never leaves a half-written file behind.

`publish_noreplace` moves a finished temporary into place only if nothing is there yet: two writers
racing for one path, or a file the user put there meanwhile, can never be silently replaced.
"""

from __future__ import annotations

import ctypes
import errno
import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | Path, text: str | bytes) -> None:
    """Write `text` (UTF-8, or bytes as they are) to a temporary file next to `path`, fsync it, then
    rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1  # linux/fs.h


def _renameat2_noreplace(src: Path, dst: Path) -> bool:
    """renameat2(RENAME_NOREPLACE): True when done, False when the kernel/filesystem/libc lacks it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 / not Linux
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False  # e.g. an NFS or overlay mount without RENAME_NOREPLACE
    raise OSError(err, os.strerror(err), str(dst))


def publish_noreplace(src: str | Path, dst: str | Path) -> None:
    """Move `src` (a finished file or directory next to `dst`) to `dst`; FileExistsError if `dst` exists.

    Uses renameat2(RENAME_NOREPLACE) where the kernel and filesystem have it. Otherwise a file is
    hard-linked (link(2) fails if the name exists) and the temporary unlinked, and a directory is
    renamed with rename(2), which refuses a non-empty directory or a file in the way.
    """
    src, dst = Path(src), Path(dst)
    if _renameat2_noreplace(src, dst):
        return
    if src.is_dir():
        try:
            os.rename(src, dst)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise FileExistsError(errno.EEXIST, "already exists", str(dst)) from None
            raise
        return
    os.link(src, dst)  # FileExistsError when the name is taken
    src.unlink()
