"""Unit tests of the monitor's pure parts: counter deltas, timescale math, the verdict
rule, and the parsers of /proc/net and tc JSON (fixtures captured on this kind of machine:
tests/fixtures/monitor/, TCP files from the servers' namespace during an incast run)."""

import dataclasses
import os

import numpy as np
import pytest

from incastlab import _native
from incastlab.errors import UsageError
from incastlab.monitor import procnet, qdisc, record, timescales, verdict
from incastlab.monitor.runner import CounterDeltas

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "monitor")
MS = 1_000_000
S = 1_000_000_000


def fixture(name: str) -> str:
    with open(os.path.join(FIX, name)) as f:
        return f.read()


# -- counters: wrap and reset (never negative) ---------------------------------------

def test_counter_delta_across_64_bit_wrap():
    assert _native.counter_delta(2**64 - 100, 50) == (150, "wrap64")


def test_counter_delta_across_32_bit_wrap():
    assert _native.counter_delta(2**32 - 1000, 24) == (1024, "wrap32")


def test_counter_reset_gives_zero_not_negative():
    assert _native.counter_delta(1_000_000, 10) == (0, "reset")


def test_per_second_tcp_deltas_survive_a_reset():
    d = CounterDeltas()
    assert d.update({"rto_timeouts": 500}) == {"rto_timeouts": None}  # first reading: no interval
    assert d.update({"rto_timeouts": 512}) == {"rto_timeouts": 12}
    assert d.update({"rto_timeouts": 3}) == {"rto_timeouts": 0}  # namespace re-created
    assert d.resets == ["rto_timeouts"]
    assert d.update({"rto_timeouts": 5}) == {"rto_timeouts": 2}


# -- timescale aggregation -----------------------------------------------------------

