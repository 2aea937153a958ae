"""Capture a testbed point packet by packet and write it as the per-event trace
``python -m incastlab.peers.tracediff`` reads (the ns-3 peer's format, which the simulator's
``--events`` also writes), so the kernel and the simulator compare event by event.

Where it looks (docs/testbed.md, "Capture and trace"):

- each server's veth, in its namespace: what its TCP hands down (``tx``, ``rtx``: a segment
  starting below the highest byte sent before) and the ACKs and requests reaching it (``ack``);
- each server's bridge port, in the switch namespace: a data packet arriving at the switch,
  i.e. at the ``tbf`` queue (``enq``, or ``drop`` if it never leaves);
- the client's bridge port: a data packet leaving ``tbf`` (``deq``).

One ``dumpcap`` per interface (a 32 MiB ring each: one process for all of them lost
packets here), 128 bytes of each frame, nanosecond stamps from the one clock every namespace
shares. A capture the kernel dropped packets from is refused, not converted: a lost frame
would read as a drop at the switch. So is one that lost frames silently: a frame a later
point saw and an earlier one did not (``missed_frames``). dumpcap's libpcap reads the ring in
TPACKET_V3 blocks, which the kernel hands over when full or after the read timeout (250 ms);
a frame in a block not yet handed over when dumpcap stops is lost without a trace in the
capture's statistics, so the captures run ``SETTLE_S`` past the point's end. Where tracefs
is writable, the servers' ``tcp_probe`` tracepoint (every segment reaching a server socket: cwnd, ssthresh) and
``tcp_cong_state_set`` are recorded in a tracing instance of their own and become ``cwnd``,
``ssth`` and ``state`` events; where the kernel has them, the client's receive-window steps
(``tcp_rcvbuf_grow``, Linux 6.16+, and ``tcp_rcv_space_adjust``) are recorded with them and kept
as lines in the point's ``tcp_probe.txt``, for reading by hand or by a script (docs/testbed.md,
"the kernel's receive window, traced and modelled").

A packet is known at every point by its source, IP ID and sequence number: Linux numbers a
connected TCP socket's packets from a per-socket counter (``ip_select_ident_segs``), so a
retransmission has an ID of its own. Flows are numbered from 0 in server order, sequence and
acknowledgment numbers count from the connection's first data byte (1), as the simulator's.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import struct
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EnvironmentProblem
from .names import CLIENT_ADDR, PORT, Names, server_addr

SNAPLEN = 128        # Ethernet + IPv4 + TCP with 40 bytes of options fit in 114
RING_MIB = 32        # per interface: 16 MiB was enough for 4 servers, one shared 2 MiB ring was not
READY_TIMEOUT_S = 10
# dumpcap opens its interface with a 250 ms read timeout, which libpcap makes the TPACKET_V3
# block-retire timeout: frames captured in the last 250 ms before dumpcap stops were lost
# (measured on lo: 3 frames 0.01 s before the stop lost 3 times of 3, 0.1-0.2 s before 2 of
# 6, 0.3 s and more before 0 of 6), and the stop came about 0.2 s after a 2-server point's
# last data frame, so its tail went missing at one interface or another in about 1 run of 3
SETTLE_S = 0.6
TRACEFS = Path("/sys/kernel/tracing")
# cong_state_set's numbers are Linux's TCP_CA_*: 0 open, 1 disorder, 2 CWR, 3 recovery,
# 4 loss; ns-3's TcpCongState and the simulator's trace use the same for 0, 1, 3 and 4
TRACE_EVENTS = ("tcp/tcp_probe", "tcp/tcp_cong_state_set")
# the client's DRS steps (tcp_rcv_space_adjust, tcp_rcvbuf_grow): recorded where this kernel
# has them, not converted into trace events (the simulator's trace has no receive window)
RECEIVER_EVENTS = ("tcp/tcp_rcvbuf_grow", "tcp/tcp_rcv_space_adjust")
SSTHRESH_UNSET = 1 << 30
FIELDS = ("frame.time_epoch", "ip.src", "ip.dst", "ip.id", "tcp.seq_raw", "tcp.len", "tcp.ack_raw",
          "tcp.flags.syn")


@dataclass(frozen=True)
class Point:
    """One interface to capture: where it is, and what it sees."""
    netns: str
    dev: str
    role: str  # "server" (a server's veth), "ingress" (its bridge port), "egress" (the client's)
    server: int | None = None

    @property
    def file(self) -> str:
        return f"{self.dev}.pcapng"


def points(names: Names, n: int) -> list[Point]:
    out = [Point(names.switch_ns, Names.port_of(names.client_ns), "egress")]
    for i in range(1, n + 1):
        ns = names.server_ns(i)
        out.append(Point(names.switch_ns, Names.port_of(ns), "ingress", i))
        out.append(Point(ns, ns, "server", i))
    return out


def check_tools() -> None:
    for tool in ("dumpcap", "tshark"):
        if shutil.which(tool) is None:
            raise EnvironmentProblem(f"{tool} is not installed (bash scripts/install.sh installs tshark, which has it)")


class Capture:
    """Capture `n` servers' point of a built testbed into `directory` while the block runs:
    ``with Capture(topo.names, n, directory): run_point(...)``."""

    def __init__(self, names: Names, n: int, directory: str | os.PathLike):
        self.names, self.n, self.dir = names, n, Path(directory)
        self.points = points(names, n)
        self.procs: list[subprocess.Popen] = []
        self.instance = TRACEFS / "instances" / f"incastlab-{names.prefix}"
        self.traced = False

    def __enter__(self) -> "Capture":
        check_tools()
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            for p in self.points:
                self.procs.append(self._dumpcap(p))
            for proc, p in zip(self.procs, self.points):
                self._wait_ready(proc, p)
            self.traced = self._start_tracing()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    def _dumpcap(self, p: Point) -> subprocess.Popen:
        args = ["ip", "netns", "exec", p.netns, "dumpcap", "-i", p.dev, "-s", str(SNAPLEN), "-B", str(RING_MIB),
                "-f", "tcp", "-w", str(self.dir / p.file)]
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)

    @staticmethod
    def _wait_ready(proc: subprocess.Popen, p: Point) -> None:
        """dumpcap says "Capturing on ..." once the interface is open."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        seen = []
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line.strip())
            if line.startswith("Capturing on"):
                return
        proc.kill()
        raise EnvironmentProblem(f"dumpcap on {p.dev} in {p.netns} did not start: {' / '.join(seen[-2:]) or 'no output'}")

    def _start_tracing(self) -> bool:
        """The servers' tcp_probe and cong_state events in an instance of our own, and the
        client's receive-window steps where this kernel has them; False where tracefs is not
        writable here (the trace then has no cwnd/ssth/state events)."""
        try:
            self.instance.mkdir(exist_ok=True)
            (self.instance / "tracing_on").write_text("0")
            (self.instance / "trace_clock").write_text("tai")  # the captures' clock (CLOCK_REALTIME + TAI offset)
            (self.instance / "buffer_size_kb").write_text("16384")
            (self.instance / "trace").write_text("")
            (self.instance / "events/tcp/tcp_probe/filter").write_text(f"sport == {PORT}")
            (self.instance / "events/tcp/tcp_cong_state_set/filter").write_text(f"sport == {PORT}")
            for e in TRACE_EVENTS:
                (self.instance / "events" / e / "enable").write_text("1")
            for e in self._receiver_events():
                (self.instance / "events" / e / "filter").write_text(f"dport == {PORT}")
                (self.instance / "events" / e / "enable").write_text("1")
            (self.instance / "tracing_on").write_text("1")
            return True
        except OSError:
            self._remove_instance()
            return False

    def _receiver_events(self) -> list[str]:
        return [e for e in RECEIVER_EVENTS if (self.instance / "events" / e).is_dir()]

    def _remove_instance(self) -> None:
        try:
            self.instance.rmdir()
        except OSError:
            pass

    def _stop(self) -> None:
        if any(proc.poll() is None for proc in self.procs):
            time.sleep(SETTLE_S)  # every frame handed over to dumpcap before it stops (SETTLE_S)
        if self.traced:
            try:
                (self.instance / "tracing_on").write_text("0")
                (self.dir / "tcp_probe.txt").write_text((self.instance / "trace").read_text())
                for e in (*TRACE_EVENTS, *self._receiver_events()):
                    (self.instance / "events" / e / "enable").write_text("0")
            except OSError:
                pass
            self._remove_instance()
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []

    def lost(self) -> dict[str, int]:
        """Packets the kernel dropped from each interface's capture (pcapng's isb_ifdrop)."""
        return {p.dev: interface_drops(self.dir / p.file) for p in self.points}


