"""The ns-2 peer: incastlab's workload in ns-2.35, the simulator FAST'08 ran.

    python -m incastlab.peers.ns2 --servers 4,8,16 --duration 20s [--set FIELD=VALUE] [--json]

The peer (``peers/ns2/incast.tcl``, described in ``peers/ns2/README.md``) is the FAST'08
synchronized-read workload (``000_315d806dde942a9f.txt`` §3.1) written for ns-2 without
our code. This module

- finds ``ns`` (Debian package ``ns2``; installed with apt-get when missing and root);
- maps a ``Scenario`` to the script's options (``ns2_args``), refusing every field the
  script cannot express; every Scenario field is classified below, and a test fails on a
  new one;
- runs a grid of points in parallel (threads, one ``ns`` process each) and prints blocks,
  goodput, timeouts and drops per point.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import EnvironmentProblem, UsageError
from ..scenario import LINKS_PER_RTT, Scenario
from ..table import render

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_PEER = REPO_ROOT / "peers" / "ns2"
SCRIPT = "incast.tcl"
NS_PACKAGE = "ns2"
DEFAULT_SERVERS = "4,8,16,32,64"
# TcpAgent::rtt_init keeps int(rttvar_init_ / tcpTick_) << 2 in an int (incast.tcl)
MIN_TICK_PS = 100_000


# --- the simulator and the script -------------------------------------------------------


def ns_binary(ns: str | os.PathLike | None = None) -> Path:
    """``ns`` (or ``$INCASTLAB_NS2``) as given, else the one on PATH, else installed from
    the Debian package when we are root."""
    given = ns or os.environ.get("INCASTLAB_NS2")
    if given:
        path = Path(given)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UsageError("--ns", str(given), "an executable ns-2 'ns' (Debian package ns2)")
        return path.resolve()
    found = shutil.which("ns")
    if found:
        return Path(found)
    return _install()


def _install() -> Path:
    if os.geteuid() != 0:
        raise EnvironmentProblem(f"ns-2 is not installed: run 'sudo apt-get install -y {NS_PACKAGE}' "
                                 f"(or point at an ns binary with --ns or $INCASTLAB_NS2)")
    print(f"incastlab: installing {NS_PACKAGE} with apt-get (first use)", file=sys.stderr, flush=True)
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", NS_PACKAGE]):
        rc = subprocess.run(cmd, stdout=2, stderr=2, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}).returncode
        if rc != 0:
            raise EnvironmentProblem(f"{shlex.join(cmd)} failed (exit status {rc})")
    found = shutil.which("ns")
    if not found:
        raise EnvironmentProblem(f"apt-get installed {NS_PACKAGE} but no 'ns' is on PATH")
    return Path(found)


def script_path(peer: str | os.PathLike | None = None) -> Path:
    """The peer's ``incast.tcl``: in ``peer``, ``$INCASTLAB_NS2_PEER`` or ``peers/ns2``."""
    where = Path(peer or os.environ.get("INCASTLAB_NS2_PEER") or DEFAULT_PEER)
    if not (where / SCRIPT).is_file():
        raise EnvironmentProblem(f"no ns-2 peer ({SCRIPT}) in {where}; point at it with --peer DIR "
                                 f"or $INCASTLAB_NS2_PEER")
    return where / SCRIPT


# --- Scenario -> incast.tcl options ---------------------------------------------------------


def seconds(ps: int) -> str:
    """Picoseconds as an exact plain decimal of seconds (``0.2``, ``0.000025``, ``20``)."""
    return format(Decimal(ps).scaleb(-12).normalize(), "f")


def _flag(name: str, value: Any) -> list[str]:
    return [f"--{name}", str(value)]


def _on(v: bool) -> int:
    return 1 if v else 0


def qlim(s: Scenario) -> int:
    """ns-2's queue-limit for the switch ports: ``buffer_packets``, else as many whole
    packets of ``mss + header`` bytes as ``buffer`` holds (DropTail counts packets,
    the one on the wire included: queue/drop-tail.cc, DropTail::enque)."""
    return s.buffer_packets if s.buffer_packets is not None else s.buffer // (s.mss + s.header)


def _duration(s: Scenario) -> list[str]:
    if s.duration is None:  # only when blocks is set, which is refused first
        raise UsageError("duration", None, "a duration: the ns-2 peer runs for --simTime")
    return _flag("simTime", seconds(s.duration))


