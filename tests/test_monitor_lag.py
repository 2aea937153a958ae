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
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)  # behind: no window waits
    seconds: list[dict] = []
    m.run(seconds.append)
    assert len(seconds) == 6
    # every window holds 10,000 readings of 1250 B: 100 Mbit/s (the loop before, carrying
    # only the previous drain: 100, 100, 100, 30, 0, 0)
    for s in seconds:
        assert abs(s["rx"]["avg_mbps"] - 100.0) < 0.5, [x["rx"]["avg_mbps"] for x in seconds]
    assert all("lag_s" in s for s in seconds)


def test_held_readings_are_trimmed_to_the_next_windows_context():
    held = {"t_end_ns": [1, 5, 9], "dt_ns": [1, 4, 4], "rx_bytes": [10, 20, 30]}
    assert runner._readings_after(held, 5) == {"t_end_ns": [9], "dt_ns": [4], "rx_bytes": [30]}
