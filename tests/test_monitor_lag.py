"""The monitor's loop on a host too loaded to judge a second within a second (issue 26).

Measured on this machine at load 12-17 (`scripts/monitor-busy-host.py`): each second took
1.5-15 s to judge, the drains then reached seconds past the window being judged, and from
the fifth second on every window read 0 bytes while the TCP counters showed a bulk flow
delivering 150-300 Mbit/s: the loop carried only the previous drain along. A fake sampler
stands for that host here: its drains arrive late and cover several seconds at once.
"""

from __future__ import annotations

from incastlab.monitor import runner

NS = 1_000_000_000
STEP = 100_000  # 100 us readings
BYTES = 1250  # per reading: 100 Mbit/s


class LateSampler:
    """Readings every 100 us of a steady 100 Mbit/s; the first drain returns 1.2 s, every
    later one 2.5 s at once (the loop is behind by seconds)."""

    def __init__(self, t0: int):
        self.t = t0
        self.calls = 0

    def drain(self) -> dict:
        self.calls += 1
        n = int((1.2 if self.calls == 1 else 2.5) * NS // STEP)
        ends = [self.t + STEP * (i + 1) for i in range(n)]
        self.t = ends[-1]
        z = [0] * n
        return {"t_end_ns": ends, "dt_ns": [STEP] * n, "rx_bytes": [BYTES] * n, "tx_bytes": z,
                "rx_packets": [1] * n, "tx_packets": z, "missed": 0, "uncertain": 0, "wraps": 0, "resets": 0,
                "realtime": False}

    def stop(self) -> None:
        pass


def test_a_loop_that_fell_behind_still_reads_every_window(monkeypatch):
    m = runner.Monitor(runner.MonitorConfig(iface="fake0", duration_ns=6 * NS, line_rate_bps=1e9))
    t0 = runner.time.monotonic_ns()
    fake = LateSampler(t0)
    monkeypatch.setattr(m, "_open_sampler", lambda: fake)
    monkeypatch.setattr(m, "_read_tcp", lambda: {})
    monkeypatch.setattr(m, "_read_qdiscs", lambda: {})
    monkeypatch.setattr(m, "_watch_senders", lambda: None)
    monkeypatch.setattr(m, "_start_counter_clock", lambda ends: None)  # counters: the next test
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)  # behind: no window waits
    seconds: list[dict] = []
    m.run(seconds.append)
    assert len(seconds) == 6
    # every window holds 10,000 readings of 1250 B: 100 Mbit/s (the loop before, carrying
    # only the previous drain: 100, 100, 100, 30, 0, 0)
    for s in seconds:
        assert abs(s["rx"]["avg_mbps"] - 100.0) < 0.5, [x["rx"]["avg_mbps"] for x in seconds]
    assert all("lag_s" in s for s in seconds)


class ReadAtEnds:
    """The counter thread's readings, known per window end: the host's RTO count reached
    10 x k at the end of window k (10 timeouts a second)."""

    def __init__(self, ends: list[int]):
        self.ends = ends

    def at(self, end: int, timeout_s: float):
        k = self.ends.index(end) + 1
        return end + 2_000_000, ({"rto_timeouts": 10 * k}, {"tbf.drops": 100 * k})

    def stop(self) -> None:
        pass


def test_a_late_loop_gives_each_second_the_timeouts_counted_in_it(monkeypatch):
    # Before: the counters were read when a second was judged; a loop 2.5 s behind gave one
    # second all the timeouts since the second judged before it and the next ones none.
    m = runner.Monitor(runner.MonitorConfig(iface="fake0", duration_ns=6 * NS, line_rate_bps=1e9))
    fake = LateSampler(runner.time.monotonic_ns())
    monkeypatch.setattr(m, "_open_sampler", lambda: fake)
    monkeypatch.setattr(m, "_read_counters", lambda: ({"rto_timeouts": 0}, {"tbf.drops": 0}))
    monkeypatch.setattr(m, "_watch_senders", lambda: None)
    clocks = []
    monkeypatch.setattr(m, "_start_counter_clock", lambda ends: clocks.append(ReadAtEnds(ends)) or clocks[-1])
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    seconds: list[dict] = []
    m.run(seconds.append)
    # one clock, for the six windows' ends, one second apart
    assert len(clocks) == 1 and len(clocks[0].ends) == 6
    assert {b - a for a, b in zip(clocks[0].ends, clocks[0].ends[1:])} == {NS}
    assert [s["tcp"]["rto_timeouts"] for s in seconds] == [10] * 6
    assert [s["qdisc_drops"]["tbf"] for s in seconds] == [100] * 6
    assert [s["counters_late_s"] for s in seconds] == [0.002] * 6


def test_the_counter_clock_reads_at_each_end_and_a_late_wake_up_serves_every_end_it_missed():
    from incastlab.monitor.counter_clock import CounterClock

    now = [0]
    reads = []

    def read():
        reads.append(now[0])
        return now[0]

    c = CounterClock(read, [10, 20, 30, 40], clock=lambda: now[0])
    assert c.step() and reads == []  # before the first end: nothing read
    now[0] = 11
    assert c.step() and reads == [11]
    now[0] = 35  # asleep through 20 and 30
    assert c.step() and reads == [11, 35]
    assert c.at(10, 0) == (11, 11)
    assert c.at(20, 0) == (35, 35) and c.at(30, 0) == (35, 35)  # no increase in 20, all in 30
    assert c.at(40, 0) is None  # not yet read
    now[0] = 40
    assert not c.step() and c.at(40, 0) == (40, 40)  # the last end: the clock is done
    assert c.at(10, 0) is None  # each end is given out once


def test_the_loop_reads_the_counters_itself_when_the_clock_does_not_answer(monkeypatch):
    m = runner.Monitor(runner.MonitorConfig(iface="fake0"))
    monkeypatch.setattr(m, "_read_counters", lambda: ({"rto_timeouts": 5}, {}))

    class Silent:
        stopped = False

        def at(self, end, timeout_s):
            return None

        def stop(self):
            self.stopped = True

    m.counter_clock = silent = Silent()
    t = runner.time.monotonic_ns()
    read_at, (tcp, qd) = m._counters_at(t)
    assert tcp == {"rto_timeouts": 5} and read_at >= t
    # from then on the loop reads itself, and says so
    assert silent.stopped and m.counter_clock is None
    assert "counters at each second's end" in m.unavailable


def test_held_readings_are_trimmed_to_the_next_windows_context():
    held = {"t_end_ns": [1, 5, 9], "dt_ns": [1, 4, 4], "rx_bytes": [10, 20, 30]}
    assert runner._readings_after(held, 5) == {"t_end_ns": [9], "dt_ns": [4], "rx_bytes": [30]}
