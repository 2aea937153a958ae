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
  ratio incastlab / ns-3 (``peers.compare``, shared with the ns-2 harness).

Some rules ns-3 hard-wires are knobs in our model (``HARD_WIRED``): our defaults follow
the RFCs, so the default comparison is "our model" against "ns-3's rules";
``--ns3-rules`` (or ``--ours FIELD=VALUE``) runs ours with ns-3's rules instead.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import subprocess
import sys
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import EnvironmentProblem, UsageError
from ..scenario import Scenario
from ..units import exact_duration
from . import compare
from .compare import (  # noqa: F401  the grid and its output, re-exported under their old names
    AGREEMENT, LOST_RETRANSMITS, METRICS, Axis, Comparison, Peer, Point, agreement_line, agrees, by_point,
    heading, ours_only, ratio, render_means, render_table, run_ours, to_flat, to_record,
)
from .fields import ONE_SYNC_READ_CLIENT_LACKS, STAR_OF_FIFOS_LACKS, FieldMap, Rule, ToArgs

NS3_WHEEL = "ns3==3.44.post0"
BINARY_NAME = "ns3-incast"
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_PEER = REPO_ROOT.parent / "shared" / "peers" / "ns3"
PEER_FILES = ("incast.cc", "build.sh")
DEFAULT_LIMITED_TRANSMIT = "on,off"


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


# A duration as ns-3's Time attribute parses it: the largest exact unit, as ours.
ns3_time = exact_duration


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
    return ["--delAckCount=2", f"--delAckTimeout={ns3_time(s.ps('delayed_ack'))}"]


def _seed(s: Scenario) -> list[str]:
    if s.seed == 0:
        raise UsageError("seed", 0, "1 or more: ns-3's random number generator refuses seed 0")
    return [f"--seed={s.seed}"]


