"""The testbed's capture as a per-event trace (``incastlab.testbed.capture``) and the trace
diff's ``--block`` (``incastlab.peers.tracediff``), on frames and traces written by hand (no
root; the end-to-end capture is in test_testbed_root.py)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from incastlab.errors import UsageError
from incastlab.peers import tracediff
from incastlab.testbed import capture
from incastlab.testbed.capture import Frame
from incastlab.testbed.names import CLIENT_ADDR, Names, server_addr

NAMES = Names("iltbt")
S1 = server_addr(1)
ISN_S, ISN_C = 4_000_000_000, 1000  # a server ISN near 2^32: relative numbers wrap correctly


def us(x: float) -> int:
    return round(x * 1000)  # in ns


def one_server_frames() -> dict[str, list[Frame]]:
    """Server 1's handshake, a request, three 1448-byte segments of which the switch drops the
    second, the ACKs, and the second's retransmission, at the three capture points."""
    pts = capture.points(NAMES, 1)
    dev = {p.role: p.dev for p in pts}
    data = lambda t, ip_id, k: Frame(t, S1, CLIENT_ADDR, ip_id, (ISN_S + 1 + 1448 * k) % 2**32, 1448, ISN_C + 25, False)
    ack = lambda t, k, n=0: Frame(t, CLIENT_ADDR, S1, 7, ISN_C + 1, n, (ISN_S + 1 + 1448 * k) % 2**32, False)
    server = [
        Frame(0, CLIENT_ADDR, S1, 1, ISN_C, 0, 0, True),                     # SYN
        Frame(us(10), S1, CLIENT_ADDR, 0, ISN_S, 0, ISN_C + 1, True),         # SYN-ACK
        ack(us(50), 0, 24),                                                    # the request: 24 bytes
        data(us(60), 11, 0), data(us(63), 12, 1), data(us(66), 13, 2),
        ack(us(300), 1), ack(us(420), 1),                                      # one ACK, one duplicate
        data(us(430), 14, 1),                                                  # the retransmission
        ack(us(600), 3),
    ]
    ingress = [data(us(61), 11, 0), data(us(64), 12, 1), data(us(67), 13, 2), data(us(431), 14, 1)]
    egress = [data(us(62), 11, 0), data(us(190), 13, 2), data(us(432), 14, 1)]
    # both bridge ports also carry the handshake and the client's frames (the same frames:
    # a frame is known by its headers, not its time)
    passing = [f for f in server if f.syn or f.src == CLIENT_ADDR]
    return {dev["server"]: server, dev["ingress"]: ingress + passing, dev["egress"]: egress + passing}


def test_a_captured_point_becomes_the_trace_the_simulator_writes():
    trace = capture.build_trace(one_server_frames(), capture.points(NAMES, 1), 1)
    rows = [(kind, flow, a, b, c) for _, kind, flow, a, b, c in sorted(trace.rows, key=lambda r: r[0])]
    assert rows == [
        ("ack", 0, 1, 24, None),                                   # the request, acknowledging nothing yet
        ("tx", 0, 1, 1448, None), ("enq", 0, 1, 1448, 1), ("deq", 0, 1, 1448, 0),
        ("tx", 0, 1449, 1448, None), ("drop", 0, 1449, 1448, 0),   # never left tbf: dropped on arrival
        ("tx", 0, 2897, 1448, None), ("enq", 0, 2897, 1448, 1), ("deq", 0, 2897, 1448, 0),
        ("ack", 0, 1449, 0, None), ("ack", 0, 1449, 0, None),
        ("rtx", 0, 1449, 1448, None), ("enq", 0, 1449, 1448, 1), ("deq", 0, 1449, 1448, 0),
        ("ack", 0, 4345, 0, None),
    ]
    assert trace.unmatched_egress == 0
    # written as tracediff reads it, times from the capture's first frame
    lines = trace.lines()
    assert lines[0] == "0.000050000,ack,0,1,24"
    events = [tracediff.parse_line(l) for l in lines]
    assert [e.kind for e in events].count("drop") == 1


def test_frames_a_capture_missed_are_found_from_the_points_after_it():
    # dumpcap loses the frames of its last unretired ring block when stopped (capture.SETTLE_S):
    # a frame a later point saw and an earlier did not is the capture's loss, not the network's
    pts = capture.points(NAMES, 1)
    dev = {p.role: p.dev for p in pts}
    assert capture.missed_frames(one_server_frames(), pts) == {}, "a drop at tbf is no miss"
    frames = one_server_frames()
    frames[dev["ingress"]] = frames[dev["ingress"]][:-1]          # the retransmission left tbf unseen
    assert capture.missed_frames(frames, pts) == {dev["ingress"]: 1}
    frames = one_server_frames()
    frames[dev["server"]] = [f for f in frames[dev["server"]] if f.ip_id != 11]  # the first segment
    assert capture.missed_frames(frames, pts) == {dev["server"]: 1}


