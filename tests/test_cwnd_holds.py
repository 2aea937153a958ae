"""scripts/cwnd-holds.py on hand-made traces whose holds are counted by hand."""

from script_support import assert_refuses_a_line_that_is_not_an_event, load_script
from trace_support import write_trace

MSS = 1448


def load():
    return load_script("cwnd-holds")


def sends(flow: int, start_us: int, n: int, step_us: int = 100) -> list:
    return [(start_us + i * step_us, "tx", flow, 1 + i * MSS, MSS) for i in range(n)]


def test_a_window_held_for_30_ms_while_sending_is_one_hold_of_24_to_40_ms(tmp_path):
    # flow 0: cwnd 5 at 0, 25 sends over 30 ms, cwnd 6 at 30 ms (a hold of 30 ms), then 19
    # sends and cwnd 7 at 32 ms (too few sends: no hold), the same value re-reported (not a
    # change), 20 sends and a state change at 45 ms (a hold of 13 ms). Flow 1: 30 sends and
    # no change after its first cwnd line: a span never closed is not counted
    lines = [(0, "cwnd", 0, 5 * MSS, 0), (0, "cwnd", 1, 4 * MSS, 0)]
    lines += sends(0, 100, 25, 1_100) + [(30_000, "cwnd", 0, 6 * MSS, 0)]
    lines += sends(0, 30_050, 19, 100) + [(32_000, "cwnd", 0, 7 * MSS, 0), (33_000, "cwnd", 0, 7 * MSS, 0)]
    lines += sends(0, 33_100, 20, 500) + [(45_000, "state", 0, 0, 3)]
    lines += sends(1, 100, 30)
    lines.sort(key=lambda x: x[0])
    h = load().holds(write_trace(tmp_path / "t.csv", lines))
    assert h == {"holds": 2, "lt_8": 0, "8_to_24": 1, "24_to_40": 1, "ge_40": 0, "held_s": 0.043}


def test_a_line_that_is_not_an_event_is_one_line_and_status_2(tmp_path, capsys):
    assert_refuses_a_line_that_is_not_an_event("cwnd-holds", tmp_path, capsys)
    assert load().main([]) == 2
