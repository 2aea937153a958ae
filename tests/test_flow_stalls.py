"""scripts/flow-stalls.py on a hand-made trace whose answer is known event by event."""

from script_support import load_script


def load():
    return load_script("flow-stalls")


# One block, two servers. Flow 0 enters recovery, its partial ACK at 1.0 ms lets a
# retransmission and a new segment go; the new one is dropped, and the client's delayed ACK of
# the retransmission comes 41 ms later (a 41 ms stall in Recovery ended by an ACK). Flow 1
# sends 3, the last 2 dropped; its probe leaves 5 ms after its ACK (a 5 ms stall in Open ended
# by a send); the probe is lost too and the RTO fires 200 ms later (a stall ended by a timeout).
# A flow with nothing outstanding (flow 1 before its first send) never stalls.
TRACE = """\
0.000000000,ack,0,1,24
0.000000000,ack,1,1,24
0.000010000,tx,0,1,1448
0.000011000,tx,0,1449,1448
0.000012000,tx,0,2897,1448
0.000013000,tx,0,4345,1448
0.000014000,drop,0,1,1448,5
0.000500000,ack,0,1,0
0.000600000,ack,0,1,0
0.000600000,state,0,0,3
0.000601000,rtx,0,1,1448
0.001000000,ack,0,4345,0
0.001001000,rtx,0,4345,1448
0.001002000,tx,0,5793,1448
0.001003000,drop,0,5793,1448,5
0.042000000,ack,0,5793,0
0.042000000,state,0,3,0
0.050000000,tx,1,1,1448
0.050001000,tx,1,1449,1448
0.050002000,tx,1,2897,1448
0.050003000,drop,1,1449,1448,5
0.050004000,drop,1,2897,1448,5
0.050300000,ack,1,1449,0
0.055300000,tx,1,4345,1448
0.055301000,drop,1,4345,1448,5
0.255300000,state,1,0,4
"""


def test_a_recovery_stall_on_the_delayed_ack_and_an_open_stall_ended_by_a_probe_then_a_timeout(tmp_path):
    trace = tmp_path / "sim-n2.csv"
    trace.write_text(TRACE)
    got = load().stalls(str(trace))
    assert got["stalls"] == {
        "state 3, ended by ACK, >= 30 ms": {"n": 1, "flow_s": 0.041},
        "state 0, ended by timeout, >= 30 ms": {"n": 1, "flow_s": 0.2},
        "state 0, ended by send, 3-30 ms": {"n": 1, "flow_s": 0.005},
    }
    assert got["stalled_flow_s"] == 0.246
    # the partial ACK's retransmission and dropped new segment; the exit ACK let nothing go
    assert got["recovery_releases"] == {"rnx": 1, "": 1}


def test_a_missing_trace_or_a_bad_line_is_one_line_and_status_2(tmp_path, capsys):
    mod = load()
    assert mod.main([str(tmp_path / "absent.csv")]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("0.1,tx,0\n")
    assert mod.main([str(bad)]) == 2
    assert mod.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "absent.csv" in err[0] and "bad.csv:1" in err[1] and "usage" in err[2]