def _tick(s: Scenario) -> list[str]:
    if s.timer_granularity < MIN_TICK_PS:
        raise UsageError("timer_granularity", seconds(s.timer_granularity) + "s",
                         "100ns or more: ns-2 keeps rttvar_init_ / tcpTick_ in a 32-bit int (TcpAgent::rtt_init)")
    return _flag("tcpTick", seconds(s.timer_granularity))


def _seed(s: Scenario) -> list[str]:
    if s.seed == 0:
        raise UsageError("seed", 0, "1 or more: ns-2's RNG seeds itself from the clock on seed 0")
    return _flag("seed", s.seed)


# Fields the script takes as options, each to its options; all are passed explicitly, so
# the script's own defaults (ns-2's) never leak into a Scenario's run. ``block`` and
# ``buffer_packets`` are expressed through ``sru`` and ``buffer`` (their mappers read them).
MAPPED: dict[str, Callable[[Scenario], list[str]]] = {
    "servers": lambda s: _flag("servers", s.servers),
    # fixed-block mode is a fixed SRU of block // N per server (Scenario.block_part_bytes)
    "sru": lambda s: _flag("sru", s.block_part_bytes()),
    "block": lambda s: [],
    "buffer": lambda s: _flag("qlim", qlim(s)),
    "buffer_packets": lambda s: [],
    "rate": lambda s: _flag("rate", s.rate),
    # --delay is one way, per link; a round trip crosses four links
    "rtt": lambda s: _flag("delay", seconds(s.rtt // LINKS_PER_RTT)),
    "rto_min": lambda s: _flag("minrto", seconds(s.rto_min)),
    "rto_max": lambda s: _flag("maxrto", seconds(s.rto_max)),
    "timer_granularity": _tick,
    "dupack_threshold": lambda s: _flag("numdupacks", s.dupack_threshold),
    "limited_transmit": lambda s: _flag("singledup", _on(s.limited_transmit)),
    "slow_start_after_idle": lambda s: _flag("slowStartRestart", _on(s.slow_start_after_idle)),
    "init_cwnd": lambda s: _flag("windowInit", s.init_cwnd),
    # window_ counts packets (TcpAgent::window: min(cwnd_, wnd_))
    "rwnd": lambda s: _flag("window", s.rwnd // s.mss),
    "jitter": lambda s: _flag("thinkTime", seconds(s.jitter)),
    "send_jitter": lambda s: _flag("overhead", seconds(s.send_jitter)),
    "duration": _duration,
    "seed": _seed,
    "tcp": lambda s: _flag("tcp", s.tcp),
    "mss": lambda s: _flag("packetSize", s.mss),
    "header": lambda s: _flag("header", s.header),
}

# Rules ns-2 hard-wires that are knobs in our model: field -> (ns-2's value, where).
HARD_WIRED: dict[str, tuple[Any, str]] = {
    "buffer_admission": ("packets", "DropTail counts packets (queue/drop-tail.cc, DropTail::enque)"),
    "rto_backoff": ("sample", "the backoff ends at the ACK of a timed segment (tcp.cc, TcpAgent::newack)"),
    "tie_break": ("fifo", "its scheduler runs equal-time events in the order they were scheduled"),
    "tcp_rules": ("rfc", "its Agent/TCP variants are the RFCs' (incastlab's rfc rules follow them)"),
}

# Fields the script cannot express, refused unless at Scenario's default: why not.
INEXPRESSIBLE: dict[str, str] = {
    "blocks": "a stop after a block count (it runs for --simTime)",
    "delayed_ack": "a delayed-ACK receiver whose block-end ACK rides on the next request "
                   "(a one-way TCPSink/DelAck would hold it for its timer)",
    "timer_ticks": "timers on a tick grid (ns-2's timers fire at their deadline)",
    "timestamps": "incastlab's timestamps (ns-2's timestamps_ adds option bytes and keeps the backoff)",
    "rto_random": "a randomized RTO",
    "slow_start": "starting in congestion avoidance",
    "active_servers": "a random subset of active servers",
    "handshake": "a new connection per block (its one-way agents are persistent)",
    "syn_timeout": "a SYN timeout for per-block handshakes (it has none)",
    "mitigation": "a connection-scheduling mitigation",
    "nccs_k": "NCCS's K (it has no mitigation)",
    "condition_i": "NCCS/OCS's condition-I (it has no mitigation)",
    "udp": "UDP background traffic",
    "udp_packet": "a UDP background datagram size (it has no UDP)",
}


def classify_field(name: str) -> str | None:
    """How the ns-2 peer treats a Scenario field: mapped, hard-wired, inexpressible, or
    None for a field added to Scenario since (refused unless at its default)."""
    for kind, table in (("mapped", MAPPED), ("hard-wired", HARD_WIRED), ("inexpressible", INEXPRESSIBLE)):
        if name in table:
            return kind
    return None


def ns2_args(s: Scenario) -> list[str]:
    """The script's options for ``s``; ``UsageError`` naming the first field it cannot
    express."""
    _refuse_inexpressible(s)
    _refuse_other_rules(s)
    return [flag for to_flags in MAPPED.values() for flag in to_flags(s)]


def _refuse_inexpressible(s: Scenario) -> None:
    shown = s.model_dump()
    for name, spec in Scenario.model_fields.items():
        if classify_field(name) in ("mapped", "hard-wired"):
            continue
        why = INEXPRESSIBLE.get(name, "a Scenario field newer than peers/ns2.py")
        if getattr(s, name) != spec.default:
            raise UsageError(name, shown[name], f"{_shown(spec.default)}: the ns-2 peer cannot express {why}")


def _refuse_other_rules(s: Scenario) -> None:
    # an unset buffer admission means bytes in our model; ns-2 has only packets, which the
    # mapping to qlim already says, so only an explicit other value is refused
    for name, (value, where) in HARD_WIRED.items():
        if getattr(s, name) not in (value, None) and name in s.model_fields_set:
            raise UsageError(name, getattr(s, name), f"{value} or unset: ns-2 hard-wires this ({where})")


def _shown(default: Any) -> str:
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return "on" if default else "off"
    return f"{default} (the default)"


def ns2_warnings(s: Scenario) -> list[str]:
    """What the mapping keeps but ns-2 does differently."""
    notes = []
    if s.slow_start_after_idle and s.init_cwnd != 1:
        notes.append("slow_start_after_idle: ns-2 restarts from 1 packet, not init_cwnd "
                     "(TcpAgent::timeout, slowdown(CLOSE_CWND_ONE))")
    if s.send_jitter:
        notes.append("send_jitter: ns-2's overhead_ delays each burst send_much releases, not each packet "
                     "(TcpAgent::send_much), and draws from its own RNG")
    if s.jitter:
        notes.append("jitter: ns-2 draws think times from its own RNG; the same seed gives other draws")
    if s.buffer_packets is None and s.buffer % (s.mss + s.header):
        notes.append(f"buffer {s.model_dump()['buffer']} is {qlim(s)} packets of {s.mss + s.header} B in ns-2 "
                     f"(DropTail counts packets)")
    return notes


# --- running ----------------------------------------------------------------------------


def parse_result(stdout: str) -> dict[str, Any]:
    """The script's header line (``N,...``) and result line as a dict."""
    lines = stdout.strip().splitlines()
    try:
        at = next(i for i, ln in enumerate(lines) if ln.startswith("N,"))
        names, values = lines[at].split(","), lines[at + 1].split(",")
    except (StopIteration, IndexError):
        raise EnvironmentProblem("ns-2 printed no result line (header N,... and one CSV line)") from None
    if len(names) != len(values):
        raise EnvironmentProblem(f"ns-2's result line has {len(values)} fields for {len(names)} names")
    return {k: _number(v) for k, v in zip(names, values)}


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def run_ns2(ns: Path, script: Path, args: Sequence[str], trace: Path | None = None) -> dict[str, Any]:
    """Run the script once; its result line as a dict."""
    cmd = [str(ns), str(script), *args, "--csvHeader", "1"] + (["--trace", str(trace)] if trace else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    said = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    if proc.returncode != 0:
        raise EnvironmentProblem(f"ns-2 failed (exit status {proc.returncode}: {said}): {shlex.join(cmd)}")
    try:
        return parse_result(proc.stdout)
    except EnvironmentProblem as e:
        raise EnvironmentProblem(f"{e} ({said}): {shlex.join(cmd)}") from None


@dataclass(frozen=True)
class Point:
    """One grid point: the scenario, the grid values that name it, and extra script options."""

    scenario: Scenario
    varied: tuple[tuple[str, str], ...]
    extra: tuple[str, ...] = ()

    @property
    def args(self) -> list[str]:
        return ns2_args(self.scenario) + list(self.extra)  # the script lets a later option win

    @property
    def tag(self) -> str:
        parts = [f"n{self.scenario.servers}"] + [f"{k}-{v}" for k, v in self.varied]
        return "-".join(parts).replace("/", "_")


def build_grid(servers: Sequence[int], shared: dict[str, str], vary: dict[str, list[str]],
               extra: Sequence[str] = ()) -> list[Point]:
    """Every (servers, varied values...) point, each checked before any runs."""
    names = list(vary)
    points = []
    for n in servers:
        for values in itertools.product(*(vary[k] for k in names)):
            fields = {**shared, **dict(zip(names, values)), "servers": n}
            s = Scenario(**fields)
            ns2_args(s)
            points.append(Point(s, tuple(zip(names, values)), tuple(extra)))
    return points


def run_grid(points: Sequence[Point], ns: Path, script: Path, jobs: int, trace_dir: Path | None = None,
             progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Run every point, ``jobs`` ns processes at a time; results in grid order, each the
    script's result row plus ``process_seconds`` (the ns process's wall time)."""
    def one(p: Point) -> dict[str, Any]:
        start = time.monotonic()
        row = run_ns2(ns, script, p.args, trace_dir / f"ns2-{p.tag}.csv" if trace_dir else None)
        return {**row, "process_seconds": round(time.monotonic() - start, 3)}

    # the largest points first: they take longest, so the pool ends evenly
    order = sorted(range(len(points)), key=lambda i: -points[i].scenario.servers)
    results: dict[int, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ns2") as pool:
        futures = {pool.submit(one, points[i]): i for i in order}
        try:
            for done, f in enumerate(as_completed(futures), start=1):
                results[futures[f]] = f.result()  # the first failure stops the grid
                if progress:
                    progress(done, len(points))
        except BaseException:
            for f in futures:
                f.cancel()  # drop the runs not started yet instead of waiting for them
            raise
    return [results[i] for i in range(len(points))]


# --- output -----------------------------------------------------------------------------

# (heading, result column, format)
COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("qlim", "qlim", str),
    ("blocks", "blocks_completed", str),
    ("Mbps", "goodput_mbps", lambda v: f"{v:.1f}"),
    ("timeouts", "tcp_timeouts", str),
    ("drops", "drops_at_bottleneck", str),
    ("rtx pkts", "retransmits", str),
    ("idle RTOs", "idle_expiries", str),
    ("wall s", "wall_seconds", lambda v: f"{v:.2f}"),
]


def render_table(points: Sequence[Point], rows: Sequence[dict[str, Any]]) -> str:
    """One row per point: the grid values, then the script's numbers."""
    varied = [k for k, _ in points[0].varied] if points else []
    heads = ["servers", *varied, *(h for h, _, _ in COLUMNS)]
    body = [[str(p.scenario.servers), *(v for _, v in p.varied), *(fmt(r[key]) for _, key, fmt in COLUMNS)]
            for p, r in zip(points, rows)]
    return render(heads, body)


def heading(points: Sequence[Point], ns: Path, script: Path) -> list[str]:
    first = points[0]
    lines = [f"# ns-2 peer ({ns} {script}): {first.scenario.label()}, "
             f"{first.scenario.model_dump()['duration']} simulated per point",
             f"# options (first point): {' '.join(first.args)}"]
    lines += [f"# note: {w}" for w in ns2_warnings(first.scenario)]
    return lines


def to_record(p: Point, row: dict[str, Any]) -> dict[str, Any]:
    """One point as the JSON object ``--json`` prints."""
    return {"servers": p.scenario.servers, **dict(p.varied), "ns2_args": p.args, "ns2": row}


# --- command line -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from ..cli import argtypes
    from ..cli.main import ArgumentParser  # one-line usage errors, exit status 2

    p = ArgumentParser(prog="python -m incastlab.peers.ns2",
                       description="Run a grid of points in the ns-2 peer (peers/ns2/incast.tcl). Scenario "
                                   "defaults: incastlab's (FAST'08: NewReno, 1 Gbps, RTT 100 us, SRU 256 KiB, "
                                   "32 KiB buffer = 21 packets of 1500 B, RTOmin 200 ms, no delayed ACK, IW 2, "
                                   "window_ 20, limited transmit off).")
    g = p.add_argument_group("grid")
    g.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=4096),
                   default=DEFAULT_SERVERS, metavar="N[,N...]", help=f"numbers of servers (default {DEFAULT_SERVERS})")
    g.add_argument("--duration", metavar="TIME", default=None,
                   help="simulated time per point (default 20s, FAST'08 §3.1)")
    g.add_argument("--set", dest="shared", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a Scenario field (refused if ns-2 cannot express it); repeatable")
    g.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a grid axis over a Scenario field, e.g. limited_transmit=on,off or tcp=reno,newreno,sack; "
                        "repeatable (all combinations)")
    g.add_argument("--tcl", action="append", default=[], metavar="NAME=VALUE",
                   help="an incast.tcl option passed after the mapped ones (it wins), e.g. slowStartRestart=0 or "
                        "rtxcurInit=3.0; see peers/ns2/README.md; repeatable")
    r = p.add_argument_group("running")
    r.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=256), default=None, metavar="J",
                   help="ns processes at once (default: the available cores)")
    r.add_argument("--ns", metavar="PATH", default=None,
                   help="the ns binary (default: $INCASTLAB_NS2, else ns on PATH, else apt-get install ns2 as root)")
    r.add_argument("--peer", metavar="DIR", default=None,
                   help="the directory of incast.tcl (default: $INCASTLAB_NS2_PEER, else peers/ns2)")
    r.add_argument("--trace-dir", metavar="DIR", default=None,
                   help="write each point's per-event trace there (ns2-n16-....csv, the ns-3 peer's format)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="one JSON object per point")
    return p


def parse_assignment(text: str, flag: str) -> tuple[str, str]:
    """``FIELD=VALUE`` (dashes in FIELD read as underscores) naming a Scenario field."""
    name, eq, value = text.partition("=")
    name = name.strip().lower().replace("-", "_")
    if not eq or name not in Scenario.model_fields:
        raise UsageError(flag, text, "FIELD=VALUE with FIELD one of the Scenario fields: "
                         + ", ".join(Scenario.model_fields))
    if name == "servers":
        raise UsageError(flag, text, "another field: servers has its own flag, --servers")
    return name, value.strip()


def tcl_options(texts: Sequence[str]) -> list[str]:
    """``NAME=VALUE`` pairs as incast.tcl options (``--NAME VALUE``); the script checks them."""
    out = []
    for t in texts:
        name, eq, value = t.partition("=")
        if not eq or not name.strip().isalpha():
            raise UsageError("--tcl", t, "NAME=VALUE with NAME an incast.tcl option, e.g. slowStartRestart=0")
        out += [f"--{name.strip()}", value.strip()]
    return out


def _points_from_args(args: argparse.Namespace) -> list[Point]:
    shared = dict(parse_assignment(t, "--set") for t in args.shared)
    if args.duration is not None:
        shared["duration"] = args.duration
    vary = {}
    for t in args.vary:
        name, values = parse_assignment(t, "--vary")
        vary[name] = [v.strip() for v in values.split(",") if v.strip()]
        if not vary[name]:
            raise UsageError("--vary", t, "FIELD=V1[,V2...] with at least one value")
    return build_grid(args.servers, shared, vary, tcl_options(args.tcl))


def _trace_dir(text: str | None) -> Path | None:
    if text is None:
        return None
    d = Path(text)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("--trace-dir", text, f"a directory we can create ({e.strerror})") from None
    return d


def run(args: argparse.Namespace) -> int:
    from ..cli.progress import tty_progress
    from ..sim import available_cores

    points = _points_from_args(args)  # every refusal before anything runs
    trace_dir = _trace_dir(args.trace_dir)
    ns, script = ns_binary(args.ns), script_path(args.peer)
    start = time.monotonic()
    rows = run_grid(points, ns, script, args.jobs or available_cores(), trace_dir,
                    tty_progress("ns2", len(points)))
    if args.json:
        for p, row in zip(points, rows):
            print(json.dumps(to_record(p, row)))
        for w in ns2_warnings(points[0].scenario):
            print(f"ns2: note: {w}", file=sys.stderr)
    else:
        print("\n".join(heading(points, ns, script)))
        print(render_table(points, rows))
    print(f"{len(points)} points in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (UsageError, EnvironmentProblem) as e:
        print(f"ns2: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ns2: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
