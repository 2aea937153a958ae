#!/usr/bin/env python3
"""Which Linux receiver rule sent each of the client's ACKs, read from the testbed's capture
at the client's bridge port (``incastlab validate --trace DIR`` writes it as
``DIR/testbed-nN/iltb-c-p.pcapng``; it holds the data leaving tbf and the client's ACKs):

    python scripts/ack-rules.py t2/testbed-n4/iltb-c-p.pcapng [more.pcapng ...]

Per capture, per ACK of a flow (pure ACKs; the client's 24-byte requests are not counted),
in this order (the first that fits):

- ``dupack``: acknowledges nothing new (a segment arrived out of order; RFC 5681 §4.2);
- ``no_segment``: acknowledges new data but no data segment reached the client since its
  last ACK (the capture missed nothing: tbf's egress is before the client's veth), e.g. a
  window update from the application's read;
- ``hole_fill``: one segment that moved the ACK past more than itself (ICSK_ACK_NOW in
  ``tcp_data_queue``, RFC 5681 §4.2);
- ``ofo_pending``: one in-order segment while out-of-order data is held (the ACK carries a
  SACK block; ``__tcp_ack_snd_check`` with ``ofo_possible``);
- ``short``: one segment shorter than the MSS (ICSK_ACK_PUSHED: the ``ack_short_segments``
  flag);
- ``delack_timer``: one segment, acknowledged 30 ms or more after it arrived;
- ``pair``: two or more segments (``__tcp_ack_snd_check``: more than one ``rcv_mss`` since the
  last ACK);
- ``window_grew``: one full segment, and the ACK advertises a larger window than the ACK
  before: ``tcp_grow_window`` (net/ipv4/tcp_input.c) raised ``rcv_ssthresh`` and set
  ``icsk_ack.quick |= 1``, so ``tcp_in_quickack_mode`` sends the ACK at once;
- ``psh_full``: one full segment carrying PSH, window unchanged: since Linux 6.6 (commit
  4720852ed9af, "tcp: fix delayed ACKs for MSS boundary condition") ``tcp_measure_rcv_mss``
  marks a full-MSS segment with PSH ICSK_ACK_PUSHED, and ``tcp_cleanup_rbuf`` (net/ipv4/tcp.c)
  ACKs it once the application has read everything;
- ``quick_after_gap``: one full segment within 16 ACKs of the connection's first data or
  of in-order data arriving more than ``RTO_S`` after the previous
  (``tcp_event_data_recv``: ``tcp_incr_quickack`` with TCP_MAX_QUICKACKS = 16);
- ``other``.

Each ACK is also counted by whether the connection was, as far as the packets tell, in
"ping-pong" (interactive) mode, where Linux sends neither quick ACKs nor ``psh_full`` ACKs
(``tcp_in_quickack_mode``, ``tcp_cleanup_rbuf``): it enters when the client sends a request
less than ``ATO_S`` after the connection's last in-order data (``tcp_event_data_sent``,
``net.ipv4.tcp_pingpong_thresh`` = 1), and leaves when an ACK of new data goes out 30 ms or
more after the last data arrived (the delayed-ACK timer fired: ``tcp_delack_timer_handler``
calls ``inet_csk_exit_pingpong_mode``). ``ato`` adapts in the kernel; 40 ms (TCP_ATO_MIN)
is what it settles at for data arriving more often than every 20 ms.

A file tshark cannot read is one line on stderr and status 2."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys

CLIENT = "198.18.0.1"
RTO_S = 0.200        # the client's RTO is at least the kernel's default TCP_RTO_MIN
ATO_S = 0.040        # TCP_ATO_MIN
DELACK_S = 0.030     # an ACK this late after the data waited for the delayed-ACK timer
QUICKACKS = 16       # TCP_MAX_QUICKACKS
FIELDS = ("frame.time_epoch", "ip.src", "tcp.srcport", "tcp.dstport", "tcp.flags", "tcp.seq", "tcp.ack",
          "tcp.len", "tcp.window_size_value", "tcp.options.sack_le")
CLASSES = ("dupack", "no_segment", "hole_fill", "ofo_pending", "short", "delack_timer", "pair", "window_grew", "psh_full",
           "quick_after_gap", "other")
PSH, SYN = 0x08, 0x02


def read_packets(path: str) -> dict[int, list[dict]]:
    """Each connection's packets (keyed by the client's port), in capture order."""
    args = ["tshark", "-r", path, "-Y", "tcp", "-T", "fields", "-E", "separator=;", "-E", "aggregator=/"]
    for f in FIELDS:
        args += ["-e", f]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        why = (run.stderr.strip().splitlines() or [f"status {run.returncode}"])[-1]
        raise ValueError(f"{path}: tshark could not read it: {why}")
    flows: dict[int, list[dict]] = collections.defaultdict(list)
    for line in run.stdout.splitlines():
        t, src, sport, dport, flags, seq, ack, length, win, sack = line.split(";")
        fl = int(flags, 16)
        if fl & SYN:
            continue
        cli = src == CLIENT
        flows[int(sport) if cli else int(dport)].append(dict(
            t=float(t), cli=cli, psh=bool(fl & PSH), seq=int(seq), ack=int(ack), len=int(length),
            win=int(win), sack=sack != ""))
    return flows


def classify_flow(packets: list[dict], mss: int):
    """Yield (class, pingpong) for each of the client's pure ACKs on one connection."""
    rcv_nxt = last_ack = 1
    pending: list[dict] = []      # data segments since the client's last ACK
    prev_win = last_in_order = last_data = None
    acks = 0
    quick_from = 0                # the ACK count at which a quick-ACK budget was armed
    pingpong = False
    for p in packets:
        if not p["cli"]:
            if p["len"] == 0:
                continue
            if p["seq"] == rcv_nxt:
                if last_in_order is not None and p["t"] - last_in_order > RTO_S:
                    quick_from = acks
                last_in_order, rcv_nxt = p["t"], p["seq"] + p["len"]
            pending.append(p)
            last_data = p["t"]
            continue
        if p["len"] > 0:          # a request: tcp_event_data_sent
            if last_in_order is not None and p["t"] - last_in_order < ATO_S:
                pingpong = True
            continue
        kind = _kind(p, pending, last_ack, prev_win, acks - quick_from, mss)
        yield kind, pingpong
        if last_data is not None and p["t"] - last_data >= DELACK_S and p["ack"] > last_ack:
            pingpong = False
        acks += 1
        last_ack, rcv_nxt = max(last_ack, p["ack"]), max(rcv_nxt, p["ack"])
        pending, prev_win = [], p["win"]


