"""Shared parts of the fuzz tests (tests/test_fuzz_*.py): the tally of inputs tried, the
value strategies, and the in-process CLI harness that never lets a fuzzed command do real
work for long, touch a network namespace or open a socket.

Issue 11's bar for bad input: one line naming the parameter and what is allowed, exit
status 2, no traceback, nothing half-written.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from hypothesis import settings
from hypothesis import strategies as st

# Examples per property in the "ci" profile, and how many times more the "long" one draws
# (tests/conftest.py). ``examples(weight)`` scales a property's share by the active profile.
CI_EXAMPLES = 100
LONG_FACTOR = 10


def examples(weight: float) -> int:
    """Examples for a property worth ``weight`` x the profile's default (CI: 100)."""
    return max(1, round(settings.default.max_examples * weight))


# --- the tally --------------------------------------------------------------------------

class Tally:
    """Inputs tried per area (units, scenario, cli) and how each ended."""

    # "known": a failure this suite keeps as a strict xfail case for the lead (scenario.py,
    # sim.py, scenario_args.py), let through the properties so they test the rest
    OUTCOMES = ("refused", "accepted", "stopped", "traceback", "hang", "known")

    def __init__(self):
        self.counts: Counter = Counter()
        self.slowest = (0.0, "")

    def add(self, area: str, outcome: str) -> None:
        assert outcome in self.OUTCOMES, outcome
        self.counts[area, outcome] += 1

    def timed(self, seconds: float, what: str) -> None:
        if seconds > self.slowest[0]:
            self.slowest = (seconds, what)

    def summary(self) -> str:
        if not self.counts:
            return ""
        total = sum(self.counts.values())
        by = {o: sum(n for (_, oo), n in self.counts.items() if oo == o) for o in self.OUTCOMES}
        areas = sorted({a for a, _ in self.counts})
        per_area = ", ".join(
            f"{a} {sum(n for (aa, _), n in self.counts.items() if aa == a)}"
            f" ({self.counts[a, 'refused']} refused)" for a in areas)
        line = (f"fuzz: {total} inputs tried ({per_area}); {by['refused']} refused as usage errors, "
                f"{by['accepted']} accepted, {by['stopped']} accepted and stopped before real work "
                f"(root, network or a long run), {by['traceback']} tracebacks, {by['hang']} hangs, {by['known']} known "
                f"failures kept as xfail cases")
        if self.slowest[1]:
            line += f"; slowest CLI input {self.slowest[0]:.2f} s: {self.slowest[1]}"
        return line


TALLY = Tally()


# --- values people might type -------------------------------------------------------------

SIZE_UNITS = ["", "B", "b", "byte", "bytes", "k", "K", "kB", "KB", "kb", "Ki", "KiB", "kib", "KIB", "M", "MB", "Mb",
              "MiB", "mib", "G", "GB", "GiB", "T", "TB", "TiB"]
RATE_UNITS = ["bps", "Bps", "b/s", "B/s", "bit", "bit/s", "bits/s", "kbps", "Kbps", "kBps", "Mbps", "MBps", "mbps",
              "Gbps", "GBps", "gbps", "Gb/s", "GB/s", "Gbit/s", "Gbit", "Tbps", "TBps", "GiBps", "Gbs", "G", "Gb", "Hz"]
TIME_UNITS = ["s", "S", "ms", "MS", "Ms", "us", "µs", "μs", "ns", "ps", "min", "Min", "m", "h", "H", "hr", "sec",
              "d", "fs"]
OTHER_UNITS = ["%", "x", "/", "e", "E", "inf", "nan"]
UNITS = SIZE_UNITS + RATE_UNITS + TIME_UNITS + OTHER_UNITS

SPECIAL_TEXT = ["", " ", "  \t", "-", "--", "-1", "0", "00", "-0", "+1", "1.", ".5", ".", "e", "1e", "1e-", "nan", "NaN",
                "inf", "-inf", "Infinity", "1e999", "-1e999", "1e-999", "0x10", "0b1", "1_000", "1,000", "1 000",
                "١٢", "²", "Ⅻ", "1\x00", "\x00", "None", "null", "true", "false", "True", "on", "off", "yes", "no",
                "1,2", ",", "1,", ",1", "1,,2", "1;2", "[1]", "{}", "'1'", '"1"', "1/2", "1:2", "a:1", ":", "::1:80",
                "9" * 30, "9" * 5000, "1" + "0" * 400, "0." + "0" * 400 + "1", "1e" + "9" * 12, "1e-" + "9" * 12,
                "1" * 200 + "e" + "9" * 20, "ß", "İ", "\u202e1", "1\n2", "1 ms", " 1ms ", "1 m s", "-5ms", "-0ms",
                "-1KiB", "-1Gbps", "+5ms"]