def steady(rate_bps: float, seconds: float = 1.0, step_ns: int = 100_000):
    n = int(seconds * S // step_ns)
    t_end = step_ns * np.arange(1, n + 1)
    dt = np.full(n, step_ns)
    return t_end, dt, np.full(n, rate_bps * step_ns / S / 8)


def test_steady_traffic_has_ratio_one_at_every_timescale():
    t_end, dt, b = steady(400e6)
    rates = timescales.window_rates(t_end, dt, b, 0, S, [S, 100 * MS, 10 * MS, MS])
    for r in rates:
        assert r.avg_bps == pytest.approx(400e6)
        assert r.ratio == pytest.approx(1.0)


def test_one_ms_burst_shows_at_1ms_and_is_diluted_at_coarser_scales():
    # blog 003 (escript output): idle most of the second, line rate for 1 ms
    t_end, dt, b = steady(0.0)
    b[5000:5010] = 1e9 * 100_000 / S / 8  # 1 Gbit/s during [500 ms, 501 ms)
    r1s, r100, r10, r1 = timescales.window_rates(t_end, dt, b, 0, S, [S, 100 * MS, 10 * MS, MS])
    assert r1s.avg_bps == pytest.approx(1e6)
    assert r1.peak_bps == pytest.approx(1e9)
    assert r10.peak_bps == pytest.approx(1e8)
    assert r100.peak_bps == pytest.approx(1e7)
    assert r1.ratio == pytest.approx(1000)
    assert r1s.ratio == pytest.approx(1.0)


def test_a_long_sampling_gap_cannot_invent_a_peak():
    # one 10 ms interval carrying 1.25 MB (1 Gbit/s over 10 ms): at 1 ms the most we may
    # claim is that average, not 10x it squeezed into one bucket
    t_end = np.array([MS, 11 * MS, 12 * MS])
    dt = np.array([MS, 10 * MS, MS])
    b = np.array([0.0, 1.25e6, 0.0])
    (r1,) = timescales.window_rates(t_end, dt, b, 0, 12 * MS, [MS])
    assert r1.peak_bps == pytest.approx(1e9)


def test_timescale_longer_than_window_is_not_reported():
    t_end, dt, b = steady(1e6, seconds=0.5)
    assert timescales.window_rates(t_end, dt, b, 0, S // 2, [S, MS])[0] is None


def test_idle_window_has_no_ratio():
    t_end, dt, b = steady(0.0)
    (r,) = timescales.window_rates(t_end, dt, b, 0, S, [MS])
    assert r.peak_bps == 0 and r.ratio is None


def test_burst_runs_count_consecutive_buckets_at_threshold():
    t_end, dt, b = steady(0.0)
    per = 1e9 * 100_000 / S / 8
    b[1000:1020] = per  # 2 ms
    b[3000:3030] = per  # 3 ms
    assert timescales.burst_runs(t_end, dt, b, 0, S, MS, 0.7e9) == [2, 3]


def test_counters_refreshed_by_the_driver_only_every_10ms_are_detected():
    n = 10_000
    dt = np.full(n, 100_000)
    nbytes = np.zeros(n)
    nbytes[::100] = 125_000  # one jump every 10 ms
    packets = np.full(n, 5)  # packets flowed all the time
    assert timescales.effective_resolution_ns(dt, nbytes, packets) == 10 * MS


def test_per_packet_counters_are_not_flagged_as_periodic():
    dt = np.full(1000, 100_000)
    assert timescales.effective_resolution_ns(dt, np.full(1000, 1500), np.ones(1000)) is None


# -- the verdict rule ---------------------------------------------------------------------

def facts(peak_1ms, avg, timeouts, drops=0, retrans=0, line=1e9, runs=(2, 3)):
    return verdict.SecondFacts([verdict.DirectionFacts("rx", avg, peak_1ms, list(runs))], line, timeouts, retrans,
                               {"tbf 8001:": drops})


def test_bursts_at_line_rate_with_timeouts_are_incast():
    v = verdict.judge(facts(0.95e9, 0.2e9, timeouts=120, drops=340, retrans=500))
    assert v.level == "incast"
    assert "consistent with incast" in v.evidence
    assert "120 RTO timeouts/s" in v.evidence and "tbf 8001:" in v.evidence and "2-3 ms" in v.evidence


def test_steady_line_rate_with_losses_is_not_incast():
    # a bulk transfer: 1 ms peak is the average, drops and even a timeout happen
    v = verdict.judge(facts(0.95e9, 0.9e9, timeouts=1, drops=5000, retrans=5000))
    assert v.level == "none"


def test_bursts_well_below_line_rate_are_not_microbursts_at_line_rate():
    v = verdict.judge(facts(0.3e9, 0.05e9, timeouts=10))
    assert v.level == "none"


def test_bursts_with_losses_but_no_timeout_are_possible_incast():
    v = verdict.judge(facts(0.95e9, 0.2e9, timeouts=0, drops=100))
    assert v.level == "possible"


def test_unreadable_timeouts_make_bursts_only_possible_incast():
    v = verdict.judge(facts(0.95e9, 0.2e9, timeouts=None))
    assert v.level == "possible" and "unreadable" in v.evidence


def test_unknown_line_rate_uses_ratio_and_a_floor():
    assert verdict.judge(facts(0.5e9, 0.1e9, timeouts=3, line=None)).level == "incast"
    assert verdict.judge(facts(5e6, 1e6, timeouts=3, line=None)).level == "none"


def test_retransmissions_all_dsacked_as_spurious_are_not_loss():
    # measured on lo (4-server read, CPU-starved receiver): 45 retransmitted segments, all
    # tail loss probes of segments that had arrived, 45 D-SACKed; no drop, no timeout
    spurious = dataclasses.replace(facts(11e9, 2e9, timeouts=0, retrans=45, line=None), spurious_retrans=45)
    v = verdict.judge(spurious)
    assert v.level == "none" and "45 retransmitted segments/s (45 of them spurious, D-SACKed)" in v.evidence
    # some were real losses: possible incast, as before
    assert verdict.judge(dataclasses.replace(spurious, spurious_retrans=10)).level == "possible"
    # D-SACKs of the previous second's retransmissions do not make this second's spurious count exceed it
    late = verdict.judge(dataclasses.replace(spurious, retrans_segs=3))
    assert "3 retransmitted segments/s (3 of them spurious" in late.evidence


def test_idle_second_is_no_sign_of_incast():
    v = verdict.judge(facts(0.0, 0.0, timeouts=0, runs=()))
    assert v.level == "none" and v.evidence == "no sign of incast"


# -- /proc/net parsing ----------------------------------------------------------------------

def test_tcp_counters_from_fixture_files():
    got = procnet.tcp_counters(fixture("proc_net_snmp.txt"), fixture("proc_net_netstat.txt"))
    # values read by hand from the fixture files
    assert got["retrans_segs"] == 147376
    assert got["rto_timeouts"] == 303
    assert got["fast_retrans"] == 140528
    assert got["listen_drops"] == 0
    assert got["spurious_rtos"] == 0
    assert got["dsack_recv_segs"] == 459
    assert set(got) == set(procnet.TCP_COUNTERS)


def test_counter_missing_from_an_older_kernel_is_none():
    snmp = "Tcp: RtoAlgorithm RetransSegs\nTcp: 1 42\n"
    netstat = "TcpExt: TCPTimeouts\nTcpExt: 7\n"
    got = procnet.tcp_counters(snmp, netstat)
    assert got["retrans_segs"] == 42 and got["rto_timeouts"] == 7 and got["spurious_rtx_host_queues"] is None


@pytest.mark.parametrize("text", [
    "Tcp: A B\n",  # header without values
    "Tcp: A B\nUdp: 1 2\n",  # values of another group
    "Tcp: A B\nTcp: 1\n",  # count mismatch
    "Tcp: A\nTcp: x\n",  # not a number
])
def test_malformed_proc_net_is_refused(text):
    with pytest.raises(procnet.ProcNetFormatError):
        procnet.parse_proc_net(text)


def test_local_tcp_counters_are_readable_unprivileged():
    counters, unavailable = procnet.read_tcp_counters([None])
    assert unavailable == {}
    assert counters["retrans_segs"] is not None


# -- tc JSON parsing ------------------------------------------------------------------------

def test_tbf_stats_from_fixture():
    (q,) = qdisc.parse_tc_json(fixture("tc_qdisc_tbf.json"))
    assert (q.kind, q.handle, q.drops, q.overlimits) == ("tbf", "8001:", 146911, 835291)
    assert q.name == "tbf 8001:"


def test_pfifo_fast_fixture_has_no_drops():
    (q,) = qdisc.parse_tc_json(fixture("tc_qdisc_pfifo_fast.json"))
    assert q.kind == "pfifo_fast" and q.drops == 0


@pytest.mark.parametrize("text", ["not json", '{"kind": "tbf"}', '[{"handle": "1:"}]'])
def test_garbled_tc_json_is_refused(text):
    with pytest.raises(ValueError):
        qdisc.parse_tc_json(text)


# -- recording ------------------------------------------------------------------------------

@pytest.mark.parametrize("ext", [".parquet", ".csv"])
def test_recording_round_trips(tmp_path, ext):
    path = str(tmp_path / f"r{ext}")
    rec = record.Recorder(path)
    rec.write([0.0001, 0.0002], [0.0001, 0.0001], [1500, 0], [0, 66], [1, 0], [0, 1])
    assert not os.path.exists(path)  # only the .partial until closed
    rec.close()
    df = record.read(path)
    assert list(df["rx_bytes"]) == [1500, 0] and list(df["tx_packets"]) == [0, 1]


def test_recording_refuses_unknown_extension(tmp_path):
    with pytest.raises(UsageError, match="--record"):
        record.check_path(str(tmp_path / "r.txt"))


# --- fan-in: the receiver's TCP senders ------------------------------------------------

# Recorded in a private namespace with tests/monitor_support/record_sockets.py (a reading
# every 0.5 s) while workload.py served 127.0.0.1-4:5201 and a 1.2 s `read` of 256 KiB SRUs
# ran: 1344 blocks. Readings 1-2 see the connections live, both ends of each (the servers'
# sockets received the 8-byte requests), reading 3 only their final counts from the destroy
# broadcast, the read having closed them.
LO_READ_BLOCKS, LO_SRU = 1344, 256 * 1024
LO_SERVERS = {f"127.0.0.{i}:5201" for i in range(1, 5)}


def lo_readings() -> list[list]:
    import json

    from incastlab.monitor.senders import TcpSocket

    rec = json.loads(fixture("tcp_sockets_lo_read.json"))
    return [[TcpSocket(*t) for t in r["sockets"]] for r in rec["readings"]]


def on_lo(ip: str) -> bool:
    # what `ip route get` answers on that namespace: local peers are routed through lo
    return ip.startswith("127.")


def test_loopback_read_is_one_sender_per_connection_the_server_end():
    from incastlab.monitor.senders import SenderCounter

    base, *rest = lo_readings()
    c = SenderCounter(on_lo)
    c.prime(base)
    per_reading = [c.update(r) for r in rest]
    assert [len(d) for d in per_reading] == [4, 4, 4, 0, 0, 0]
    total: dict[str, int] = {}
    for deliveries in per_reading:
        for d in deliveries:
            assert d.sender in LO_SERVERS and d.receiver.startswith("127.0.0.1:"), d
            total[d.sender] = total.get(d.sender, 0) + d.bytes
    # every SRU of every block, plus the FIN that advances tcpi_bytes_received by one
    assert total == {s: LO_READ_BLOCKS * LO_SRU + 1 for s in LO_SERVERS}


def test_a_read_that_closed_within_the_second_is_counted_from_its_final_counts():
    # issue 11: a second that holds the whole read; at its end no connection is alive
    from incastlab.monitor.senders import SenderCounter

    readings = lo_readings()
    c = SenderCounter(on_lo)
    c.prime(readings[0])
    got = c.update(readings[3])
    assert sorted(d.sender for d in got) == sorted(LO_SERVERS)
    assert all(d.bytes == LO_READ_BLOCKS * LO_SRU + 1 for d in got)
    # the snapshot the monitor used to take (live connections only) has nothing to show
    live_only = SenderCounter(on_lo)
    live_only.prime(readings[0])
    assert live_only.update([s for s in readings[3] if not s.closed]) == []


def test_another_interface_does_not_count_connections_between_local_sockets():
    from incastlab.monitor.senders import SenderCounter, TcpSocket

    remote = TcpSocket(7, "198.18.60.2", 40000, "198.18.61.2", 5701, 262144, 180)
    base, *rest = lo_readings()
    c = SenderCounter(lambda ip: ip.startswith("198.18.61."))  # routed through the watched NIC
    c.prime(base)
    assert [d.sender for d in c.update(rest[0] + [remote])] == ["198.18.61.2:5701"]
    assert c.update(rest[1] + [remote]) == []  # it received nothing more


def test_a_socket_dumped_live_then_freed_in_the_same_reading_counts_once():
    from incastlab.monitor.senders import SenderCounter, TcpSocket

    live = TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 1000, 2)
    freed = TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 5001, 6, closed=True)
    c = SenderCounter(lambda ip: True)
    c.prime([])
    assert [(d.sender, d.bytes) for d in c.update([live, freed])] == [("10.0.0.2:80", 5001)]
    assert c.last == {}  # a freed socket is forgotten