def test_a_servers_frame_without_payload_dropped_at_tbf_is_counted_apart():
    # tbf's counter counts every frame it drops; the trace's drop events are data segments
    frames = one_server_frames()
    dev = {p.role: p.dev for p in capture.points(NAMES, 1)}
    fin = Frame(us(700), S1, CLIENT_ADDR, 15, (ISN_S + 1 + 1448 * 3) % 2**32, 0, ISN_C + 25, False)
    frames[dev["server"]].append(fin)
    frames[dev["ingress"]].append(fin)                             # reached tbf, never left it
    trace = capture.build_trace(frames, capture.points(NAMES, 1), 1)
    assert trace.control_drops == 1 and [r[1] for r in trace.rows].count("drop") == 1


def test_a_capture_without_the_handshake_is_refused():
    frames = one_server_frames()
    server = capture.points(NAMES, 1)[2].dev
    frames[server] = [f for f in frames[server] if not f.syn]
    with pytest.raises(Exception, match="no SYN-ACK"):
        capture.build_trace(frames, capture.points(NAMES, 1), 1)


def test_tcp_probe_lines_become_cwnd_ssthresh_and_state_changes():
    trace = capture.build_trace(one_server_frames(), capture.points(NAMES, 1), 1)
    text = "\n".join([
        f" python-1 [000] ..s1. 1795686051.000100: tcp_probe: family=AF_INET src={S1}:5701 dest={CLIENT_ADDR}:4000 "
        "mark=0x0 data_len=0 snd_nxt=0x1 snd_una=0x1 snd_cwnd=10 ssthresh=2147483647 snd_wnd=1 srtt=8 rcv_wnd=1",
        f" python-1 [000] ..s1. 1795686051.000200: tcp_probe: family=AF_INET src={S1}:5701 dest={CLIENT_ADDR}:4000 "
        "mark=0x0 data_len=0 snd_nxt=0x1 snd_una=0x1 snd_cwnd=10 ssthresh=2147483647 snd_wnd=1 srtt=8 rcv_wnd=1",
        f" python-1 [000] ..s1. 1795686051.000300: tcp_cong_state_set: family=AF_INET sport=5701 dport=4000 "
        f"saddr={S1} daddr={CLIENT_ADDR} saddrv6=::1 daddrv6=::1 cong_state=3",
        f" python-1 [000] ..s1. 1795686051.000400: tcp_probe: family=AF_INET src={S1}:5701 dest={CLIENT_ADDR}:4000 "
        "mark=0x0 data_len=0 snd_nxt=0x1 snd_una=0x1 snd_cwnd=5 ssthresh=5 snd_wnd=1 srtt=8 rcv_wnd=1",
    ])
    capture.add_probe_events(trace, text, 1)
    probe = [(kind, a, b) for _, kind, flow, a, b, c in sorted(trace.rows, key=lambda r: r[0])
             if kind in ("cwnd", "ssth", "state")]
    # segments x the segment size the trace saw; an unset ssthresh as the simulator writes it
    assert probe == [("cwnd", 14480, 0), ("ssth", 1 << 30, 0), ("state", 0, 3), ("cwnd", 7240, 0), ("ssth", 7240, 0)]