def _kind(ack: dict, pending: list[dict], last_ack: int, prev_win: int | None, since_quick: int, mss: int) -> str:
    advanced = ack["ack"] - last_ack
    if advanced <= 0:
        return "dupack"
    if not pending:
        return "no_segment"
    if len(pending) >= 2:
        return "pair"
    seg = pending[0]
    if advanced > seg["len"]:
        return "hole_fill"
    if ack["sack"]:
        return "ofo_pending"
    if seg["len"] < mss:
        return "short"
    if ack["t"] - seg["t"] >= DELACK_S:
        return "delack_timer"
    if prev_win is not None and ack["win"] > prev_win:
        return "window_grew"
    if seg["psh"]:
        return "psh_full"
    if since_quick < QUICKACKS:
        return "quick_after_gap"
    return "other"


def summarize(path: str) -> str:
    flows = read_packets(path)
    mss = max((p["len"] for ps in flows.values() for p in ps if not p["cli"]), default=0)
    counts: collections.Counter = collections.Counter()
    for packets in flows.values():
        counts.update(classify_flow(packets, mss))
    lines = [f"{path}: {len(flows)} connections, MSS {mss}",
             f"  {'class':<16} {'not ping-pong':>14} {'ping-pong':>10}"]
    for c in CLASSES:
        lines.append(f"  {c:<16} {counts[(c, False)]:>14} {counts[(c, True)]:>10}")
    single = sum(counts[(c, pp)] for c in ("window_grew", "psh_full", "quick_after_gap", "other") for pp in (False, True))
    pairs = counts[("pair", False)] + counts[("pair", True)]
    lines.append(f"  in-order full segments acknowledged alone at once: {single}, with others: {pairs}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: ack-rules.py CAPTURE.pcapng [...]", file=sys.stderr)
        return 2
    if shutil.which("tshark") is None:
        print("ack-rules.py: tshark is not installed (bash scripts/install.sh installs it)", file=sys.stderr)
        return 2
    for path in argv:
        try:
            print(summarize(path))
        except (ValueError, OSError) as e:
            print(f"ack-rules.py: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
