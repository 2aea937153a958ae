"""``incastlab report DIR``: one static HTML page of what DIR holds.

    incastlab report out                          # out/report.html
    incastlab report out --html page.html --screenshot page.png

DIR is an output directory of ``incastlab sweep`` or ``incastlab reproduce`` (or both),
or a result store. docs/sweep.md, "Report".
"""

from __future__ import annotations

import argparse

from ..errors import EnvironmentProblem
from ..outfiles import check_writable
from . import argtypes


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="one static HTML page of a sweep's or reproduction's results (figures, tables, checks, versions)",
        description="Write one self-contained HTML page of DIR: each sweep's figure, tables and metadata, each "
        "reproduction's figure and checked claims, each result store's contents and runs.",
    )
    p.add_argument("dir", metavar="DIR", help="an output directory of incastlab sweep/reproduce, or a result store")
    p.add_argument("--html", metavar="FILE", help="where to write the page (default: DIR/report.html)")
    p.add_argument("--screenshot", metavar="PNG", help="also render the page in headless Chromium into PNG")
    p.add_argument("--width", type=argtypes.positive_int("--width", minimum=320, maximum=8000), default=1280,
                   help="screenshot width in pixels (default 1280)")
    p.add_argument("--height", type=argtypes.positive_int("--height", minimum=240, maximum=30000), default=2400,
                   help="screenshot height in pixels (default 2400)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.html:
        check_writable(args.html, "--html", ("html", "htm"))
    if args.screenshot:
        check_writable(args.screenshot, "--screenshot", ("png",))
        from ..report.screenshot import find_browser

        if find_browser() is None:  # before the page is written: a refusal leaves nothing
            raise EnvironmentProblem("--screenshot needs Chromium (apt-get install chromium; scripts/install.sh does)")
    from .. import report

    path = report.write(args.dir, args.html)
    print(f"wrote {path}")
    if args.screenshot:
        from ..report.screenshot import screenshot

        print(f"wrote {screenshot(path, args.screenshot, args.width, args.height)}")
    return 0
