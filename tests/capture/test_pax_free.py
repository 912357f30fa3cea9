"""`gpuwise capture -o X.tar.gz` writes members without PAX records (they double the cost of reading)."""

from __future__ import annotations

import tarfile

from gpuwise.capture.writer import write_tarball


def test_tarball_members_have_plain_headers(tmp_path):
    folder = tmp_path / "cap"
    (folder / "commands").mkdir(parents=True)
    (folder / "commands" / "lscpu.txt").write_text("Architecture: x86_64\n")
    (folder / "manifest.json").write_text("{}")
    write_tarball(folder, tmp_path / "cap.tar.gz", "cap")
    with tarfile.open(tmp_path / "cap.tar.gz") as tar:
        members = tar.getmembers()
    assert sorted(m.name for m in members) == [
        "cap",
        "cap/commands",
        "cap/commands/lscpu.txt",
        "cap/manifest.json",
    ]
    assert all(m.pax_headers == {} and m.uname == "" and isinstance(m.mtime, int) for m in members)
