"""Differential testing against the ns-3 peer: the same Scenario in ns-3.44 and in ours.

    python -m incastlab.peers.ns3 --servers 4,8,16,32,64 --duration 20s --limited-transmit on,off

The peer (``../shared/peers/ns3``: ``incast.cc``, ``build.sh``, ``README.md``) is the
FAST'08 synchronized-read workload written for ns-3 without our code. This module

- finds or builds its binary (``ns3_binary``: a venv with the ``ns3`` wheel and the
  peer's ``build.sh``, cached in ``$INCASTLAB_NS3_DIR`` or ``~/.cache/incastlab/ns3``);
- maps a ``Scenario`` to its flags (``ns3_args``), refusing every field it cannot
  express; every Scenario field is classified below, and a test fails on a new one;
- runs a grid of points (servers x limited transmit) in both simulators, in parallel,
  and prints blocks, goodput, timeouts, drops (and dropped retransmissions, from both
  simulators' per-event traces, with ``--lost-retransmits``) side by side with the
  ratio incastlab / ns-3.

Some rules ns-3 hard-wires are knobs in our model (``HARD_WIRED``): our defaults follow
the RFCs and ns-2, so the default comparison is "our model" against "ns-3's rules";
``--ns3-rules`` (or ``--ours FIELD=VALUE``) runs ours with ns-3's rules instead.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .. import units
from ..errors import EnvironmentProblem, UsageError
from ..recording import Recording
from ..scenario import LINKS_PER_RTT, Scenario
from ..sim import SimResult, available_cores, simulate
from ..table import render
from . import tracediff

NS3_WHEEL = "ns3==3.44.post0"
BINARY_NAME = "ns3-incast"
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_PEER = REPO_ROOT.parent / "shared" / "peers" / "ns3"
PEER_FILES = ("incast.cc", "build.sh")
DEFAULT_SERVERS = "4,8,16,32,64"
DEFAULT_LIMITED_TRANSMIT = "on,off"
# "within 25 %": the bar for calling a point's block count an agreement.
AGREEMENT = 0.25


# --- the peer's binary --------------------------------------------------------------------


def cache_dir() -> Path:
    """Where the venv and the built binary live: ``$INCASTLAB_NS3_DIR`` or the user cache."""
    return Path(os.environ.get("INCASTLAB_NS3_DIR") or Path.home() / ".cache" / "incastlab" / "ns3")


def peer_dir(peer: str | os.PathLike | None = None) -> Path:
    """The peer's source directory: ``peer``, ``$INCASTLAB_NS3_PEER`` or the default."""
    where = Path(peer or os.environ.get("INCASTLAB_NS3_PEER") or DEFAULT_PEER)
    if not all((where / f).is_file() for f in PEER_FILES):
        raise EnvironmentProblem(f"no ns-3 peer (incast.cc, build.sh) in {where}; point at it with --peer DIR "
                                 f"or $INCASTLAB_NS3_PEER")
    return where


def ns3_binary(binary: str | os.PathLike | None = None, peer: str | os.PathLike | None = None,
               cache: Path | None = None) -> Path:
    """A built ``ns3-incast``: ``binary`` (or ``$INCASTLAB_NS3_BINARY``) as is, else the
    cached build, rebuilt when the peer's source is newer, else a new build (minutes)."""
    if binary:
        return _executable(Path(binary), "--ns3-binary")
    if os.environ.get("INCASTLAB_NS3_BINARY"):
        return _executable(Path(os.environ["INCASTLAB_NS3_BINARY"]), "$INCASTLAB_NS3_BINARY")
    cache = cache or cache_dir()
    target = cache / BINARY_NAME
    if _is_executable(target) and not _source_newer(peer, target):
        return target
    return build(peer_dir(peer), cache)


def _executable(path: Path, param: str) -> Path:
    if not _is_executable(path):
        raise UsageError(param, str(path), "an executable ns3-incast built by the peer's build.sh")
    return path.resolve()


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _source_newer(peer: str | os.PathLike | None, target: Path) -> bool:
    """The peer's incast.cc changed after the cached binary was built (a missing peer
    directory is no reason to give up a working binary)."""
    try:
        source = peer_dir(peer) / "incast.cc"
    except EnvironmentProblem:
        return False
    return source.stat().st_mtime > target.stat().st_mtime