def pcapng_with_isb(drops: int) -> bytes:
    """A section header, an interface and its statistics block with isb_ifdrop = `drops`."""
    shb = struct.pack("<IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28)
    idb = struct.pack("<IIHHI", 1, 20, 1, 0, 128) + struct.pack("<I", 20)
    opts = struct.pack("<HHQ", 5, 8, drops) + struct.pack("<HH", 0, 0)
    body = struct.pack("<III", 0, 0, 0) + opts
    isb = struct.pack("<II", 5, 8 + len(body) + 4) + body + struct.pack("<I", 8 + len(body) + 4)
    return shb + idb + isb


def test_the_drops_a_capture_lost_are_read_from_its_statistics(tmp_path):
    for drops in (0, 1019):
        f = tmp_path / f"{drops}.pcapng"
        f.write_bytes(pcapng_with_isb(drops))
        assert capture.interface_drops(f) == drops


# --- tracediff --block ---------------------------------------------------------------------

def two_block_trace(path: Path, offset: int, header: int = 0) -> Path:
    """Two flows, two blocks of 2896 bytes each; block 1 of flow f starts at stream byte
    `offset` + 2896 + `header` (a testbed's response headers and stats shift its streams)."""
    lines = []
    for blk in (0, 1):
        t = blk * 0.01
        for f in (0, 1):
            start = 1 + offset + blk * (2896 + header)
            lines.append(f"{t + 0.0001 * f:.9f},ack,{f},{start},24")
            lines.append(f"{t + 0.0002 + 0.0001 * f:.9f},tx,{f},{start},1448")
            lines.append(f"{t + 0.0003 + 0.0001 * f:.9f},tx,{f},{start + 1448},1448")
            lines.append(f"{t + 0.0004 + 0.0001 * f:.9f},drop,{f},{start + 1448},1448,4")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_block_is_cut_at_its_requests_and_numbered_from_its_first_byte(tmp_path):
    sim = tracediff.read_trace(two_block_trace(tmp_path / "sim.csv", 0), block=1)
    tb = tracediff.read_trace(two_block_trace(tmp_path / "tb.csv", 24, header=24), block=1)
    assert [(e.kind, e.flow, e.a) for e in sim.data] == [(e.kind, e.flow, e.a) for e in tb.data]
    assert [(e.kind, e.a) for e in sim.data if e.flow == 0] == [("tx", 1), ("tx", 1449), ("drop", 1449)]
    assert sim.counts["ack"] == 2, "block 1's two requests, not block 0's"
    assert tracediff.first_divergence(tracediff.by_flow(sim.data)[0], tracediff.by_flow(tb.data)[0]) is None


def test_a_request_sent_again_does_not_start_a_block(tmp_path):
    # the testbed's client retransmits a request when a whole response is lost (its RTO, no
    # ACK came back): the same acknowledgment number again, 200 ms later. Block 1 must still
    # be the second request's, numbered from its own first byte.
    path = two_block_trace(tmp_path / "t.csv", 24, header=24)
    lines = path.read_text().splitlines()
    lines.insert(4, "0.005000000,ack,0,25,24")  # flow 0's first request, again
    path.write_text("\n".join(lines) + "\n")
    once = tracediff.read_trace(two_block_trace(tmp_path / "once.csv", 24, header=24), block=1)
    again = tracediff.read_trace(path, block=1)
    assert [(e.kind, e.flow, e.a) for e in again.data] == [(e.kind, e.flow, e.a) for e in once.data]
    assert [(e.kind, e.a) for e in again.data if e.flow == 0] == [("tx", 1), ("tx", 1449), ("drop", 1449)]


def test_a_block_the_trace_lacks_is_refused_naming_how_many_it_has(tmp_path):
    path = two_block_trace(tmp_path / "t.csv", 0)
    with pytest.raises(UsageError, match=r"--block: 2 .*0 to 1"):
        tracediff.read_trace(path, block=2)
    assert tracediff.main([str(path), str(path), "--block", "7"]) == 2


# --- whose packets a drop found ------------------------------------------------------------

def test_each_drop_is_classed_by_whose_packets_the_queue_held():
    # flow 0 fills the queue, flow 1's packet is dropped among only flow 0's (OTHERS); flow 0's
    # next among its own and flow 1's (MIXED, after flow 1 got one in); then the queue drains
    # and a drop at an empty queue (NONE, a shaper's bucket can be empty while its queue is),
    # and one of flow 1's behind only its own (OWN)
    ev = lambda t, kind, flow: tracediff.Event(t, kind, flow, 1, 1448, None, 0)
    events = [ev(1, "enq", 0), ev(2, "enq", 0), ev(3, "drop", 1),
              ev(4, "deq", 0), ev(5, "enq", 1), ev(6, "drop", 0),
              ev(7, "deq", 0), ev(8, "deq", 1), ev(9, "drop", 0),
              ev(10, "enq", 1), ev(11, "drop", 1),
              ev(12, "deq", 1), ev(13, "deq", 1), ev(14, "drop", 1)]   # a departure too many: no debt
    found = tracediff.drop_company(events)
    C = tracediff.Company
    assert (found[C.OTHERS], found[C.MIXED], found[C.NONE], found[C.OWN]) == (1, 1, 2, 1)


def test_the_command_compares_one_block_and_says_whose_packets_each_drop_found(tmp_path, capsys):
    sim = two_block_trace(tmp_path / "sim.csv", 0)
    tb = two_block_trace(tmp_path / "tb.csv", 24, header=24)
    assert tracediff.main([str(tb), str(sim), "--block", "1", "--rate", "100Mbps"]) == 0
    out = capsys.readouterr().out
    assert "whose packets the bottleneck held" in out
    # block 1 only: two tx per flow, one drop per flow (block 0's are left out)
    counts = next(l for l in out.splitlines() if l.strip().startswith("drop"))
    assert counts.split()[1:3] == ["2", "2"], counts
    assert "none (dropped at an empty queue)" in out
