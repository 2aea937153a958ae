"""Differential testing against the ns-2 peer: the same Scenario in ns-2.35, the
simulator FAST'08 ran, and in ours.

    python -m incastlab.peers.ns2 --servers 4,8,16 --duration 20s --vary limited_transmit=on,off --ns2-rules

The peer (``peers/ns2/incast.tcl``, described in ``peers/ns2/README.md``) is the FAST'08
synchronized-read workload (``000_315d806dde942a9f.txt`` §3.1) written for ns-2 without
our code. This module

- finds ``ns`` (Debian package ``ns2``; installed with apt-get when missing and root);
- maps a ``Scenario`` to the script's options (``ns2_args``), refusing every field the
  script cannot express; every Scenario field is classified below, and a test fails on a
  new one;
- runs a grid of points (servers x ``--vary`` axes x seeds) in both simulators, in
  parallel, and prints blocks, goodput, timeouts, drops and ns-2's idle RTO expiries
  (and dropped retransmissions, from both traces, with ``--lost-retransmits``) side by
  side with the ratio incastlab / ns-2 (``peers.compare``, shared with the ns-3 harness).

Some rules ns-2 hard-wires are knobs in our model (``HARD_WIRED``): our defaults follow
the RFCs, so the default comparison is "our model" against "ns-2's rules";
``--ns2-rules`` (or ``--ours FIELD=VALUE``) runs ours with ns-2's rules instead.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Sequence

from ..errors import EnvironmentProblem, UsageError
from ..scenario import Scenario
from . import compare
from .compare import LOST_RETRANSMITS, METRICS, Axis, Metric, Peer, Point
from .fields import ONE_SYNC_READ_CLIENT_LACKS, STAR_OF_FIFOS_LACKS, FieldMap, Rule, ToArgs

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_PEER = REPO_ROOT / "peers" / "ns2"
SCRIPT = "incast.tcl"
NS_PACKAGE = "ns2"
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
    return _flag("simTime", seconds(s.ps('duration')))


def _tick(s: Scenario) -> list[str]:
    if s.ps('timer_granularity') < MIN_TICK_PS:
        raise UsageError("timer_granularity", seconds(s.ps('timer_granularity')) + "s",
                         "100ns or more: ns-2 keeps rttvar_init_ / tcpTick_ in a 32-bit int (TcpAgent::rtt_init)")
    return _flag("tcpTick", seconds(s.ps('timer_granularity')))


def _seed(s: Scenario) -> list[str]:
    if s.seed == 0:
        raise UsageError("seed", 0, "1 or more: ns-2's RNG seeds itself from the clock on seed 0")
    return _flag("seed", s.seed)


# Fields the script takes as options, each to its options; all are passed explicitly, so
# the script's own defaults (ns-2's) never leak into a Scenario's run. ``block`` and
# ``buffer_packets`` are expressed through ``sru`` and ``buffer`` (their mappers read them).
MAPPED: dict[str, ToArgs] = {
    # a measurement of our run only (it changes no result): nothing to tell the peer
    "time_breakdown": lambda s: [],
    "servers": lambda s: _flag("servers", s.servers),
    # fixed-block mode is a fixed SRU of block // N per server (Scenario.block_part_bytes)
    "sru": lambda s: _flag("sru", s.block_part_bytes()),
    "block": lambda s: [],
    # a preset names where the fields not given came from; the script gets those fields
    "preset": lambda s: [],
    "buffer": lambda s: _flag("qlim", qlim(s)),
    "buffer_packets": lambda s: [],
    "rate": lambda s: _flag("rate", s.rate),
    # --delay is one way, per link; a round trip crosses four links
    "rtt": lambda s: _flag("delay", seconds(s.derived()['link_delay_ps'])),
    "rto_min": lambda s: _flag("minrto", seconds(s.ps('rto_min'))),
    "rto_max": lambda s: _flag("maxrto", seconds(s.ps('rto_max'))),
    "timer_granularity": _tick,
    "dupack_threshold": lambda s: _flag("numdupacks", s.dupack_threshold),
    "limited_transmit": lambda s: _flag("singledup", _on(s.limited_transmit)),
    "init_cwnd": lambda s: _flag("windowInit", s.init_cwnd),
    # window_ counts packets (TcpAgent::window: min(cwnd_, wnd_))
    "rwnd": lambda s: _flag("window", s.rwnd // s.mss),
    "jitter": lambda s: _flag("thinkTime", seconds(s.ps('jitter'))),
    "send_jitter": lambda s: _flag("overhead", seconds(s.ps('send_jitter'))),
    "duration": _duration,
    "seed": _seed,
    "tcp": lambda s: _flag("tcp", s.tcp),
    "mss": lambda s: _flag("packetSize", s.mss),
    "header": lambda s: _flag("header", s.header),
}

# Rules ns-2 hard-wires that are knobs in our model: field -> (ns-2's value, where).
HARD_WIRED: dict[str, Rule] = {
    "tcp_rules": (lambda s: "ns2", "its Agent/TCP with slow_start_restart_ on, its default: the RTO timer runs "
                  "on an idle connection and its expiry cuts cwnd to one segment, fast retransmit needs an ACK "
                  "beyond recover_, ssthresh halves the window (README; crates/sim/src/tcp/ns2_rules.rs)"),
    "buffer_admission": (lambda s: "packets", "DropTail counts packets (queue/drop-tail.cc, DropTail::enque)"),
    "rto_backoff": (lambda s: "sample", "the backoff ends at the ACK of a timed segment (tcp.cc, TcpAgent::newack)"),
    "tie_break": (lambda s: "fifo", "its scheduler runs equal-time events in the order they were scheduled"),
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
    # ns-2's slow_start_restart_ is another mechanism, part of its rules (tcp_rules=ns2)
    "slow_start_after_idle": "RFC 5681 §4.1's restart at the initial window when a write follows an idle RTO "
                             "(its slow_start_restart_ is another rule: the idle timer's expiry cuts cwnd to one "
                             "segment, tcp_rules=ns2)",
    "active_servers": "a random subset of active servers",
    "handshake": "a new connection per block (its one-way agents are persistent)",
    "syn_timeout": "a SYN timeout for per-block handshakes (it has none)",
    "mitigation": "a connection-scheduling mitigation",
    "nccs_k": "NCCS's K (it has no mitigation)",
    "condition_i": "NCCS/OCS's condition-I (it has no mitigation)",
    "udp": "UDP background traffic",
    "udp_packet": "a UDP background datagram size (it has no UDP)",
    "cc": "DCTCP or CUBIC congestion control (the script runs Agent/TCP's AIMD)",
    "ecn_threshold": "ECN marking (its DropTail queues drop, they never mark CE)",
    "prr": "PRR (RFC 6937; Agent/TCP/Sack1 recovers as RFC 6675 without it)",
    "rack_tlp": "RACK-TLP (RFC 8985; ns-2.35 has neither RACK nor tail-loss probes)",
    "hystart": "Linux's HyStart (the script runs Agent/TCP's AIMD, no CUBIC)",
    "ssthresh_from_cwnd": "Linux's tcp_reno_ssthresh (Agent/TCP halves its window by its own rule, tcp_rules=ns2)",
    "count_acked_segments": "Linux's tcp_cong_avoid_ai (Agent/TCP's opencwnd counts ACKs)",
    "cwnd_limited_growth": "Linux's tcp_is_cwnd_limited (Agent/TCP grows on every new ACK)",
    "prr_extra_if_advanced": "Linux's condition on PRR's extra segment (Agent/TCP/Sack1 runs no PRR)",
    "prr_counts_fast_retransmit": "Linux's fast retransmit within PRR's allowance (Agent/TCP/Sack1 runs no PRR)",
    "grow_on_recovery_exit": "Linux's growth on the ACK that ends recovery (Agent/TCP/Sack1 sets cwnd = ssthresh)",
    "think_times": "measured think times drawn from a list (the script's thinkTime is uniform: jitter)",
    "ack_short_segments": "Linux's immediate ACK of a short segment (its DelAck sink delays it as any other)",
    "rcv_window_growth": "Linux's quick ACK per receive-window step (ns-2's DelAck sink has a fixed window and ACKs pairs)",
    "rcv_autotuning": "Linux's receive-buffer autotuning (ns-2's DelAck sink has a fixed window)",
    "rcv_rtt_from_window": "Linux 6.16's receiver RTT for autotuning (ns-2's DelAck sink has a fixed window)",
    "tso_deferral": "Linux's TSO deferral of a small send allowance (ns-2's agents send what the window allows)",
    "rack_rtt_sack_first": "Linux's order of RACK's RTT updates (ns-2.35 has no RACK)",
    "sacked_leave_flight": "Linux's tcp_packets_in_flight outside recovery (ns-2's agents send by limited transmit)",
    "cwnd_limited_latch": "Linux's per-window is_cwnd_limited record (ns-2's agents grow on every ACK)",
    "gso_half_cwnd": "Linux's half-cwnd GSO skbs (ns-2's agents send what the window allows)",
    "cubic_linux": "Linux's tcp_cubic.c arithmetic (the script runs Agent/TCP's AIMD, no CUBIC)",
    "ack_pingpong": "Linux's ping-pong mode (ns-2's DelAck sink has none)",
    "rcv_scaling_ratio": "Linux's skb len/truesize ratio (ns-2's DelAck sink has no receive buffer accounting)",
    "rack_timer_floor": "Linux's 2 ms on the probe and RACK timers (ns-2.35 has no RACK or probes)",
    "recovery_from_loss": "Linux's fast recovery from the Loss state on RACK's marks (ns-2.35 has no RACK)",
    "loss_retransmit_queue": "Linux's Loss state: SACKs kept, lost segments resent as SACKs come (Agent/TCP/Sack1 clears its scoreboard)",
    "frto": "F-RTO after a timeout (ns-2.35's Agent/TCP/Sack1 has none)",
    "quickack_mode": "Linux's quick-ACK mode at the first data, after a gap and for old data (ns-2's DelAck sink has none)",
    "receiver_rto_min": "the receiving socket's RTOmin for Linux's quick-ACK gap (ns-2's DelAck sink has no such rule)",
    "rearm_rto_from_head": "Linux's RTO from the oldest segment's send while a probe is pending (ns-2.35 has no probes)",
    "rto_min_on_rttvar": "Linux's RTO = srtt + rttvar with RTOmin on rttvar (ns-2.35's rtt_timeout is RFC 6298's, in tcp_tick_ units)",
    "timer_wheel": "Linux's timer-wheel rounding (ns-2.35's timers fire at their exact times)",
    **STAR_OF_FIFOS_LACKS,
    **ONE_SYNC_READ_CLIENT_LACKS,
}

FIELDS = FieldMap("ns-2", "peers/ns2.py", MAPPED, HARD_WIRED, INEXPRESSIBLE)

# Options that hold a rule of ns-2's whatever the script's default: slow_start_restart_
# (ns-2's default, 1) is part of the rules tcp_rules=ns2 models, the idle expiry that cuts
# cwnd to one segment. After the mapped options; --tcl slowStartRestart=0 still wins.
PINNED = ["--slowStartRestart", "1"]


def classify_field(name: str) -> str | None:
    """How the ns-2 peer treats a Scenario field: mapped, hard-wired, inexpressible, or
    None for a field added to Scenario since (refused unless at its default)."""
    return FIELDS.classify(name)


def ns2_rules(s: Scenario) -> dict[str, Any]:
    """The Scenario fields that make our model follow ns-2's hard-wired rules."""
    return FIELDS.rules(s)