NUMBER_TEXT = st.one_of(
    st.integers(min_value=-(10**25), max_value=10**25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.from_regex(r"-?[0-9]{0,22}(\.[0-9]{0,12})?([eE][-+]?[0-9]{1,4})?", fullmatch=True),
)

QUANTITY_TEXT = st.builds(lambda n, sp, u: f"{n}{sp}{u}", NUMBER_TEXT, st.sampled_from(["", "", " "]),
                          st.sampled_from(UNITS))

INT_LIST_TEXT = st.lists(st.one_of(st.integers(-5, 2**21).map(str), st.sampled_from(["", " 3", "x", "1.5", "-0"])),
                         min_size=1, max_size=4).map(",".join)

# any text a terminal lets through (no NUL: argv cannot hold one)
ANY_TEXT = st.text(st.characters(exclude_characters="\x00"), max_size=30)

HOSTILE_TEXT = st.one_of(QUANTITY_TEXT, NUMBER_TEXT, st.sampled_from([s for s in SPECIAL_TEXT if "\x00" not in s]),
                         INT_LIST_TEXT, ANY_TEXT)


# --- the CLI harness ------------------------------------------------------------------------

class WouldRun(Exception):
    """Raised in place of real work (root, a socket, a long simulation) once the arguments
    have passed every check that comes before it."""


@dataclass
class Outcome:
    argv: list[str]
    code: int | str | None  # exit status, "stopped" (WouldRun) or "hang"
    stdout: str
    stderr: str
    seconds: float
    new_files: list[str] = field(default_factory=list)
    error: BaseException | None = None  # an exception that escaped main(): a traceback


class _RunState:
    stopped = False  # the cost guard stopped a simulation before it ran
    hung = False


STATE = _RunState()

# A fuzzed simulation runs for real when it is this small (a few ms of core time);
# anything larger is handed to the core only to be validated, then stopped.
CHEAP_SERVERS = 64
CHEAP_PACKETS = 20_000
CHEAP_BLOCKS = 1_000
CHEAP_DURATION_S = 0.05

# Every input must end within this (s) or it counts as a hang; real runs here take ms.
HANG_SECONDS = float(os.environ.get("INCASTLAB_FUZZ_HANG_S", "10"))


def _cheap(s) -> bool:
    if s.block is None and s.sru is None:
        return False  # Riak's gets (reply sizes, no SRU): validated and stopped, not sized here
    per_block = s.block if s.block is not None else s.servers * s.sru
    if s.servers > CHEAP_SERVERS:
        return False
    if s.blocks is not None:
        # blocks mode has no bound on simulated time, so no UDP background (it would
        # fill all of it)
        payload, udp_packets = per_block * s.blocks, 0 if s.udp == 0 else float("inf")
        if s.blocks > CHEAP_BLOCKS:
            return False
    else:
        if s.duration > CHEAP_DURATION_S:
            return False
        payload = s.rate * s.duration / 8
        udp_packets = s.udp * payload / s.udp_packet
    return payload / s.mss <= CHEAP_PACKETS and udp_packets <= CHEAP_PACKETS


def _guarded_point(real):
    """The engine's one point (``study.worker.simulate_point``), run for real when small;
    the core checks the others (parse and validate: a refusal still surfaces) before they
    are stopped at once."""
    import types

    from incastlab import _native
    from incastlab.schema import FIELDS

    def simulate_point(text, local=None):
        native = json.loads(text)
        scn = types.SimpleNamespace(**{f.public: f.to_public(native.get(f.name)) for f in FIELDS})
        if _cheap(scn):
            return real(text, local)
        STATE.stopped = True
        # the core validates before it builds the world; fewer servers keep the world small
        n = min(scn.servers, CHEAP_SERVERS)
        active = None if scn.active_servers is None else min(scn.active_servers, n)
        probe = {**native, "servers": n, "active_servers": active}
        _native.cancel()  # stops the probe within its first 4096 events
        try:
            real(json.dumps(probe))
        except KeyboardInterrupt:
            pass
        finally:
            _native.clear_cancel()
        raise WouldRun(f"simulation of {native}")

    return simulate_point


def _would_run(what: str):
    def stub(*args, **kwargs):
        raise WouldRun(what)
    return stub


class _Lock:
    def close(self):
        pass


@contextlib.contextmanager
def no_real_work():
    """Patch every place a command would reach beyond this process or run long: the
    testbed's shell (ip, tc, ethtool), its lock files, the wire client and server, the
    monitor's sampler, re-exec into a namespace, bench's child processes, reproductions'
    simulations; small simulations still run (``_guarded_simulate``)."""
    from incastlab import _native
    import incastlab.cli.bench  # noqa: F401 - patched below
    import incastlab.cli.testbed  # noqa: F401
    import incastlab.experiments.run  # noqa: F401
    import incastlab.monitor.runner  # noqa: F401
    import incastlab.study.executors as executors
    import incastlab.study.worker as worker
    import incastlab.testbed.shell  # noqa: F401
    import incastlab.testbed.topology  # noqa: F401

    patches = [
        mock.patch.object(worker, "simulate_point", _guarded_point(worker.simulate_point)),
        # one worker thread, whatever was asked (processes, Dask): the guard above sees every
        # point, and no race between points
        mock.patch.object(executors, "make_executor", lambda *a, **kw: executors._ThreadExecutor(1)),
        mock.patch("incastlab.testbed.shell.run", _would_run("a testbed shell command")),
        # as if root with ip, tc and ethtool: every refusal then comes from the arguments
        mock.patch("incastlab.testbed.shell.require_root", lambda: None),
        mock.patch("incastlab.testbed.topology.Topology.load", _would_run("loading the testbed that is up")),
        mock.patch("incastlab.cli.testbed._lock", lambda prefix: _Lock()),
        mock.patch.object(_native, "wire_read", _would_run("wire_read"), create=True),
        mock.patch.object(_native, "WireServer", _would_run("WireServer"), create=True),
        mock.patch("incastlab.monitor.runner.Monitor", _would_run("the monitor")),
        mock.patch("os.execve", _would_run("re-exec in a namespace")),
        mock.patch("incastlab.cli.bench.run_point", _would_run("a bench point")),
        mock.patch("incastlab.experiments.run.simulate", _would_run("a reproduction")),
    ]
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        yield


class _Hang(BaseException):
    pass


@contextlib.contextmanager
def _hang_alarm(seconds: float):
    """Stop an input that runs past ``seconds``: the alarm interrupts Python code, the
    timer asks the core to stop a simulation (which holds no GIL and no signal)."""
    from incastlab import _native

    def on_alarm(signum, frame):
        STATE.hung = True
        raise _Hang()

    def stop_core():
        STATE.hung = True
        _native.cancel()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    timer = threading.Timer(seconds, stop_core)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def run_cli(argv: list[str], workdir: Path, patches=()) -> Outcome:
    """``incastlab ARGV`` in this process, in ``workdir``, under ``no_real_work`` and then
    ``patches`` (context managers)."""
    from incastlab import _native
    from incastlab.cli.main import main

    STATE.stopped = STATE.hung = False
    before = files_under(workdir)
    out, err = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    old_term = signal.getsignal(signal.SIGTERM)
    code: int | str | None
    error = None
    start = time.monotonic()
    try:
        os.chdir(workdir)
        with no_real_work(), contextlib.ExitStack() as extra, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), _hang_alarm(HANG_SECONDS):
            for p in patches:
                extra.enter_context(p)
            try:
                code = main(list(argv))
            except SystemExit as e:
                code = 0 if e.code is None else e.code
            except WouldRun:
                code = "stopped"
            except _Hang:
                code = "hang"
            except Exception as e:  # noqa: BLE001 - the very thing these tests look for
                code, error = "traceback", e
    finally:
        os.chdir(old_cwd)
        signal.signal(signal.SIGTERM, old_term)
        _native.clear_cancel()
    seconds = time.monotonic() - start
    if STATE.hung:
        code = "hang"
    elif code == 130 and STATE.stopped:
        code = "stopped"  # another point saw the probe's stop before the probe did
    new = sorted(files_under(workdir) - before)
    return Outcome(list(argv), code, out.getvalue(), err.getvalue(), seconds, new, error)


def clean(workdir: Path, keep: set[str]) -> None:
    """Remove what a run left in ``workdir`` except the files in ``keep``."""
    for p in sorted(workdir.iterdir()):
        if p.name in keep:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
