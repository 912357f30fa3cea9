"""Where a study lives: its name (a name, never a path), its SQLite file, and its trial folders.

A study name becomes a folder under `<storage>.trials/`, so it is checked with a full-match pattern
before anything is written: `--study ../../x` or an absolute path would put trial folders outside the
storage. Trial folders are created fresh and never reused: a folder that already exists belongs to an
earlier study of that name (its database deleted, say), and its files are the user's, not ours to replace.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuwise.i18n import msg

STUDY_NAME = re.compile(r"\A[A-Za-z0-9._-]{1,64}\Z")


def check_study_name(name: str) -> str:
    """`name` when it is a plain study name; UserInputError otherwise."""
    from gpuwise.errors import UserInputError

    if not STUDY_NAME.fullmatch(name) or name in (".", ".."):
        raise UserInputError(
            msg("--study {name!r} is not a study name (a study is a name, never a path)").format(name=name),
            fix=msg(
                "use 1 to 64 letters, digits, '.', '_' or '-' (not '.' or '..'); --storage picks the file"
            ),
        )
    return name


def safe_name(text: str, limit: int = 40) -> str:
    """A study name made from free text (a command, a spec path): other characters become '-'."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)[:limit].strip("-") or "study"


def trials_folder(storage: Path, study: str) -> Path:
    return storage.parent / f"{storage.stem}.trials" / check_study_name(study)


def new_trial_folder(folder: Path) -> Path:
    """Create `folder` for one trial; UserInputError when it exists (an earlier study's trial)."""
    from gpuwise.errors import UserInputError

    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir()
    except FileExistsError:
        raise UserInputError(
            msg(
                "trial folder {folder} already exists (from an earlier study of this name); not overwriting it"
            ).format(folder=folder),
            fix=msg("pass another --study NAME, or move that folder away"),
        ) from None
    return folder


def open_study(study_name: str, storage: Path, sampler, pruner):
    """Create or load the study; a file that is not an Optuna SQLite database is a clear error."""
    import optuna
    import sqlalchemy.exc

    from gpuwise.errors import UserInputError

    storage.parent.mkdir(parents=True, exist_ok=True)
    try:
        return optuna.create_study(
            study_name=study_name,
            storage=f"sqlite:///{storage}",
            load_if_exists=True,
            direction="maximize",
            sampler=sampler,
            pruner=pruner,
        )
    except (sqlalchemy.exc.SQLAlchemyError, ValueError, RuntimeError) as exc:
        raise UserInputError(
            msg("{storage} is not a readable study database ({error})").format(
                storage=storage, error=str(exc).splitlines()[0][:200]
            ),
            fix=msg("move the file away or pass another --storage FILE; a new one is created"),
        ) from None
