#!/usr/bin/env python3
"""Regenerate the README screenshots docs/img/{doctor,plan,compare,plan-zh-CN}.png from recorded data.

Each page is made by the gpuwise command a user would run (printed as it runs), opened in headless
Chromium with the network cut off, cut to the part worth showing and stored as a palette PNG of at
most 150 KB. Where a part starts is measured, not guessed: the page cut just before the part's
marker is screenshotted too, and its last non-white row is where the part begins.

    .venv/bin/python scripts/readme_screenshots.py          # needs chromium (scripts/install-system-deps.sh)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
GPUWISE = [sys.executable, "-m", "gpuwise.cli"]
CAPTURE = "tests/captures/h200-1gpu-kvm-vm"
H200_BENCH = "tests/captures/h200-1gpu-kvm-vm.bench-quick.json"
CPU_BENCH = "tests/captures/cpu-vm-kvm-docker.bench-quick.json"
CPU_COLLECTIVE = "tests/captures/cpu-vm-kvm-docker.bench-collective.json"
WIDTH, MAX_BYTES = 1280, 150_000
# name -> (command arguments, marker the shot starts at (None: the top), height in pixels)
PAGES = {
    "doctor": (["doctor", "--from", CAPTURE, "--bench-results", H200_BENCH, "--no-history"], None, 900),
    "plan": (
        ["plan", "examples/llm-7b-pretrain-1t.yaml", "--options", "examples/plan-options.yaml"],
        "<h2>Recommendation",
        880,
    ),
    "compare": (["compare", CPU_COLLECTIVE, CPU_BENCH], None, 800),
    "plan-zh-CN": (  # needs a CJK font (fonts-wqy-microhei, scripts/install-system-deps.sh)
        [
            "--lang",
            "zh-CN",
            "plan",
            "examples/llm-7b-pretrain-1t.yaml",
            "--options",
            "examples/plan-options.yaml",
        ],
        "<h2>建议",
        880,
    ),
}


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("chromium not found. To fix: run scripts/install-system-deps.sh")
    return found


def shoot(html: Path, png: Path, height: int, profile: Path) -> Image.Image:
    cmd = [
        chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={profile}", f"--window-size={WIDTH},{height}",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
        f"--screenshot={png}", html.as_uri(),
    ]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return Image.open(png).convert("RGB")


def last_content_row(image: Image.Image) -> int:
    """The lowest row that is not page background."""
    gray = image.convert("L").point(lambda v: 255 if v < 250 else 0)
    box = gray.getbbox()
    return box[3] if box else 0


def make(name: str, work: Path, out_dir: Path) -> Path:
    args, marker, height = PAGES[name]
    html = work / f"{name}.html"
    command = [*GPUWISE, *args, "--format", "html", "-o", str(html)]
    print("$ gpuwise " + " ".join(args) + f" --format html -o {name}.html", flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1, 2) or not html.is_file():  # doctor exits 1/2 on warnings/criticals
        sys.exit(f"{name}: the command failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    top = 0
    if marker:
        page = html.read_text(encoding="utf-8")
        if marker not in page:
            sys.exit(f"{name}: {marker!r} is not in the page; update PAGES in {Path(__file__).name}")
        head = work / f"{name}-head.html"
        head.write_text(page[: page.index(marker)] + "</body></html>\n", encoding="utf-8")
        top = max(last_content_row(shoot(head, work / f"{name}-head.png", 6000, work / "chrome")) - 4, 0)
    full = shoot(html, work / f"{name}-full.png", top + height, work / "chrome")
    shot = full.crop((0, top, WIDTH, top + height)).quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    target = out_dir / f"{name}.png"
    shot.save(target, optimize=True)
    size = target.stat().st_size
    if size > MAX_BYTES:
        sys.exit(f"{target}: {size} bytes, over {MAX_BYTES}; lower the height or the colours")
    print(f"wrote {target.relative_to(ROOT)} ({size // 1000} KB, {WIDTH}x{height} from y={top})")
    return target


def main() -> None:
    out_dir = ROOT / "docs" / "img"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gwshots-") as tmp:
        for name in sys.argv[1:] or PAGES:
            make(name, Path(tmp), out_dir)


if __name__ == "__main__":
    main()
