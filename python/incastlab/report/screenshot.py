"""A screenshot of a page in headless Chromium (Debian's ``chromium`` package,
installed by scripts/install.sh): how the tests and the docs look at a report."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import EnvironmentProblem

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT_S = 120


def find_browser() -> str | None:
    return next((p for p in (shutil.which(b) for b in BROWSERS) if p), None)


def screenshot(page: str | os.PathLike, png: str | os.PathLike, width: int = 1280, height: int = 2400) -> Path:
    """Render the local HTML file ``page`` at ``width`` x ``height`` CSS pixels into ``png``."""
    browser = find_browser()
    if browser is None:
        raise EnvironmentProblem("no Chromium to take the screenshot with (apt-get install chromium; "
                                 "scripts/install.sh does)")
    out = Path(png).resolve()
    with tempfile.TemporaryDirectory(prefix="incastlab-chromium-") as profile:
        cmd = [browser, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-extensions", f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={out}", Path(page).resolve().as_uri()]
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise EnvironmentProblem(f"{browser} took more than {TIMEOUT_S} s to render {page}") from None
    if r.returncode != 0 or not out.exists():
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise EnvironmentProblem(f"{browser} could not take the screenshot (exit {r.returncode}): {last}")
    if not is_whole_png(out):  # on a full disk Chromium exits 0 and leaves 0 bytes
        raise EnvironmentProblem(f"{browser} wrote no whole PNG to {png} ({out.stat().st_size} bytes; a full disk?)")
    return out


def is_whole_png(path: str | os.PathLike) -> bool:
    """The PNG signature at the start and the IEND chunk at the end (PNG spec, 5.2 and 11.2.5)."""
    with open(path, "rb") as f:
        head = f.read(8)
        f.seek(0, os.SEEK_END)
        if f.tell() < 8 + 12:
            return False
        f.seek(-12, os.SEEK_END)
        tail = f.read(12)
    return head == b"\x89PNG\r\n\x1a\n" and tail[4:8] == b"IEND"
