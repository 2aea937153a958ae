"""Entry point of the ``incastlab`` command.

Each face (simulate, testbed, monitor, model, ...) lives in its own module under
``incastlab.cli`` and exposes ``register(subparsers)``; adding a face is one line in
``COMMANDS``. User mistakes raise ``UsageError`` and end here as one line on stderr with
exit status 2 (DESIGN.md, "Errors").
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import io
import os
import re
import sys
import warnings

from ..errors import EnvironmentProblem, UsageError
from ..interrupts import exit_status, handle_signals, signal_name

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
    # SIGTERM and SIGHUP stop a command as Ctrl-C does (incastlab.interrupts), from the
    # first import on; warnings (a damaged store file set aside) are one line each
    with handle_signals(), one_line_warnings():
        try:
            parser = build_parser()
            argv = sys.argv[1:] if argv is None else list(argv)
            asked = _help_for(parser, argv)
            if asked is not None:  # `incastlab`, `incastlab model`: what there is to choose, not an error
                asked.print_help()
                _flush_stdout()
                return 0
            try:
                args = parser.parse_args(argv)
            except SystemExit:  # --help, --version: their text must reach the file too
                _flush_stdout()
                raise
            code = int(args.func(args) or 0)
            _flush_stdout()  # a full disk under a redirected stdout: one line below, not an exit-time warning
            return code
        except (UsageError, EnvironmentProblem) as e:
            _say(f"incastlab: error: {e}")
            return 2
        except KeyboardInterrupt as e:
            _say(f"incastlab: interrupted ({signal_name(e)})")
            return exit_status(e)
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            _quiet_stdout()
            return 0
        except OSError as e:  # the machine refused (a full disk, an I/O error): not a bug of ours
            _say(f"incastlab: error: {_os_error_text(e)}")
            _quiet_stdout()
            return 2
        except MemoryError:
            _say("incastlab: error: out of memory")
            return 2


def _os_error_text(e: OSError) -> str:
    why = e.strerror or str(e)
    if e.filename:
        return f"{why}: {e.filename}"
    if _stdout_fails() or (e.errno == errno.ENOSPC and _stdout_disk_full()):  # `> file` on a full disk
        return f"cannot write to standard output: {why}"
    return why


def _stdout_fails() -> bool:
    """Whether what the command printed is still stuck in stdout's buffer."""
    try:
        _flush_stdout()
    except (OSError, ValueError):
        return True
    return False


def _stdout_disk_full() -> bool:
    """Whether stdout is a file on a full file system (unbuffered, PYTHONUNBUFFERED=1,
    nothing stays in the buffer to tell by)."""
    try:
        st = os.fstatvfs(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return st.f_bavail == 0


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _say(text: str) -> None:
    try:  # after SIGHUP the terminal may be gone
        print(text, file=sys.stderr)
    except (OSError, ValueError):
        pass


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit does not print a
    second error about the same broken pipe or full disk."""
    try:
        if sys.stdout is not None and sys.stdout.fileno() >= 0:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):  # stdout is a StringIO (tests) or closed
        pass


@contextlib.contextmanager
def one_line_warnings():
    """Python's warnings as ``incastlab: warning: ...`` lines (no file name, no source line)."""
    def show(message, category, filename, lineno, file=None, line=None):
        _say(f"incastlab: warning: {' '.join(str(message).split())}")

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


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
