"""Shared parts of the fault-injection suite (tests/test_faults.py, issue 25): the tally of
faults tried and how each ended, the ways to run a command, and what a fault may leave.

A fault's outcome is judged by what a user relies on: no traceback, no process left
running, no output half-written or left where it should not be (an empty file, a
temporary file, one file of a pair), and nothing replaced that was not a regular file.
The session ends with one line of counts (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

CLI = [sys.executable, "-m", "incastlab.cli.main"]


class FaultTally:
    """Faults injected, by kind, and what went wrong in any of them."""

    def __init__(self) -> None:
        self.tried: Counter = Counter()
        self.tracebacks = 0
        self.orphans = 0
        self.partial = 0
        self.replaced = 0

    def record(self, kind: str, *, traceback: bool = False, orphans: int = 0, partial: int = 0,
               replaced: bool = False) -> None:
        """One fault of ``kind``: whether a traceback showed, how many processes outlived
        the command, how many files it left half-done, whether it replaced what it must not
        (a device, a link). Recorded before the test's asserts, so a failing case counts."""
        self.tried[kind] += 1
        self.tracebacks += bool(traceback)
        self.orphans += orphans
        self.partial += partial
        self.replaced += bool(replaced)

    def summary(self) -> str:
        if not self.tried:
            return ""
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.tried.items()))
        return (f"faults: {sum(self.tried.values())} tried ({kinds}); {self.tracebacks} tracebacks, "
                f"{self.orphans} orphaned processes, {self.partial} partial outputs, "
                f"{self.replaced} devices or links replaced")


TALLY = FaultTally()


@dataclass
class Outcome:
    code: int | None
    out: str
    err: str
    traceback: bool
    seconds: float = 0.0
    pid: int | None = None
    error: BaseException | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def run_in_process(argv: list[str], cwd: Path) -> Outcome:
    """``incastlab ARGV`` in this process (fast: no interpreter start), in ``cwd``. An
    exception that escapes ``main`` is a traceback."""
    from incastlab.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    start = time.monotonic()
    error = None
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as e:
                code = 0 if e.code is None else e.code
            except BaseException as e:  # noqa: BLE001 - the very thing this suite looks for
                code, error = None, e
    finally:
        os.chdir(old)
    text = err.getvalue()
    return Outcome(code, out.getvalue(), text, error is not None or "Traceback" in text,
                   time.monotonic() - start, error=error)


def start(argv: list[str], cwd: Path) -> subprocess.Popen:
    """``incastlab ARGV`` as a process in a session of its own (its pid is its process
    group: ``group_processes`` finds whatever it started, also after it is gone)."""
    return subprocess.Popen(CLI + [str(a) for a in argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def finish(p: subprocess.Popen, timeout: float = 60) -> Outcome:
    out, err = p.communicate(timeout=timeout)
    return Outcome(p.returncode, out, err, "Traceback" in err, pid=p.pid)


def group_processes(pgid: int) -> list[int]:
    """Processes still in process group ``pgid`` (zombies not counted: they hold nothing)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(d.name))
    return found


def orphans_after(pgid: int, within: float = 10.0) -> list[int]:
    """The processes of ``pgid`` still running ``within`` seconds from now (a worker that
    watches its parent needs a moment to notice); they are killed, and returned."""
    end = time.monotonic() + within
    left = group_processes(pgid)
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = group_processes(pgid)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every path under ``root``: its kind and size."""
    out = {}
    for p in root.rglob("*"):
        try:
            st = p.lstat()
        except FileNotFoundError:
            continue
        kind = "link" if p.is_symlink() else "dir" if p.is_dir() else "file" if p.is_file() else "special"
        out[str(p.relative_to(root))] = (kind, st.st_size if kind == "file" else 0)
    return out


def partial_outputs(root: Path, before: dict[str, tuple[str, int]], allowed: set[str] = frozenset()) -> list[str]:
    """What a failed or interrupted command left under ``root`` that was not there
    ``before``: new files or directories (but ``allowed`` ones), temporary files, empty
    files."""
    now = snapshot(root)
    bad = []
    for path, (kind, size) in now.items():
        name = Path(path).name
        if ".incastlab-" in name:
            bad.append(f"{path} (a temporary file)")
        elif path not in before and not any(path == a or path.startswith(a + "/") for a in allowed):
            bad.append(f"{path} (new {kind})")
        elif kind == "file" and size == 0 and before.get(path, ("", -1))[1] != 0:
            bad.append(f"{path} (empty)")
    return bad
