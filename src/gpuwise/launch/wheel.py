"""The gpuwise wheel a launch ships to its nodes: no node ever installs gpuwise from a package registry.

`ship_wheel(out, given)` finds the wheel of the gpuwise that runs the launch, for OUT/wheels/ (copied there
with the launch's other files): the one given with --gpuwise-wheel, else one built from the checkout this gpuwise
is installed from (`pip wheel --no-deps --no-build-isolation`, about 2 s), else the archive it was installed
from. The nodes install it with `pip install --no-index --find-links DIR WHEEL`: its dependencies come only
from what the node has, or from wheels the user puts beside it in DIR; `install_command` says which
dependencies it needs when that fails.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, joined, msg
from gpuwise.launch.quoting import sh

# PEP 427 file name of a pure-Python gpuwise wheel: name-version(-build)?-python-abi-platform.whl
_WHEEL_NAME = re.compile(
    r"gpuwise-[A-Za-z0-9_.+!]+(-[0-9][A-Za-z0-9_.]*)?-[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+\.whl"
)
WHEEL_FIX = N_("build one with `python -m pip wheel --no-deps -w DIR .` in a gpuwise checkout and pass "
               "--gpuwise-wheel DIR/gpuwise-VERSION-py3-none-any.whl")  # fmt: skip
FOLDER = "wheels"
METADATA_MAX_BYTES = 1 << 20  # a wheel's METADATA is a few kB; never read a bomb into memory


@dataclass(frozen=True)
class Wheel:
    path: Path  # where it goes in the launch's output folder (written with the other files)
    source: Path  # where it is now (the given file, or a build in a temporary folder)
    sha256: str
    requires: tuple[str, ...]  # its Requires-Dist without extras: what the node must have

    @property
    def name(self) -> str:
        return self.path.name


def _check_name(path: Path) -> None:
    if not _WHEEL_NAME.fullmatch(path.name):
        raise UserInputError(
            msg("{path} is not a gpuwise wheel file name (gpuwise-VERSION-py3-none-any.whl)").format(
                path=path
            ),
            msg(WHEEL_FIX),
        )


def _installed_source() -> Path | None:
    """The checkout or archive this gpuwise was installed from (PEP 610 direct_url.json), if it is local."""
    try:
        text = metadata.distribution("gpuwise").read_text("direct_url.json")
        url = json.loads(text or "{}").get("url", "")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _build(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("gpuwise-*.whl"):
        old.unlink()
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(folder),
        str(source),
    ]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        p = subprocess.CompletedProcess(cmd, 1, "", str(exc))
    built = sorted(folder.glob("gpuwise-*.whl"))
    if p.returncode != 0 or not built:
        raise UserInputError(
            msg("could not build the gpuwise wheel from {source}: {message}").format(
                source=source, message=(p.stderr or p.stdout).strip()[-300:] or msg("no message")
            ),
            msg(WHEEL_FIX),
        )
    return built[-1]


def _requires(path: Path) -> tuple[str, ...]:
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            info = next(i for i in z.infolist() if i.filename.endswith(".dist-info/METADATA"))
            if info.file_size > METADATA_MAX_BYTES:
                raise OSError(f"METADATA is {info.file_size} bytes")
            text = z.read(info).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, StopIteration, KeyError) as exc:
        raise UserInputError(
            msg("{path} is not a readable wheel ({error})").format(path=path, error=exc), msg(WHEEL_FIX)
        ) from None
    reqs = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    return tuple(r for r in reqs if "extra ==" not in r)


def _scratch() -> Path:
    """A temporary folder for this process's wheel builds, removed when it exits."""
    import atexit
    import tempfile

    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix="gpuwise-wheel-"))
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


_SCRATCH: Path | None = None


def ship_wheel(out: Path, given: Path | None = None) -> Wheel:
    """The gpuwise wheel that goes to OUT/wheels/ (the caller adds it to the launch's files)."""
    if given is not None:
        source = given.expanduser().absolute()
        _check_name(source)
        if not source.is_file():
            raise UserInputError(
                msg("--gpuwise-wheel {path}: no such file").format(path=source), msg(WHEEL_FIX)
            )
    else:
        installed = _installed_source()
        if installed is None or not installed.exists():
            raise UserInputError(
                msg("cannot find what this gpuwise was installed from, to ship it to the nodes"),
                msg(WHEEL_FIX),
            )
        if installed.is_dir():
            source = _build(installed, _scratch() / "build")
        else:
            _check_name(installed)
            source = installed
    digest = hashlib.sha256()
    with source.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return Wheel(
        path=out / FOLDER / source.name, source=source, sha256=digest.hexdigest(), requires=_requires(source)
    )


def install_command(wheel_dir: str, wheel: Wheel, python: str = "python3") -> str:
    """Shell: install the shipped wheel offline (--no-index); on failure, say what it needs.
    wheel_dir is a shell expression (already quoted) for the folder that holds the wheel on the node."""
    path = f"{wheel_dir}/{sh(wheel.name)}"
    needs = sh("gpuwise launch: installing the gpuwise wheel offline failed; the node needs: "
               + (joined(", ", wheel.requires) or "nothing more")
               + " (install them, or put their wheels beside the gpuwise wheel)")  # fmt: skip
    return (
        f"{python} -m pip install -q --no-index --find-links {wheel_dir} {path} || "
        f"{{ echo {needs} >&2; exit 1; }}"
    )
