"""scripts/timeout-anatomy.py on a hand-made trace whose answer is known event by event."""

from script_support import load_script


def load():
    return load_script("timeout-anatomy")


# One block of two servers (written as the simulator's trace: no stats exchange at the end).
# Flow 0 answers at once with a burst of 4 and is acknowledged. Flow 1 starts 300 us later,
# all 3 of its segments are dropped, no ACK comes back and its RTO fires (state 0 -> 4).
# Flow 0 then sends 4 more back to back only after two ACKs: the held-back burst.
TRACE = """\
0.000000000,ack,0,1,24
0.000000000,ack,1,1,24
0.000010000,tx,0,1,1448
0.000011000,tx,0,1449,1448
0.000012000,tx,0,2897,1448
0.000013000,tx,0,4345,1448
0.000310000,tx,1,1,1448
0.000311000,tx,1,1449,1448
0.000312000,tx,1,2897,1448
0.000313000,drop,1,1,1448,21
0.000314000,drop,1,1449,1448,21
0.000315000,drop,1,2897,1448,21
0.000400000,ack,0,2897,0
0.000640000,ack,0,5793,0
0.000650000,tx,0,5793,1448
0.000651000,tx,0,7241,1448
0.000652000,tx,0,8689,1448
0.000653000,tx,0,10137,1448
0.210000000,state,1,0,4
0.210001000,rtx,1,1,1448
"""


def test_a_late_server_that_loses_its_whole_window_and_a_held_back_burst(tmp_path):
    trace = tmp_path / "sim-n2.csv"
    trace.write_text(TRACE)
    got = load().anatomy(str(trace))
    assert got["flow_blocks"] == 2
    assert got["start_us_p90"] == 300  # flow 1's first segment, 300 us after flow 0's
    assert got["whole_first_window_lost"] == 1
    assert got["timeouts"] == 1 and got["whole window lost (no ACK in the block)"] == 1
    # bursts: flow 0's two of 4, flow 1's 3 and its lone retransmission: 8 of 12 segments
    assert got["bursts_of_4_or_more"] == 2 and got["segments_in_bursts_of_4_or_more"] == round(8 / 12, 2)
    assert got["of_them_after_2_or_more_acks"] == 1


def test_a_missing_trace_or_a_bad_line_is_one_line_and_status_2(tmp_path, capsys):
    mod = load()
    assert mod.main([str(tmp_path / "absent.csv")]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("0.1,tx,0\n")
    assert mod.main([str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "absent.csv" in err[0] and "bad.csv:1" in err[1]