def test_a_socket_that_left_the_dump_before_its_destroy_message_came_counts_once():
    # the kernel unhashes a closing socket before its destroy message is built and read: a
    # reading in between sees it in neither list (a CI failure: 185 blocks counted as 364)
    from incastlab.monitor.senders import SenderCounter, TcpSocket

    now = [0.0]
    live = TcpSocket(1, "127.0.0.1", 40000, "127.0.0.2", 5201, 1000, 2)
    freed = TcpSocket(1, "127.0.0.1", 40000, "127.0.0.2", 5201, 5001, 6, closed=True)
    c = SenderCounter(lambda ip: True, clock=lambda: now[0])
    c.prime([])
    assert [d.bytes for d in c.update([live])] == [1000]
    now[0] = 0.01
    assert c.update([]) == []  # unhashed, its destroy message not in yet
    now[0] = 0.02
    assert [(d.sender, d.bytes) for d in c.update([freed])] == [("127.0.0.2:5201", 4001)]
    assert c.last == {} and c.baselines.vanished == {}


def test_a_vanished_socket_is_forgotten_after_the_ttl():
    # its destroy message was dropped (an overrun): nothing is kept for it for ever
    from incastlab.monitor.senders import VANISHED_TTL_S, SenderCounter, TcpSocket

    now = [0.0]
    c = SenderCounter(lambda ip: True, clock=lambda: now[0])
    c.prime([TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 1000, 2)])
    c.update([])
    assert set(c.baselines.vanished) == {1}
    now[0] = VANISHED_TTL_S
    c.update([])
    assert c.baselines.vanished == {}