def build(peer: Path, cache: Path) -> Path:
    """Install the ``ns3`` wheel in ``cache/venv`` if needed and compile the peer into
    ``cache/ns3-incast`` (README, "Build and run"); one build at a time per cache."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / BINARY_NAME
    with _locked(cache / ".build.lock"):
        if _is_executable(target) and not _source_newer(peer, target):
            return target  # another process built it while we waited
        venv = cache / "venv"
        if not _has_ns3(venv):
            _log(f"installing {NS3_WHEEL} into {venv} (first use: about 3 minutes)")
            _step([sys.executable, "-m", "venv", str(venv)], "creating the venv")
            _step([str(venv / "bin" / "pip"), "install", NS3_WHEEL], f"installing {NS3_WHEEL}")
        _log(f"building {target} from {peer} (about 10 s)")
        partial = cache / (BINARY_NAME + ".partial")
        _step(["bash", str(peer / "build.sh"), str(venv), str(partial)], "building the ns-3 peer")
        os.replace(partial, target)  # a half-written binary never looks built
    return target


def _has_ns3(venv: Path) -> bool:
    python = venv / "bin" / "python"
    if not python.exists():
        return False
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('ns3') is None)"
    return subprocess.run([str(python), "-c", probe], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def _step(cmd: list[str], what: str) -> None:
    """Run an install step with its output on our stderr (fd 2: the user's terminal)."""
    rc = subprocess.run(cmd, stdout=2, stderr=2).returncode
    if rc != 0:
        raise EnvironmentProblem(f"{what} failed (exit status {rc}): {shlex.join(cmd)}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _log(message: str) -> None:
    print(f"incastlab: {message}", file=sys.stderr, flush=True)


# --- Scenario -> ns-3 flags ---------------------------------------------------------------


def ns3_time(ps: int) -> str:
    """A duration as ns-3's Time attribute parses it, in the largest exact unit."""
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % scale == 0:
            return f"{ps // scale}{unit}"
    return f"{ps}ps"


def ns3_rate(bps: int) -> str:
    """A rate as ns-3's DataRate attribute parses it (bps, kbps, Mbps, Gbps), exactly."""
    for unit, scale in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def _decimal(ps: int, exponent: int) -> str:
    """``ps`` x 10^-exponent as an exact plain decimal (``20``, ``0.5``, ``2.000001``)."""
    return format(Decimal(ps).scaleb(-exponent).normalize(), "f")


def _on(v: bool) -> str:
    return "true" if v else "false"


def _tcp(s: Scenario) -> list[str]:
    if s.tcp == "reno":
        raise UsageError("tcp", s.tcp, "newreno or sack: ns-3 has no Reno whose fast recovery ends at the "
                         "first new ACK (its TcpClassicRecovery is NewReno's)")
    return ["--tcp=TcpNewReno", f"--sack={_on(s.tcp == 'sack')}"]


def _delayed_ack(s: Scenario) -> list[str]:
    # delAckCount=1 ACKs every segment, as ns-2's TCPSink (README, "Settings that match")
    if s.delayed_ack == 0:
        return ["--delAckCount=1"]
    return ["--delAckCount=2", f"--delAckTimeout={ns3_time(s.delayed_ack)}"]


def _seed(s: Scenario) -> list[str]:
    if s.seed == 0:
        raise UsageError("seed", 0, "1 or more: ns-3's random number generator refuses seed 0")
    return [f"--seed={s.seed}"]


# Fields the peer takes as flags, each to its flags; all passed explicitly, so the
# peer's own defaults (IW 10, delayed ACK 2, rcvBuf 128 KiB: README) never leak in.
MAPPED: dict[str, Callable[[Scenario], list[str]]] = {
    "servers": lambda s: [f"--servers={s.servers}"],
    "sru": lambda s: [f"--sru={s.sru}"],
    "buffer": lambda s: [f"--buffer={s.buffer}"],
    "rate": lambda s: [f"--rate={ns3_rate(s.rate)}"],
    # --delay is one way, per link; RTT crosses four links (README: 25us gives RTT 100 us)
    "rtt": lambda s: [f"--delay={ns3_time(s.rtt // LINKS_PER_RTT)}"],
    "rto_min": lambda s: [f"--rtoMin={ns3_time(s.rto_min)}"],
    "timer_granularity": lambda s: [f"--clockGranularity={ns3_time(s.timer_granularity)}"],
    "duration": lambda s: [f"--simTime={_decimal(s.duration, 12)}"] if s.duration is not None else [],
    "tcp": _tcp,
    # ns-3 defaults LimitedTransmit to on (README), so always say which
    "limited_transmit": lambda s: [f"--ns3::TcpSocketBase::LimitedTransmit={_on(s.limited_transmit)}"],
    "delayed_ack": _delayed_ack,
    "init_cwnd": lambda s: [f"--initCwnd={s.init_cwnd}"],
    "rwnd": lambda s: [f"--rcvBuf={s.rwnd}"],
    "mss": lambda s: [f"--mss={s.mss}"],
    "timestamps": lambda s: [f"--timestamps={_on(s.timestamps)}"],
    "jitter": lambda s: [f"--jitterUs={_decimal(s.jitter, 6)}"],
    "seed": _seed,
}

# Fields the peer cannot express, refused unless at Scenario's default: why not.
INEXPRESSIBLE: dict[str, str] = {
    "block": "fixed-block mode (it returns a fixed --sru per server)",
    "blocks": "a stop after a block count (it runs for --simTime)",
    "dupack_threshold": "another duplicate-ACK threshold (incast.cc sets ReTxThreshold 3 after parsing its flags)",
    "rto_max": "another RTO cap (ns-3 caps the backed-off RTO at 60 s: incast.cc, RtoChanged)",
    "rto_random": "a randomized RTO",
    "timer_ticks": "timers on a tick grid",
    "send_jitter": "per-packet host send jitter (only --jitterUs, a server think time)",
    "slow_start": "starting in congestion avoidance",
    "slow_start_after_idle": "a restart window after idle (ns-3 has none)",
    "buffer_packets": "a buffer in packets (its device queue is --buffer bytes)",
    "active_servers": "a random subset of active servers",
    "handshake": "a new connection per block (its connections are persistent)",
    "syn_timeout": "a SYN timeout for per-block handshakes (it has none)",
    "mitigation": "a connection-scheduling mitigation",
    "nccs_k": "NCCS's K (it has no mitigation)",
    "condition_i": "NCCS/OCS's condition-I (it has no mitigation)",
    "udp": "UDP background traffic",
    "udp_packet": "a UDP background datagram size (it has no UDP)",
}


def _ns3_header(s: Scenario) -> int:
    # IP 20 + TCP 20 + PPP 2 on its point-to-point links; timestamps add a 12-byte option
    return 42 + (12 if s.timestamps else 0)


# Rules ns-3 hard-wires that are knobs in our model: field -> (ns-3's value, what ns-3
# does). None: ns-3's rule has no counterpart in our model. Sources: the peer README,
# "Things ns-3 does that a comparison must account for" (admission, backoff, equal-time
# order); incast.cc's ParseData, which strips a PppHeader from packets at the bottleneck
# (header); Scenario.tcp_rules, which models TcpSocketBase's NewReno without SACK.
HARD_WIRED: dict[str, tuple[Callable[[Scenario], Any], str]] = {
    "header": (_ns3_header, "2 bytes of PPP framing on its point-to-point links"),
    "buffer_admission": (lambda s: "mtu_slots", "its device queue admits a packet while one more MTU fits"),
    "rto_backoff": (lambda s: "new_ack", "it recomputes the RTO from srtt/rttvar on every new ACK"),
    "tcp_rules": (lambda s: "ns3" if s.tcp == "newreno" else None, "ns-3.44's TcpSocketBase"),
    "tie_break": (lambda s: "fifo", "events at equal times run in the order they were scheduled"),
}


def classify_field(name: str) -> str | None:
    """How the ns-3 peer treats a Scenario field: mapped, hard-wired, inexpressible, or
    None for a field added to Scenario since (refused unless at its default)."""
    for kind, table in (("mapped", MAPPED), ("hard-wired", HARD_WIRED), ("inexpressible", INEXPRESSIBLE)):
        if name in table:
            return kind
    return None


def ns3_rules(s: Scenario) -> dict[str, Any]:
    """The Scenario fields that make our model follow ns-3's hard-wired rules."""
    return {f: value for f, (rule, _) in HARD_WIRED.items() if (value := rule(s)) is not None}


def ns3_args(s: Scenario) -> list[str]:
    """The peer's flags for ``s``; ``UsageError`` naming the first field it cannot express."""
    _refuse_inexpressible(s)
    _refuse_other_rules(s)
    return [flag for name, to_flags in MAPPED.items() for flag in to_flags(s)]


def _refuse_inexpressible(s: Scenario) -> None:
    shown = s.model_dump()
    for name, spec in Scenario.model_fields.items():
        if classify_field(name) in ("mapped", "hard-wired"):
            continue
        why = INEXPRESSIBLE.get(name, "a Scenario field newer than peers/ns3.py")
        if getattr(s, name) != spec.default:
            raise UsageError(name, shown[name], f"{_shown(spec.default)}: the ns-3 peer cannot express {why}")


def _refuse_other_rules(s: Scenario) -> None:
    # Left at our default, these describe our model alone; set explicitly for both
    # simulators, they must be what ns-3 does.
    for name, (rule, where) in HARD_WIRED.items():
        value = getattr(s, name)
        if name in s.model_fields_set and value != rule(s):
            wanted = "unset" if rule(s) is None else f"{rule(s)} or unset"
            raise UsageError(name, value, f"{wanted}: the ns-3 peer hard-wires this ({where}); "
                             f"set it for incastlab alone with --ours {name}=VALUE")


def _shown(default: Any) -> str:
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return "on" if default else "off"
    return f"{default} (the default)"


def ns3_warnings(s: Scenario) -> list[str]:
    """What the mapping keeps but ns-3 does differently."""
    notes = []
    if s.timestamps:
        notes.append("ns-3's timestamp clock ticks in ms (peer README), so its RTT samples are coarse")
    if s.jitter:
        notes.append("jitter: ns-3 draws think times from its own generator, in whole microseconds (incast.cc "
                     "passes a double to MicroSeconds), ours uniform to the picosecond; seeds compare as "
                     "distributions, not run by run")
    return notes


# --- running one point --------------------------------------------------------------------


def parse_result(text: str) -> dict[str, Any]:
    """The peer's ``--header=true`` output (a header line and one CSV line) as a dict,
    numbers as numbers."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    try:
        at = next(i for i, ln in enumerate(lines) if ln.startswith("N,"))
        names, values = lines[at].split(","), lines[at + 1].split(",")
    except (StopIteration, IndexError):
        raise EnvironmentProblem("ns-3 printed no result line (header N,... and one CSV line)") from None
    if len(names) != len(values):
        raise EnvironmentProblem(f"ns-3's result line has {len(values)} fields for {len(names)} names")
    return {k: _number(v) for k, v in zip(names, values)}


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def run_ns3(binary: Path, args: Sequence[str], trace: Path | None = None) -> dict[str, Any]:
    """Run the peer once; its result line as a dict."""
    cmd = [str(binary), *args, "--header=true"] + ([f"--trace={trace}"] if trace else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise EnvironmentProblem(f"ns-3 failed (exit status {proc.returncode}: {said}): {shlex.join(cmd)}")
    try:
        return parse_result(proc.stdout)
    except EnvironmentProblem as e:
        raise EnvironmentProblem(f"{e}: {shlex.join(cmd)}") from None


def run_ours(s: Scenario, events: Path | None = None) -> SimResult:
    """Simulate ``s`` in incastlab, writing its per-event trace to ``events`` if given."""
    return simulate(s, recording=Recording(events=str(events))) if events else simulate(s)


# --- the grid -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One grid point: what both simulators run, and what ours runs (with --ours)."""

    shared: Scenario
    ours: Scenario
    ns3_args: tuple[str, ...]
    #: One of several seeds of the same point (the seed goes into trace file names).
    seeded: bool = False

    @property
    def tag(self) -> str:
        tag = f"n{self.shared.servers}-lt-{'on' if self.shared.limited_transmit else 'off'}"
        return f"{tag}-seed{self.shared.seed}" if self.seeded else tag


# The compared numbers: key, table heading, ns-3 result column (None: from its trace).
# ns-3's timeouts are RTO doublings on any socket (incast.cc, RtoChanged); its drops are
# the bottleneck's, in the device queue and the traffic-control layer (incast.cc, TcDrop).
METRICS: list[tuple[str, str, str | None]] = [
    ("blocks", "blocks", "blocks_completed"),
    ("goodput_mbps", "Mbps", "goodput_mbps"),
    ("timeouts", "timeouts", "tcp_timeouts"),
    ("drops", "drops", "drops_at_bottleneck"),
    ("lost_retransmits", "lost rtx", None),
]


@dataclass(frozen=True)
class Comparison:
    """One point's numbers from both simulators (lost_retransmits only when traced)."""

    point: Point
    ours: dict[str, float]
    ns3: dict[str, float]
    ours_wall_s: float
    ns3_wall_s: float
    traces: tuple[Path, Path] | None = None  # (ns-3's, ours)

    def ratio(self, key: str) -> float | None:
        return ratio(self.ours.get(key), self.ns3.get(key))

    @property
    def blocks_agree(self) -> bool:
        return agrees(self.ours["blocks"], self.ns3["blocks"])


def ratio(ours: float | None, ns3: float | None) -> float | None:
    """incastlab / ns-3; None when ns-3's value is zero or a value is missing."""
    if ours is None or ns3 is None or ns3 == 0:
        return None
    return ours / ns3


def agrees(ours: float, ns3: float, within: float = AGREEMENT) -> bool:
    """Within ``within`` of ns-3's value (both zero agrees)."""
    return abs(ours - ns3) <= within * abs(ns3)


def parse_assignment(text: str, flag: str) -> tuple[str, str]:
    """``FIELD=VALUE`` (dashes in FIELD read as underscores) for ``--set``/``--ours``."""
    name, eq, value = text.partition("=")
    name = name.strip().lower().replace("-", "_")
    if not eq or name not in Scenario.model_fields:
        raise UsageError(flag, text, "FIELD=VALUE with FIELD one of the Scenario fields: "
                         + ", ".join(Scenario.model_fields))
    return name, value.strip()


# Grid axes have their own flags, for both sides; so has the shared run length.
_GRID_AXES = {"servers": "--servers", "limited_transmit": "--limited-transmit"}
_OWN_FLAGS = {"--set": {**_GRID_AXES, "duration": "--duration"}, "--ours": _GRID_AXES}


def build_grid(servers: Sequence[int], limited_transmit: Sequence[bool], shared: dict[str, Any],
               ours: dict[str, Any], with_ns3_rules: bool = False, seeds: int = 1) -> list[Point]:
    """Every (servers, limited transmit, seed) point, checked for both simulators before
    any runs. With ``seeds`` > 1 each point runs with seeds 1..seeds, which differ only if
    something is drawn at random: the servers' think time (``jitter``) is the one draw
    both simulators have, so it must be set."""
    if seeds > 1 and not Scenario(**shared, servers=1).jitter:
        raise UsageError("--seeds", seeds, "1, or several with --set jitter=TIME (a server think time: the only "
                         "random draw both simulators make, so without it every seed is the same run)")
    points = []
    for n in servers:
        for lt in limited_transmit:
            for seed in range(1, seeds + 1):
                fields = {**shared, "seed": seed} if seeds > 1 else shared
                both = Scenario(**fields, servers=n, limited_transmit=lt)
                args = tuple(ns3_args(both))
                extra = {**(ns3_rules(both) if with_ns3_rules else {}), **ours}
                ours_scn = Scenario(**_merged(fields, extra), servers=n, limited_transmit=lt)
                points.append(Point(both, ours_scn, args, seeded=seeds > 1))
    return points


def _merged(shared: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """``ours`` over ``shared``; a block count for ours replaces the shared duration
    (Scenario refuses both)."""
    merged = {**shared, **ours}
    if ours.get("blocks") is not None and "duration" not in ours:
        merged.pop("duration", None)
    return merged


def _ns3_numbers(row: dict[str, Any], lost: int | None) -> dict[str, float]:
    out = {key: row[column] for key, _, column in METRICS if column is not None}
    return out if lost is None else {**out, "lost_retransmits": lost}


def _our_numbers(r: SimResult, lost: int | None) -> dict[str, float]:
    out = {key: r[key] for key, _, column in METRICS if column is not None}
    return out if lost is None else {**out, "lost_retransmits": lost}


def _run_ns3_side(point: Point, binary: Path, trace: Path | None) -> tuple[dict[str, float], float]:
    row = run_ns3(binary, point.ns3_args, trace)
    lost = tracediff.lost_retransmits(trace) if trace else None
    return _ns3_numbers(row, lost), float(row["wall_seconds"])


def _run_our_side(point: Point, trace: Path | None) -> tuple[dict[str, float], float]:
    r = run_ours(point.ours, trace)
    lost = tracediff.lost_retransmits(trace) if trace else None
    return _our_numbers(r, lost), float(r.wall_seconds)


def run_grid(points: Sequence[Point], binary: Path, jobs: int, trace_dir: Path | None = None,
             progress: Callable[[int, int], None] | None = None) -> list[Comparison]:
    """Run every point in both simulators, ``jobs`` processes/threads at a time; results in
    grid order. Traces (and so dropped retransmissions) only with ``trace_dir``."""
    def traces(p: Point) -> tuple[Path, Path] | None:
        return (trace_dir / f"ns3-{p.tag}.csv", trace_dir / f"incastlab-{p.tag}.csv") if trace_dir else None

    # ns-3's largest points first: they take longest, so the pool ends evenly
    order = sorted(range(len(points)), key=lambda i: -points[i].shared.servers)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ns3-compare")
    try:
        theirs: dict[int, Future] = {}
        for i in order:
            t = traces(points[i])
            theirs[i] = pool.submit(_run_ns3_side, points[i], binary, t[0] if t else None)
        ours = {i: pool.submit(_run_our_side, p, t[1] if (t := traces(p)) else None) for i, p in enumerate(points)}
        for done, f in enumerate(as_completed([*theirs.values(), *ours.values()]), start=1):
            f.result()  # the first failure stops the grid
            if progress:
                progress(done, 2 * len(points))
        return [Comparison(p, *_pair(ours[i].result(), theirs[i].result()), traces(p)) for i, p in enumerate(points)]
    finally:
        # on a failure or Ctrl-C, drop the runs not started yet instead of waiting for them
        pool.shutdown(wait=True, cancel_futures=True)


def _pair(ours: tuple[dict[str, float], float], theirs: tuple[dict[str, float], float]) -> tuple:
    """(ours, ns3, ours_wall_s, ns3_wall_s) in Comparison's order."""
    return ours[0], theirs[0], ours[1], theirs[1]


# --- output ------------------------------------------------------------------------------


def _fmt(key: str, v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if key == "goodput_mbps" else f"{int(v)}"


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def _metrics_of(results: Sequence[Comparison]) -> list[tuple[str, str, str | None]]:
    traced = all("lost_retransmits" in c.ns3 for c in results)
    return [m for m in METRICS if m[0] != "lost_retransmits" or traced]


def render_table(results: Sequence[Comparison]) -> str:
    """One row per point: each metric for incastlab, ns-3 and incastlab/ns-3."""
    metrics = _metrics_of(results)
    heads = ["servers", "LT"]
    for _, heading, _ in metrics:
        heads += [heading, "ns-3", "ratio"]
    rows = []
    for c in results:
        row = [str(c.point.shared.servers), "on" if c.point.shared.limited_transmit else "off"]
        for key, _, _ in metrics:
            row += [_fmt(key, c.ours.get(key)), _fmt(key, c.ns3.get(key)), _fmt_ratio(c.ratio(key))]
        rows.append(row)
    return render(heads, rows)


def ours_only(points: Sequence[Point]) -> dict[str, Any]:
    """Fields where ours runs something else than the shared scenario (human units)."""
    if not points:
        return {}
    shared, own = points[0].shared.model_dump(), points[0].ours.model_dump()
    return {k: own[k] for k in own if own[k] != shared[k]}


def heading(points: Sequence[Point], binary: Path) -> list[str]:
    """The lines above the table: what ran, and how the two sides differ."""
    first = points[0].shared
    stop = f"{first.model_dump()['duration']} simulated per point"
    lines = [f"# incastlab vs ns-3 ({binary}): {first.label()}, {stop}",
             f"# ns-3 flags (first point): {' '.join(points[0].ns3_args)}"]
    extra = ours_only(points)
    if extra:
        lines.append("# incastlab only: " + ", ".join(f"{k}={v}" for k, v in extra.items()))
    own = points[0].ours
    apart = [f"{k}={_effective(own, k)} (ns-3: {v})" for k, v in ns3_rules(first).items() if _effective(own, k) != v]
    if apart:
        lines.append("# incastlab's rules where ns-3 hard-wires others: " + ", ".join(apart) + " (--ns3-rules to match)")
    else:
        lines.append("# incastlab follows the rules ns-3 hard-wires: "
                     + ", ".join(f"{k}={v}" for k, v in ns3_rules(first).items()))
    lines += [f"# note: {w}" for w in ns3_warnings(first)]
    lines.append("# each metric: incastlab, ns-3, incastlab/ns-3")
    return lines


def _effective(s: Scenario, name: str) -> Any:
    """A field's value as our model reads it (an unset buffer admission counts bytes)."""
    value = getattr(s, name)
    if name == "buffer_admission" and value is None:
        return "packets" if s.buffer_packets is not None else "bytes"
    return value


def agreement_line(results: Sequence[Comparison]) -> str:
    n = sum(c.blocks_agree for c in results)
    return f"blocks within ±{AGREEMENT:.0%} of ns-3: {n} of {len(results)} points"


def by_point(results: Sequence[Comparison]) -> dict[tuple[int, bool], list[Comparison]]:
    """The runs of each (servers, limited transmit) point, in grid order."""
    groups: dict[tuple[int, bool], list[Comparison]] = {}
    for c in results:
        groups.setdefault((c.point.shared.servers, c.point.shared.limited_transmit), []).append(c)
    return groups


def render_means(results: Sequence[Comparison]) -> tuple[str, str]:
    """Over the seeds of each point: each simulator's mean (min-max) of each metric and the
    ratio of the means; and the agreement line on mean blocks."""
    metrics = _metrics_of(results)
    heads = ["servers", "LT", "seeds"]
    for _, heading, _ in metrics:
        heads += [heading, "ns-3", "ratio"]
    rows, agree, groups = [], 0, by_point(results)
    for (n, lt), runs in groups.items():
        row = [str(n), "on" if lt else "off", str(len(runs))]
        for key, _, _ in metrics:
            ours = [c.ours[key] for c in runs]
            theirs = [c.ns3[key] for c in runs]
            row += [_spread(key, ours), _spread(key, theirs), _fmt_ratio(ratio(_mean(ours), _mean(theirs)))]
        agree += agrees(_mean([c.ours["blocks"] for c in runs]), _mean([c.ns3["blocks"] for c in runs]))
        rows.append(row)
    line = f"mean blocks within ±{AGREEMENT:.0%} of ns-3's mean: {agree} of {len(groups)} points"
    return render(heads, rows), line


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _spread(key: str, values: Sequence[float]) -> str:
    if len(values) == 1:
        return _fmt(key, values[0])
    return f"{_fmt(key, _mean(values))} ({_fmt(key, min(values))}-{_fmt(key, max(values))})"


def to_record(c: Comparison) -> dict[str, Any]:
    """One point as the JSON object ``--json`` prints."""
    rec: dict[str, Any] = {
        "servers": c.point.shared.servers,
        "limited_transmit": c.point.shared.limited_transmit,
        "incastlab": c.ours,
        "ns3": c.ns3,
        "ratio": {k: c.ratio(k) for k in c.ns3},
        "blocks_within_25pct": c.blocks_agree,
        "incastlab_wall_seconds": c.ours_wall_s,
        "ns3_wall_seconds": c.ns3_wall_s,
        "ns3_args": list(c.point.ns3_args),
        "incastlab_only": ours_only([c.point]),
    }
    if c.traces:
        rec["traces"] = {"ns3": str(c.traces[0]), "incastlab": str(c.traces[1])}
    return rec


def to_flat(c: Comparison) -> dict[str, Any]:
    """One point as a CSV row."""
    row: dict[str, Any] = {"servers": c.point.shared.servers, "limited_transmit": c.point.shared.limited_transmit}
    for key in c.ns3:
        row |= {f"{key}_incastlab": c.ours.get(key), f"{key}_ns3": c.ns3[key], f"{key}_ratio": c.ratio(key)}
    return row | {"incastlab_wall_seconds": c.ours_wall_s, "ns3_wall_seconds": c.ns3_wall_s}


# --- command line --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from ..cli import argtypes
    from ..cli.main import ArgumentParser  # one-line usage errors, exit status 2

    p = ArgumentParser(prog="python -m incastlab.peers.ns3",
                       description="Run a grid of points in incastlab and in the ns-3 peer "
                                   "(../shared/peers/ns3) and compare blocks, goodput, timeouts and drops. "
                                   "Scenario defaults: incastlab's (FAST'08: NewReno, 1 Gbps, RTT 100 us, "
                                   "SRU 256 KiB, 32 KiB buffer, RTOmin 200 ms, no delayed ACK, IW 2, rwnd 29200 B).")
    g = p.add_argument_group("grid")
    g.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=4096),
                   default=DEFAULT_SERVERS, metavar="N[,N...]", help=f"numbers of servers (default {DEFAULT_SERVERS})")
    g.add_argument("--limited-transmit", type=_on_off_list, default=DEFAULT_LIMITED_TRANSMIT, metavar="on,off",
                   help=f"RFC 3042 limited transmit values (default {DEFAULT_LIMITED_TRANSMIT})")
    g.add_argument("--duration", metavar="TIME", default=None,
                   help="simulated time per point (default 20s, FAST'08 §3.1)")
    g.add_argument("--set", dest="shared", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a Scenario field for both simulators (refused if ns-3 cannot express it); repeatable")
    g.add_argument("--ours", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a Scenario field for incastlab only, e.g. tcp_rules=ns3; repeatable")
    g.add_argument("--seeds", type=argtypes.positive_int("--seeds", minimum=1, maximum=1000), default=1,
                   metavar="K", help="run each point with seeds 1..K in both simulators and compare the means "
                                     "(needs --set jitter=TIME: the only random draw both make); default 1")
    g.add_argument("--ns3-rules", action="store_true",
                   help="run incastlab with the rules ns-3 hard-wires (" + ", ".join(HARD_WIRED) + "); "
                        "--ours wins over it")
    r = p.add_argument_group("running")
    r.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=256), default=None, metavar="J",
                   help="runs at once (default: the available cores)")
    r.add_argument("--ns3-binary", metavar="PATH", default=None,
                   help="a built ns3-incast, used as is (default: $INCASTLAB_NS3_BINARY, else built in "
                        "$INCASTLAB_NS3_DIR or ~/.cache/incastlab/ns3 on first use, ~3 minutes)")
    r.add_argument("--peer", metavar="DIR", default=None,
                   help="the ns-3 peer's sources (default: $INCASTLAB_NS3_PEER, else ../shared/peers/ns3 "
                        "from the repository)")
    r.add_argument("--lost-retransmits", action="store_true",
                   help="trace both simulators and count dropped retransmissions (slower in ns-3)")
    r.add_argument("--trace-dir", metavar="DIR", default=None,
                   help="keep both per-event traces there (ns3-n16-lt-on.csv, incastlab-n16-lt-on.csv; "
                        "compare with python -m incastlab.peers.tracediff); implies --lost-retransmits")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="one JSON object per point")
    o.add_argument("--csv", metavar="FILE", help="write one row per point as CSV")
    return p


def _on_off_list(text: str) -> list[bool]:
    values = {"on": True, "true": True, "off": False, "false": False}
    parts = [t.strip().lower() for t in text.split(",")]
    if not parts or any(t not in values for t in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected on, off or on,off")
    return [values[t] for t in parts]


def _assignments(texts: Sequence[str], flag: str) -> dict[str, str]:
    fields = dict(parse_assignment(t, flag) for t in texts)
    for name, own in _OWN_FLAGS[flag].items():
        if name in fields:
            raise UsageError(flag, f"{name}={fields[name]}", f"another field: {name} has its own flag, {own}")
    return fields


def _points_from_args(args: argparse.Namespace) -> list[Point]:
    shared = _assignments(args.shared, "--set")
    if args.duration is not None:
        shared["duration"] = args.duration
    return build_grid(args.servers, args.limited_transmit, shared, _assignments(args.ours, "--ours"),
                      with_ns3_rules=args.ns3_rules, seeds=args.seeds)


def _trace_dir(args: argparse.Namespace) -> Path | None:
    if args.trace_dir is None:
        return None
    d = Path(args.trace_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("--trace-dir", args.trace_dir, f"a directory we can create ({e.strerror})") from None
    if not os.access(d, os.W_OK):
        raise UsageError("--trace-dir", args.trace_dir, "a writable directory")
    return d


def _print_results(results: Sequence[Comparison], points: Sequence[Point], binary: Path, as_json: bool) -> None:
    if as_json:
        for c in results:
            print(json.dumps(to_record(c)))
        print(agreement_line(results), file=sys.stderr)
        return
    print("\n".join(heading(points, binary)))
    if len(by_point(results)) < len(results):
        table, line = render_means(results)
        print("# mean (min-max) over the seeds")
        print(table)
        print(line)
        return
    print(render_table(results))
    print(agreement_line(results))


def run(args: argparse.Namespace) -> int:
    from ..cli.progress import tty_progress
    from ..outfiles import check_writable, write_csv

    points = _points_from_args(args)  # every refusal before anything runs
    if args.csv:
        check_writable(args.csv, "--csv")
    trace_dir = _trace_dir(args)
    binary = ns3_binary(args.ns3_binary, args.peer)
    jobs = args.jobs or available_cores()
    progress = tty_progress("ns3-compare", 2 * len(points))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="incastlab-ns3-") as scratch:
        traced = trace_dir or (Path(scratch) if args.lost_retransmits else None)
        results = run_grid(points, binary, jobs, traced, progress)
        if trace_dir is None:  # the traces vanish with the scratch directory
            results = [Comparison(c.point, c.ours, c.ns3, c.ours_wall_s, c.ns3_wall_s) for c in results]
    _print_results(results, points, binary, args.json)
    if args.csv:
        import pandas as pd

        write_csv(pd.DataFrame([to_flat(c) for c in results]), args.csv)
    print(f"{len(points)} points in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (UsageError, EnvironmentProblem) as e:
        print(f"ns3-compare: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ns3-compare: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
