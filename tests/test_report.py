"""``incastlab report DIR`` (issue 14): the page has the sweep's figure, tables and metadata,
the reproduction's claims with pass/FAIL, the store's contents; and a real headless
Chromium renders it into a screenshot that shows that page, not an error page."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from markupsafe import escape

from incastlab.report.screenshot import find_browser

HEADER_RGB = (0x1F, 0x3A, 0x5F)  # the page's header band (report/page.html.j2)
PASS_RGB = (0x2E, 0x7D, 0x32)
FAIL_RGB = (0xC6, 0x28, 0x28)


def incastlab(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    r = incastlab("sweep", "--grid", "servers=1..32", "buffer=32KiB,64KiB", "rto_min=200ms,200us", "jitter=3us",
                  "duration=0.5s", "--seeds", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    # fast08-fig13 --quick: one of the 3 claims fails at 1 s per point, so the page shows both verdicts
    r = incastlab("reproduce", "fast08-fig13", "--quick", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_the_page_has_the_sweep_the_reproduction_and_the_store(study_dir):
    r = incastlab("report", str(study_dir))
    assert r.returncode == 0, r.stderr
    html = (study_dir / "report.html").read_text()
    meta = json.loads((study_dir / "sweep.study.json").read_text())
    checks = json.loads((study_dir / "fast08-fig13.checks.json").read_text())
    assert html.count("data:image/png;base64,") == 2  # the sweep's figure and the reproduction's, embedded
    assert f"build {meta['core_build']}" in html and meta["summary"]["run_id"] in html
    assert "rto_min = 200ms, 200us" in html and "servers = 1, 2, 4, 8, 16, 32" in html
    for c in checks:
        assert str(escape(c["measured"])) in html and str(escape(c["claim"])) in html
    verdicts = [c["pass"] for c in checks]
    assert html.count('class="pass"') == verdicts.count(True) and html.count('class="fail"') == verdicts.count(False)
    assert "Result store" in html and "<script" not in html


def test_a_directory_with_nothing_to_report_is_a_usage_error(tmp_path):
    r = incastlab("report", str(tmp_path))
    assert r.returncode == 2 and "study.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _near(img, rgb, box, tolerance=12):
    """How many pixels of ``box`` lie within ``tolerance`` of ``rgb``, and their share."""
    import numpy as np

    px = np.asarray(img.convert("RGB").crop(box)).reshape(-1, 3).astype(int)
    count = int((np.abs(px - np.array(rgb)) <= tolerance).all(axis=1).sum())
    return count, count / len(px)


@pytest.mark.skipif(find_browser() is None and not os.environ.get("CI"),
                    reason="no Chromium here (scripts/install.sh installs it; CI must have it)")
def test_headless_chromium_renders_the_page(study_dir, tmp_path):
    from PIL import Image, ImageStat

    shot = tmp_path / "page.png"
    r = incastlab("report", str(study_dir), "--screenshot", str(shot), "--width", "1280", "--height", "2400")
    assert r.returncode == 0, r.stderr
    assert shot.stat().st_size > 50_000  # a page with figures, not a blank or an error page (about 5-20 kB)
    img = Image.open(shot)
    assert img.format == "PNG" and img.size == (1280, 2400)
    # the header band across the top: the page's own, which an error page does not have
    assert _near(img, HEADER_RGB, (0, 0, 1280, 50))[1] > 0.8
    # not blank below it: the figures' many colours
    stat = ImageStat.Stat(img.convert("L").crop((0, 100, 1280, 2400)))
    assert stat.stddev[0] > 20
    assert len(img.convert("RGB").crop((0, 300, 1280, 1200)).getcolors(maxcolors=1 << 20)) > 200
    # the reproduction's verdicts as badges (pass green, FAIL red) somewhere on the page or below
    tall = tmp_path / "tall.png"
    r = incastlab("report", str(study_dir), "--screenshot", str(tall), "--height", "6000")
    assert r.returncode == 0, r.stderr
    full = Image.open(tall)
    # a badge cell is about 50 x 30 pixels; matplotlib's greens and reds are other shades
    assert _near(full, PASS_RGB, (0, 0, 1280, 6000), 4)[0] > 1000
    assert _near(full, FAIL_RGB, (0, 0, 1280, 6000), 4)[0] > 1000