def test_retransmissions_of_a_socket_that_left_the_dump_before_its_destroy_message_count_once():
    from incastlab.monitor import flows
    from incastlab.monitor.senders import SenderCounter, TcpSocket

    class Watch:
        def __init__(self):
            self.counter = SenderCounter(lambda ip: True)
            self.readings = [[TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 1000, 2, total_retrans=0)],
                             [TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 2000, 3, total_retrans=3)],
                             [],
                             [TcpSocket(1, "10.0.0.1", 40000, "10.0.0.2", 80, 2001, 3, closed=True, total_retrans=4)]]

        def read(self):
            return self.readings.pop(0)

    p = flows.FlowPoller(Watch())
    assert [p.poll().retrans for _ in range(4)] == [0, 3, 0, 1]


def test_a_bare_fin_or_ack_is_not_data_and_a_wrapped_segment_count_is():
    from incastlab.monitor.senders import SenderCounter, TcpSocket

    c = SenderCounter(lambda ip: True)
    c.prime([TcpSocket(1, "::1", 5201, "::1", 40000, 100, 2**32 - 1)])
    # the FIN advanced bytes_received by one but carried no payload segment
    assert c.update([TcpSocket(1, "::1", 5201, "::1", 40000, 101, 2**32 - 1)]) == []
    got = c.update([TcpSocket(1, "::1", 5201, "::1", 40000, 1601, 0)])  # tcpi_data_segs_in is a u32
    assert [(d.sender, d.bytes) for d in got] == [("[::1]:40000", 1500)]