# Fields the peer takes as flags, each to its flags; all passed explicitly, so the
# peer's own defaults (IW 10, delayed ACK 2, rcvBuf 128 KiB: README) never leak in.
MAPPED: dict[str, ToArgs] = {
    # a preset names where the fields not given came from; the peer gets those fields
    "preset": lambda s: [],
    # a measurement of our run only (it changes no result): nothing to tell the peer
    "time_breakdown": lambda s: [],
    "servers": lambda s: [f"--servers={s.servers}"],
    "sru": lambda s: [f"--sru={s.sru}"],
    "buffer": lambda s: [f"--buffer={s.buffer}"],
    "rate": lambda s: [f"--rate={ns3_rate(s.rate)}"],
    # --delay is one way, per link; RTT crosses four links (README: 25us gives RTT 100 us)
    "rtt": lambda s: [f"--delay={ns3_time(s.derived()['link_delay_ps'])}"],
    "rto_min": lambda s: [f"--rtoMin={ns3_time(s.ps('rto_min'))}"],
    "timer_granularity": lambda s: [f"--clockGranularity={ns3_time(s.ps('timer_granularity'))}"],
    "duration": lambda s: [f"--simTime={_decimal(s.ps('duration'), 12)}"] if s.duration is not None else [],
    "tcp": _tcp,
    # ns-3 defaults LimitedTransmit to on (README), so always say which
    "limited_transmit": lambda s: [f"--ns3::TcpSocketBase::LimitedTransmit={_on(s.limited_transmit)}"],
    "delayed_ack": _delayed_ack,
    "init_cwnd": lambda s: [f"--initCwnd={s.init_cwnd}"],
    "rwnd": lambda s: [f"--rcvBuf={s.rwnd}"],
    "mss": lambda s: [f"--mss={s.mss}"],
    "timestamps": lambda s: [f"--timestamps={_on(s.timestamps)}"],
    "jitter": lambda s: [f"--jitterUs={_decimal(s.ps('jitter'), 6)}"],
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
    "cc": "DCTCP or CUBIC congestion control (the script runs TcpNewReno; ns-3's TcpDctcp and TcpCubic are "
          "not wired in)",
    "ecn_threshold": "ECN marking (its queues drop, they never mark CE: no RedQueueDisc, no ECN)",
    "prr": "PRR (the script could select TcpPrrRecovery with recovery=; not wired in or compared yet)",
    "rack_tlp": "RACK-TLP (ns-3.44's TCP has no RACK or tail-loss probes)",
    "hystart": "Linux's HyStart (the script runs TcpNewReno; ns-3's TcpCubic is not wired in)",
    "ssthresh_from_cwnd": "Linux's tcp_reno_ssthresh (the script runs TcpNewReno; ns-3's TcpLinuxReno is not wired in)",
    "count_acked_segments": "Linux's tcp_cong_avoid_ai (ns-3's TcpLinuxReno has it; the script runs TcpNewReno)",
    "cwnd_limited_growth": "Linux's tcp_is_cwnd_limited (the script runs TcpNewReno, which grows on every new ACK)",
    "prr_extra_if_advanced": "Linux's condition on PRR's extra segment (the script runs no PRR)",
    "prr_counts_fast_retransmit": "Linux's fast retransmit within PRR's allowance (the script runs no PRR)",
    "grow_on_recovery_exit": "Linux's growth on the ACK that ends recovery (TcpClassicRecovery sets cwnd = ssthresh)",
    "think_times": "measured think times drawn from a list (the script's --jitterUs is uniform: jitter)",
    "ack_short_segments": "Linux's immediate ACK of a short segment (its TcpSocketBase delays it as any other)",
    "rcv_window_growth": "Linux's quick ACK per receive-window step (ns-3.44's TcpSocketBase has a fixed window and ACKs pairs)",
    "rcv_autotuning": "Linux's receive-buffer autotuning (ns-3.44's TcpSocketBase has a fixed window)",
    "rcv_rtt_from_window": "Linux 6.16's receiver RTT for autotuning (ns-3.44's TcpSocketBase has a fixed window)",
    "tso_deferral": "Linux's TSO deferral of a small send allowance (ns-3.44's TcpSocketBase sends what the window allows)",
    "rack_rtt_sack_first": "Linux's order of RACK's RTT updates (ns-3.44's TCP has no RACK)",
    "sacked_leave_flight": "Linux's in-flight count outside recovery (ns-3.44 sends by limited transmit before recovery)",
    "cwnd_limited_latch": "Linux's per-window is_cwnd_limited record (the script runs TcpNewReno, which grows on every new ACK)",
    "gso_half_cwnd": "Linux's half-cwnd GSO skbs (ns-3.44's TcpSocketBase sends what the window allows)",
    "cubic_linux": "Linux's tcp_cubic.c arithmetic (the script runs TcpNewReno; ns-3's TcpCubic is not wired in)",
    "ack_pingpong": "Linux's ping-pong mode (ns-3.44's TcpSocketBase has none)",
    "rcv_scaling_ratio": "Linux's skb len/truesize ratio (ns-3.44's TcpSocketBase has no receive buffer accounting)",
    "rack_timer_floor": "Linux's 2 ms on the probe and RACK timers (ns-3.44's TCP has no RACK or probes)",
    "recovery_from_loss": "Linux's fast recovery from the Loss state on RACK's marks (ns-3.44's TCP has no RACK)",
    "loss_retransmit_queue": "Linux's Loss state: SACKs kept, lost segments resent as SACKs come (not ns-3.44's timeout rule)",
    "frto": "F-RTO after a timeout (ns-3.44's TCP has none)",
    "quickack_mode": "Linux's quick-ACK mode at the first data, after a gap and for old data (ns-3.44's TcpSocketBase has none)",
    "receiver_rto_min": "the receiving socket's RTOmin for Linux's quick-ACK gap (ns-3.44's TcpSocketBase has no such rule)",
    "rearm_rto_from_head": "Linux's RTO from the oldest segment's send while a probe is pending (ns-3.44's TCP has no probes)",
    "rto_min_on_rttvar": "Linux's RTO = srtt + rttvar with RTOmin on rttvar (ns-3.44's RttMeanDeviation is RFC 6298's)",
    "timer_wheel": "Linux's timer-wheel rounding (ns-3.44's timers fire at their exact times)",
    **STAR_OF_FIFOS_LACKS,
    **ONE_SYNC_READ_CLIENT_LACKS,
}


def _ns3_header(s: Scenario) -> int:
    # IP 20 + TCP 20 + PPP 2 on its point-to-point links; timestamps add a 12-byte option
    return 42 + (12 if s.timestamps else 0)


# Rules ns-3 hard-wires that are knobs in our model: field -> (ns-3's value, what ns-3
# does). None: ns-3's rule has no counterpart in our model. Sources: the peer README,
# "Things ns-3 does that a comparison must account for" (admission, backoff, equal-time
# order); incast.cc's ParseData, which strips a PppHeader from packets at the bottleneck
# (header); Scenario.tcp_rules, which models TcpSocketBase's NewReno without SACK.
HARD_WIRED: dict[str, Rule] = {
    "header": (_ns3_header, "2 bytes of PPP framing on its point-to-point links"),
    "buffer_admission": (lambda s: "mtu_slots", "its device queue admits a packet while one more MTU fits"),
    "rto_backoff": (lambda s: "new_ack", "it recomputes the RTO from srtt/rttvar on every new ACK"),
    "tcp_rules": (lambda s: "ns3" if s.tcp == "newreno" else None, "ns-3.44's TcpSocketBase"),
    "tie_break": (lambda s: "fifo", "events at equal times run in the order they were scheduled"),
}


FIELDS = FieldMap("ns-3", "peers/ns3.py", MAPPED, HARD_WIRED, INEXPRESSIBLE)


def classify_field(name: str) -> str | None:
    """How the ns-3 peer treats a Scenario field: mapped, hard-wired, inexpressible, or
    None for a field added to Scenario since (refused unless at its default)."""
    return FIELDS.classify(name)