def interface_drops(path: Path) -> int:
    """The sum of isb_ifdrop over a pcapng file's interface statistics blocks."""
    data = path.read_bytes()
    drops, i = 0, 0
    while i + 8 <= len(data):
        btype, blen = struct.unpack_from("<II", data, i)
        if blen < 12:
            break
        if btype == 5:  # Interface Statistics Block: options after interface id and timestamp
            j = i + 20
            while j + 4 <= i + blen - 4:
                code, length = struct.unpack_from("<HH", data, j)
                if code == 0:
                    break
                if code == 5 and length == 8:  # isb_ifdrop
                    drops += struct.unpack_from("<Q", data, j + 4)[0]
                j += 4 + (length + 3) // 4 * 4
        i += blen
    return drops


# --- from packets to the trace ---------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    time_ns: int
    src: str
    dst: str
    ip_id: int
    seq: int
    length: int
    ack: int
    syn: bool


def read_frames(path: Path) -> list[Frame]:
    """The TCP frames of one capture file, via tshark."""
    args = ["tshark", "-r", str(path), "-Y", "tcp", "-T", "fields", "-E", "separator=,"]
    for f in FIELDS:
        args += ["-e", f]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise EnvironmentProblem(f"tshark could not read {path}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    out = []
    for r in csv.reader(io.StringIO(p.stdout)):
        if len(r) < len(FIELDS) or not r[4]:
            continue
        whole, _, frac = r[0].partition(".")
        t = int(whole) * 10**9 + int(frac.ljust(9, "0")[:9])
        out.append(Frame(t, r[1], r[2], int(r[3], 16), int(r[4]), int(r[5]), int(r[6] or 0), r[7] in ("1", "True")))
    return out


@dataclass
class Flow:
    """One server's connection: its ISNs (from the SYN and SYN-ACK) and its highest byte sent."""
    server_isn: int | None = None
    client_isn: int | None = None
    sent_end: int = 0

    def rel(self, seq: int) -> int:
        return (seq - self.server_isn) % 2**32

    def rel_ack(self, ack: int) -> int:
        return (ack - self.server_isn) % 2**32


@dataclass
class Trace:
    """The events of one captured point, and what the conversion noticed."""
    rows: list[tuple[int, str, int, int, int, int | None]] = field(default_factory=list)
    first_ns: int = 0
    lost: dict[str, int] = field(default_factory=dict)
    unmatched_egress: int = 0
    # frames without payload from a server (pure ACKs, FIN) that reached tbf and never left:
    # tbf's drop counter counts them, the trace's data drops do not
    control_drops: int = 0

    def add(self, t_ns: int, kind: str, flow: int, a: int, b: int, c: int | None = None) -> None:
        self.rows.append((t_ns, kind, flow, a, b, c))

    def lines(self) -> list[str]:
        out = []
        for t, kind, flow, a, b, c in sorted(self.rows, key=lambda r: r[0]):
            dt = t - self.first_ns
            ts = f"{dt // 10**9}.{dt % 10**9:09d}"
            out.append(f"{ts},{kind},{flow},{a},{b}" + ("" if c is None else f",{c}"))
        return out


def flow_of(addr: str, n: int) -> int | None:
    for i in range(1, n + 1):
        if server_addr(i) == addr:
            return i - 1
    return None


def build_trace(frames: dict[str, list[Frame]], pts: list[Point], n: int, probe_text: str | None = None) -> Trace:
    """The per-event trace of one point from its interfaces' frames (``frames[dev]``)."""
    trace = Trace()
    flows = [Flow() for _ in range(n)]
    by_role = defaultdict(list)
    for p in pts:
        by_role[p.role].append(p)
    # ISNs from the handshakes the servers' captures saw
    for p in by_role["server"]:
        f = flows[p.server - 1]
        for fr in frames[p.dev]:
            if fr.syn and fr.src == server_addr(p.server):
                f.server_isn = fr.seq
            elif fr.syn and fr.src == CLIENT_ADDR:
                f.client_isn = fr.seq
        if f.server_isn is None:
            raise EnvironmentProblem(f"the capture of server {p.server} has no SYN-ACK: it started after the connection")
    starts = [fr.time_ns for fs in frames.values() for fr in fs]
    trace.first_ns = min(starts) if starts else 0
    # what each server's TCP sent, and the ACKs reaching it
    for p in by_role["server"]:
        k, f, me = p.server - 1, flows[p.server - 1], server_addr(p.server)
        for fr in frames[p.dev]:
            if fr.syn:
                continue
            if fr.src == me and fr.length > 0:
                seq = f.rel(fr.seq)
                kind = "rtx" if seq < f.sent_end else "tx"
                f.sent_end = max(f.sent_end, seq + fr.length)
                trace.add(fr.time_ns, kind, k, seq, fr.length)
            elif fr.src == CLIENT_ADDR:
                trace.add(fr.time_ns, "ack", k, f.rel_ack(fr.ack), fr.length)
    # the switch: each data packet into tbf (a server's bridge port) and out (the client's)
    arrivals: dict[tuple[str, int, int], tuple[int, int, int, int]] = {}
    for p in by_role["ingress"]:
        k, f, me = p.server - 1, flows[p.server - 1], server_addr(p.server)
        for fr in frames[p.dev]:
            if fr.src == me and fr.length > 0 and not fr.syn:
                arrivals[(me, fr.ip_id, fr.seq)] = (fr.time_ns, k, f.rel(fr.seq), fr.length)
    trace.control_drops = control_drops(frames, by_role)
    departures: dict[tuple[str, int, int], int] = {}
    for p in by_role["egress"]:
        for fr in frames[p.dev]:
            if fr.dst == CLIENT_ADDR and fr.length > 0 and not fr.syn:
                key = (fr.src, fr.ip_id, fr.seq)
                if key in arrivals:
                    departures[key] = fr.time_ns
                else:
                    trace.unmatched_egress += 1
    # the queue's length after each event: packets arrived and neither left nor dropped
    moves = []
    for key, (t, k, seq, length) in arrivals.items():
        left = departures.get(key)
        moves.append((t, 0, k, seq, length, left is None))
        if left is not None:
            moves.append((left, 1, k, seq, length, False))
    waiting = 0
    for t, leaving, k, seq, length, dropped in sorted(moves):
        if leaving:
            waiting -= 1
            trace.add(t, "deq", k, seq, length, waiting)
        elif dropped:
            trace.add(t, "drop", k, seq, length, waiting)
        else:
            waiting += 1
            trace.add(t, "enq", k, seq, length, waiting)
    if probe_text:
        add_probe_events(trace, probe_text, n)
    return trace


def frame_key(fr: Frame) -> tuple:
    """A frame as every capture point sees it (Linux numbers a socket's packets: IP ID)."""
    return (fr.src, fr.dst, fr.ip_id, fr.seq, fr.ack, fr.length, fr.syn)


def control_drops(frames: dict[str, list[Frame]], by_role: dict[str, list[Point]]) -> int:
    """Frames without payload a server sent that reached tbf and never left it."""
    left = {frame_key(fr) for p in by_role["egress"] for fr in frames[p.dev] if fr.dst == CLIENT_ADDR}
    return sum(1 for p in by_role["ingress"] for fr in frames[p.dev]
               if fr.src == server_addr(p.server) and fr.length == 0 and frame_key(fr) not in left)


def missed_frames(frames: dict[str, list[Frame]], pts: list[Point]) -> dict[str, int]:
    """Per interface, the frames it must have seen because a later point on their path did,
    and did not: a server's frames go server veth -> its bridge port -> (tbf) -> the client's
    bridge port, the client's the other way, and nothing but tbf drops a frame on the way.
    Anything here was lost by the capture, not by the network."""
    from collections import Counter

    by_role = defaultdict(list)
    for p in pts:
        by_role[p.role].append(p)
    (egress,) = by_role["egress"]
    seen = {p.dev: Counter(frame_key(fr) for fr in frames[p.dev]) for p in pts}
    missed: dict[str, int] = {}

    def check(upstream: str, downstream: str, src: str | None = None, dst: str | None = None) -> None:
        need = Counter({k: c for k, c in seen[downstream].items()
                        if (src is None or k[0] == src) and (dst is None or k[1] == dst)})
        short = sum((need - seen[upstream]).values())
        if short:
            missed[upstream] = missed.get(upstream, 0) + short

    servers = {p.server: p for p in by_role["server"]}
    for ing in by_role["ingress"]:
        me, srv = server_addr(ing.server), servers[ing.server]
        check(srv.dev, ing.dev, src=me)          # a server's frames at its bridge port
        check(ing.dev, egress.dev, src=me)       # ... and leaving tbf
        check(egress.dev, ing.dev, src=CLIENT_ADDR, dst=me)   # the client's towards it
        check(ing.dev, srv.dev, src=CLIENT_ADDR, dst=me)
    return missed


def add_probe_events(trace: Trace, text: str, n: int) -> None:
    """cwnd and ssthresh (in bytes: segments x the segment's size) whenever they change, and
    congestion-state changes, from the servers' tcp_probe and tcp_cong_state_set lines."""
    import re

    probe = re.compile(r"\s(\d+)\.(\d+): tcp_probe: .*?src=([\d.]+):\d+ .*?snd_cwnd=(\d+) ssthresh=(\d+)")
    state = re.compile(r"\s(\d+)\.(\d+): tcp_cong_state_set: .*?saddr=([\d.]+) .*?cong_state=(\d+)")
    mss = max((r[4] for r in trace.rows if r[1] in ("tx", "rtx")), default=1448)  # Linux counts cwnd in segments
    last: dict[tuple[str, int], int] = {}
    for line in text.splitlines():
        m = probe.search(line)
        if m:
            t = int(m[1]) * 10**9 + int(m[2].ljust(9, "0")[:9])
            k = flow_of(m[3], n)
            if k is None:
                continue
            # (an unset ssthresh, 2^31 - 1 segments, written as the simulator writes its own: 1 GiB)
            for kind, value in (("cwnd", int(m[4]) * mss), ("ssth", min(int(m[5]) * mss, SSTHRESH_UNSET))):
                if last.get((kind, k)) != value:
                    trace.add(t, kind, k, value, 0)
                    last[(kind, k)] = value
            continue
        m = state.search(line)
        if m:
            t = int(m[1]) * 10**9 + int(m[2].ljust(9, "0")[:9])
            k = flow_of(m[3], n)
            if k is None:
                continue
            old = last.get(("state", k), 0)
            new = int(m[4])
            if new != old:
                trace.add(t, "state", k, old, new)
                last[("state", k)] = new


def write_trace(directory: str | os.PathLike, names: Names, n: int, out: str | os.PathLike) -> Trace:
    """Convert the capture in `directory` into the trace file `out` (written whole)."""
    from ..outfiles import write_atomically

    d = Path(directory)
    pts = points(names, n)
    lost = {p.dev: interface_drops(d / p.file) for p in pts}
    if any(lost.values()):
        bad = ", ".join(f"{dev}: {k}" for dev, k in lost.items() if k)
        raise EnvironmentProblem(f"the capture in {d} lost packets ({bad}); the machine was too busy to capture "
                                 "every frame, run the point again")
    frames = {p.dev: read_frames(d / p.file) for p in pts}
    missed = missed_frames(frames, pts)
    if missed:
        bad = ", ".join(f"{dev}: {k}" for dev, k in missed.items())
        raise EnvironmentProblem(f"the capture in {d} missed frames that a later capture point saw ({bad}); "
                                 "the machine was too busy to capture every frame, run the point again")
    probe = d / "tcp_probe.txt"
    trace = build_trace(frames, pts, n, probe.read_text() if probe.exists() else None)
    trace.lost = lost
    text = "\n".join(trace.lines()) + "\n"
    write_atomically(out, lambda tmp: Path(tmp).write_text(text))
    return trace