def test_route_cache_asks_once_per_peer_and_treats_no_route_as_elsewhere():
    import socket

    from incastlab.monitor.senders import RouteCache

    asked = []

    def lookup(ip):
        asked.append(ip)
        if ip == "203.0.113.9":
            raise OSError("Network is unreachable")
        return socket.if_nametoindex("lo") if ip.startswith("127.") else 999_999

    r = RouteCache("lo", lookup)
    assert [r("127.0.0.2"), r("127.0.0.2"), r("198.18.0.1"), r("203.0.113.9")] == [True, True, False, False]
    assert asked == ["127.0.0.2", "198.18.0.1", "203.0.113.9"]


def test_one_sender_stalling_on_its_own_timeouts_is_not_incast():
    # a bulk flow that lost packets: line-rate stretches between RTO stalls, 4 RTOs in the
    # second (measured in the e2e test before this rule: judged "incast")
    from incastlab.monitor import verdict
    bursty = verdict.DirectionFacts("rx", 149e6, 547e6, [26, 110])
    one = verdict.judge(verdict.SecondFacts([bursty], 500e6, 4, 1637, {"tbf": 1444}, senders=1))
    many = verdict.judge(verdict.SecondFacts([bursty], 500e6, 4, 1637, {"tbf": 1444}, senders=16))
    unknown = verdict.judge(verdict.SecondFacts([bursty], 500e6, 4, 1637, {"tbf": 1444}))
    assert one.level == "none" and "one sender" in one.evidence
    assert many.level == "incast" and "16 TCP senders" in many.evidence
    assert unknown.level == "incast"


def test_quiet_second_with_a_sender_count_reads_cleanly():
    # issue 11: the evidence read "no sign of incast (; 0 TCP senders)"
    f = dataclasses.replace(facts(0.0, 0.0, timeouts=0), senders=0)
    assert str(verdict.judge(f).evidence) == "no sign of incast (0 TCP senders)"


def test_plot_legend_rounds_a_measured_interval():
    # issue 11: the monitor plot's legend read "0.0999865 ms"
    from incastlab.monitor.plot import _scale_label

    assert [_scale_label(s) for s in (0.0000999865, 0.001, 0.1, 1.0)] == ["100 us", "1 ms", "100 ms", "1 s"]


def test_loopback_is_recognised_by_its_flags():
    # its rx and tx are one counter (drivers/net/loopback.c): the verdict judges it once
    from incastlab.monitor.runner import is_loopback

    assert is_loopback("lo") and not is_loopback("ilmon-no-such-if")
