"""``incastlab report DIR``: one static HTML page of what DIR holds.

    incastlab report out                          # out/report.html
    incastlab report out --html page.html --screenshot page.png

DIR is an output directory of ``incastlab sweep`` or ``incastlab reproduce`` (or both),
or a result store. docs/sweep.md, "Report".
"""

from __future__ import annotations

import argparse

from ..errors import EnvironmentProblem, UsageError
from ..outfiles import check_distinct, check_writable, together, write_text
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
    from pathlib import Path

    html_path = args.html or str(Path(args.dir) / "report.html")
    if args.html:
        check_writable(args.html, "--html", ("html", "htm"))
    elif Path(args.dir).is_dir():
        try:
            check_writable(html_path, "DIR")
        except UsageError as e:
            raise UsageError("DIR", args.dir, f"{e.allowed} for DIR/report.html; --html FILE writes the page "
                             "elsewhere (a read-only store can be reported on)") from None
    if args.screenshot:
        check_writable(args.screenshot, "--screenshot", ("png",))
        check_distinct([(html_path, "--html"), (args.screenshot, "--screenshot")])
        from ..report.screenshot import find_browser

        if find_browser() is None:  # before the page is written: a refusal leaves nothing
            raise EnvironmentProblem("--screenshot needs Chromium (apt-get install chromium; scripts/install.sh does)")
    from .. import report

    page = report.build(args.dir)
    with together() as files:  # the page and its screenshot appear together (docs/faults.md)
        write_text(html_path, page, "--html")
        if args.screenshot:
            from ..report.screenshot import screenshot

            staged_page = files.staged[-1].tmp
            screenshot(staged_page, files.reserve(args.screenshot, "--screenshot"), args.width, args.height)
    print(f"wrote {html_path}")
    if args.screenshot:
        print(f"wrote {args.screenshot}")
    return 0