def ns2_args(s: Scenario) -> list[str]:
    """The script's options for ``s``; ``UsageError`` naming the first field it cannot
    express."""
    return FIELDS.args(s) + PINNED


def ns2_warnings(s: Scenario) -> list[str]:
    """What the mapping keeps but ns-2 does differently."""
    notes = []
    if s.send_jitter:
        notes.append("send_jitter: ns-2's overhead_ delays each burst send_much releases, not each packet "
                     "(TcpAgent::send_much), and draws from its own RNG")
    if s.jitter:
        notes.append("jitter: ns-2 draws think times from its own RNG; the same seed gives other draws, so "
                     "seeds compare as distributions, not run by run")
    if s.buffer_packets is None and s.buffer % (s.mss + s.header):
        notes.append(f"buffer {s.model_dump()['buffer']} is {qlim(s)} packets of {s.mss + s.header} B in ns-2 "
                     f"(DropTail counts packets)")
    return notes


# ns-2's timeouts are its agents' nrexmit_ (RTO expirations with data outstanding); its
# idle expiries are the cwnd cuts of the timer running on idle connections, which ours
# counts as idle_restarts under tcp_rules=ns2 (README, "Output").
PEER = Peer(name="ns-2", key="ns2", arg_word="options",
            metrics=(*METRICS, Metric("idle_restarts", "idle RTOs", "idle_expiries"), LOST_RETRANSMITS),
            fields=FIELDS, args=ns2_args, warnings=ns2_warnings)


