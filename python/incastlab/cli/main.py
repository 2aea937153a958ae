"""Entry point of the ``incastlab`` command.

Each face (simulate, testbed, monitor, model, ...) lives in its own module under
``incastlab.cli`` and exposes ``register(subparsers)``; adding a face is one line in
``COMMANDS``. User mistakes raise ``UsageError`` and end here as one line on stderr with
exit status 2 (DESIGN.md, "Errors").
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys

from ..errors import EnvironmentProblem, UsageError

# Modules under incastlab.cli, each with register(subparsers).
COMMANDS = [
    "simulate",
    "model",
    "demo",
    "bench",
    "testbed",
    "serve",
    "read",
    "validate",
    "reproduce",
    "sweep",
    "report",
    "monitor",
    "doctor",
]


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit status 2 (no usage dump), and a
    negative quantity (``--rto-min -5ms``) is a value to refuse with its reason, not a
    missing argument."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse takes "-5ms" for an option because only bare numbers count as negative
        # values (its _negative_number_matcher); none of our options looks like a number
        self._negative_number_matcher = re.compile(r"^-[0-9.]+[A-Za-zµ/%]*$")

    def error(self, message: str):  # noqa: D401 - argparse API
        # argparse quotes no argument it did not recognize: a newline or other control
        # character in one would split the error over lines, so show those escaped
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Version(argparse.Action):
    """``--version``: the installed package's version, read only when asked for."""

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__

        print(f"incastlab {__version__}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="incastlab",
        description="Reproduce, explain and fix TCP incast.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"incastlab.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # inside the try: a Ctrl-C while the commands' modules load is an interruption too
        parser = build_parser()
        asked = _help_for(parser, argv)
        if asked is not None:  # `incastlab`, `incastlab model`: what there is to choose, not an error
            asked.print_help()
            return 0
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"incastlab: error: {e}", file=sys.stderr)
        return 2
    except EnvironmentProblem as e:
        print(f"incastlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("incastlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _help_for(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser | None:
    """The parser whose help a bare command asks for: ``incastlab`` alone, or a command
    that needs a subcommand and was given none (``incastlab testbed``); else None."""
    for word in argv:
        sub = _required_subcommands(parser).get(word)
        if sub is None:
            return None  # an option, a value or a word argparse will judge
        parser = sub
    return parser if _required_subcommands(parser) else None


def _required_subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and action.required:
            return dict(action.choices)
    return {}


if __name__ == "__main__":
    sys.exit(main())