def ns3_rules(s: Scenario) -> dict[str, Any]:
    """The Scenario fields that make our model follow ns-3's hard-wired rules."""
    return FIELDS.rules(s)


def ns3_args(s: Scenario) -> list[str]:
    """The peer's flags for ``s``; ``UsageError`` naming the first field it cannot express."""
    return FIELDS.args(s)


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


# ns-3's timeouts are RTO doublings on any socket (incast.cc, RtoChanged); its drops are
# the bottleneck's, in the device queue and the traffic-control layer (incast.cc, TcDrop).
PEER = Peer(name="ns-3", key="ns3", arg_word="flags", metrics=(*METRICS, LOST_RETRANSMITS), fields=FIELDS,
            args=ns3_args, warnings=ns3_warnings)


# --- running one point --------------------------------------------------------------------


def parse_result(text: str) -> dict[str, Any]:
    """The peer's ``--header=true`` output (a header line and one CSV line) as a dict,
    numbers as numbers."""
    return compare.parse_result(text, PEER.name)


def run_ns3(binary: Path, args: Sequence[str], trace: Path | None = None) -> dict[str, Any]:
    """Run the peer once; its result line as a dict."""
    return compare.run_process([str(binary), *args, "--header=true"] + ([f"--trace={trace}"] if trace else []),
                               PEER.name)


# --- the grid -------------------------------------------------------------------------------


def lt_axis(limited_transmit: Sequence[bool]) -> Axis:
    """The limited-transmit axis, headed LT (tags ``lt-on``)."""
    return Axis("limited_transmit", "LT", tuple(("on" if v else "off", v) for v in limited_transmit))


def build_grid(servers: Sequence[int], limited_transmit: Sequence[bool], shared: dict[str, Any],
               ours: dict[str, Any], with_ns3_rules: bool = False, seeds: int = 1) -> list[Point]:
    """Every (servers, limited transmit, seed) point, checked for both simulators before
    any runs (``compare.build_grid``)."""
    return compare.build_grid(PEER, servers, [lt_axis(limited_transmit)], shared, ours,
                              with_rules=with_ns3_rules, seeds=seeds)


# --- command line --------------------------------------------------------------------------

DESCRIPTION = ("Run a grid of points in incastlab and in the ns-3 peer (../shared/peers/ns3) and compare blocks, "
               "goodput, timeouts and drops. Scenario defaults: incastlab's (FAST'08: NewReno, 1 Gbps, RTT 100 us, "
               "SRU 256 KiB, 32 KiB buffer, RTOmin 200 ms, no delayed ACK, IW 2, rwnd 29200 B).")


def _add_axes(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--limited-transmit", type=_on_off_list, default=DEFAULT_LIMITED_TRANSMIT, metavar="on,off",
                   help=f"RFC 3042 limited transmit values (default {DEFAULT_LIMITED_TRANSMIT})")


def _add_locations(r: argparse._ArgumentGroup) -> None:
    r.add_argument("--ns3-binary", metavar="PATH", default=None,
                   help="a built ns3-incast, used as is (default: $INCASTLAB_NS3_BINARY, else built in "
                        "$INCASTLAB_NS3_DIR or ~/.cache/incastlab/ns3 on first use, ~3 minutes)")
    r.add_argument("--peer", metavar="DIR", default=None,
                   help="the ns-3 peer's sources (default: $INCASTLAB_NS3_PEER, else ../shared/peers/ns3 "
                        "from the repository)")


def build_parser() -> argparse.ArgumentParser:
    return compare.build_parser(PEER, DESCRIPTION, _add_axes, _add_locations, example_tag="n16-lt-on")


def _on_off_list(text: str) -> list[bool]:
    values = {"on": True, "true": True, "off": False, "false": False}
    parts = [t.strip().lower() for t in text.split(",")]
    if not parts or any(t not in values for t in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected on, off or on,off")
    return [values[t] for t in parts]


# Grid axes have their own flags, for both sides; so has the shared run length.
_GRID_AXES = {"servers": "--servers", "limited_transmit": "--limited-transmit"}


def _points_from_args(args: argparse.Namespace) -> list[Point]:
    shared = compare.assignments(args.shared, "--set", {**_GRID_AXES, "duration": "--duration"})
    if args.duration is not None:
        shared["duration"] = args.duration
    return build_grid(args.servers, args.limited_transmit, shared, compare.assignments(args.ours, "--ours", _GRID_AXES),
                      with_ns3_rules=args.with_rules, seeds=args.seeds)


def run(args: argparse.Namespace) -> int:
    points = _points_from_args(args)  # every refusal before anything runs

    def locate() -> tuple[compare.RunPeer, str]:
        binary = ns3_binary(args.ns3_binary, args.peer)
        return (lambda p, trace: run_ns3(binary, p.peer_args, trace)), str(binary)

    return compare.run(args, points, locate)


def main(argv: list[str] | None = None) -> int:
    return compare.main(PEER.prog, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