# --- running one point --------------------------------------------------------------------


def parse_result(stdout: str) -> dict[str, Any]:
    """The script's header line (``N,...``) and result line as a dict."""
    return compare.parse_result(stdout, PEER.name)


def run_ns2(ns: Path, script: Path, args: Sequence[str], trace: Path | None = None) -> dict[str, Any]:
    """Run the script once; its result line as a dict."""
    return compare.run_process([str(ns), str(script), *args, "--csvHeader", "1"]
                               + (["--trace", str(trace)] if trace else []), PEER.name)


# --- the grid -------------------------------------------------------------------------------


def build_grid(servers: Sequence[int], vary: dict[str, Sequence[str]], shared: dict[str, Any],
               ours: dict[str, Any], with_ns2_rules: bool = False, seeds: int = 1,
               tcl: Sequence[str] = ()) -> list[Point]:
    """Every (servers, varied values..., seed) point, checked for both simulators before
    any runs (``compare.build_grid``); each axis is headed by its field's name, and
    ``tcl`` options follow the mapped ones (the script lets a later option win)."""
    axes = [Axis(name, name, tuple((v, v) for v in values)) for name, values in vary.items()]
    return compare.build_grid(PEER, servers, axes, shared, ours, with_rules=with_ns2_rules, seeds=seeds,
                              extra_args=tcl)


