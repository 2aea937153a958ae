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
    return out
