"""``incastlab report DIR``: placeholder."""


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="one static HTML page of a sweep's or reproduction's results")
    p.set_defaults(func=lambda a: 0)