# --- command line -----------------------------------------------------------------------

DESCRIPTION = ("Run a grid of points in incastlab and in the ns-2 peer (peers/ns2/incast.tcl) and compare blocks, "
               "goodput, timeouts, drops and idle RTO expiries. Scenario defaults: incastlab's (FAST'08: NewReno, "
               "1 Gbps, RTT 100 us, SRU 256 KiB, 32 KiB buffer = 21 packets of 1500 B in ns-2, RTOmin 200 ms, no "
               "delayed ACK, IW 2, rwnd 29200 B = window_ 20).")


def _add_axes(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2",
                   help="a grid axis over a Scenario field, for both simulators, e.g. limited_transmit=on,off or "
                        "tcp=reno,newreno,sack; repeatable (all combinations)")
    g.add_argument("--tcl", action="append", default=[], metavar="NAME=VALUE",
                   help="an incast.tcl option passed after the mapped ones (it wins), e.g. rtxcurInit=3.0; "
                        "see peers/ns2/README.md; repeatable")


def _add_locations(r: argparse._ArgumentGroup) -> None:
    r.add_argument("--ns", metavar="PATH", default=None,
                   help="the ns binary (default: $INCASTLAB_NS2, else ns on PATH, else apt-get install ns2 as root)")
    r.add_argument("--peer", metavar="DIR", default=None,
                   help="the directory of incast.tcl (default: $INCASTLAB_NS2_PEER, else peers/ns2)")


def build_parser() -> argparse.ArgumentParser:
    return compare.build_parser(PEER, DESCRIPTION, _add_axes, _add_locations,
                                example_tag="n16-limited_transmit-on")


def tcl_options(texts: Sequence[str]) -> list[str]:
    """``NAME=VALUE`` pairs as incast.tcl options (``--NAME VALUE``); the script checks them."""
    out = []
    for t in texts:
        name, eq, value = t.partition("=")
        if not eq or not name.strip().isalpha():
            raise UsageError("--tcl", t, "NAME=VALUE with NAME an incast.tcl option, e.g. rtxcurInit=3.0")
        out += [f"--{name.strip()}", value.strip()]
    return out


def _vary(texts: Sequence[str]) -> dict[str, list[str]]:
    """``--vary FIELD=V1,V2`` as field -> values, as written (Scenario parses them)."""
    vary = {}
    for name, values in compare.assignments(texts, "--vary", {"servers": "--servers"}).items():
        vary[name] = [v.strip() for v in values.split(",") if v.strip()]
        if not vary[name]:
            raise UsageError("--vary", f"{name}={values}", "FIELD=V1[,V2...] with at least one value")
    return vary


def _points_from_args(args: argparse.Namespace) -> list[Point]:
    vary = _vary(args.vary)
    # grid axes have their own flags, for both sides; so has the shared run length
    axes = {"servers": "--servers", **{name: "--vary" for name in vary}}
    shared = compare.assignments(args.shared, "--set", {**axes, "duration": "--duration"})
    if args.duration is not None:
        shared["duration"] = args.duration
    return build_grid(args.servers, vary, shared, compare.assignments(args.ours, "--ours", axes),
                      with_ns2_rules=args.with_rules, seeds=args.seeds, tcl=tcl_options(args.tcl))


def run(args: argparse.Namespace) -> int:
    points = _points_from_args(args)  # every refusal before anything runs

    def locate() -> tuple[compare.RunPeer, str]:
        ns, script = ns_binary(args.ns), script_path(args.peer)
        return (lambda p, trace: run_ns2(ns, script, p.peer_args, trace)), f"{ns} {script}"

    return compare.run(args, points, locate)


def main(argv: list[str] | None = None) -> int:
    return compare.main(PEER.prog, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
