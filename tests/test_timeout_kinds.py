"""scripts/timeout-kinds.py on hand-made traces whose answers are counted by hand."""

from script_support import assert_refuses_a_line_that_is_not_an_event, load_script


def load():
    return load_script("timeout-kinds")


def test_each_timeout_is_named_by_what_it_found_lost(tmp_path):
    # flow 0: a block's first flight, both segments dropped, then a probe 9 ms later also
    # dropped, then the RTO: a whole window lost in the first flight, with its probe.
    # flow 1: an ACK of new data, then two segments of which one is delivered: "other".
    # flow 2: in Recovery its retransmission is dropped, then the RTO: a lost retransmission.
    # flow 3: mid-block (an ACK of new data came), both segments dropped, the RTO follows 1
    # ms after the last send, no probe: whole window mid-block, without a probe.
    p = tmp_path / "rto.csv"
    p.write_text("\n".join([
        "0.000000000,ack,0,1,24", "0.000010000,tx,0,1,1448", "0.000010000,tx,0,1449,1448",
        "0.000020000,drop,0,1,1448,5", "0.000020000,drop,0,1449,1448,5",
        "0.009010000,tx,0,2897,1448", "0.009020000,drop,0,2897,1448,5", "0.200000000,state,0,0,4",
        "0.000000000,ack,1,1,24", "0.001000000,ack,1,1449,0", "0.001000000,tx,1,1449,1448",
        "0.001000000,tx,1,2897,1448", "0.001100000,drop,1,1449,1448,5", "0.200000000,state,1,0,4",
        "0.000000000,ack,2,1,24", "0.001000000,state,2,0,3", "0.001000000,rtx,2,1,1448",
        "0.001100000,drop,2,1,1448,5", "0.200000000,state,2,3,4",
        "0.000000000,ack,3,1,24", "0.001000000,ack,3,1449,0", "0.001000000,tx,3,2897,1448",
        "0.001000000,tx,3,4345,1448", "0.001100000,drop,3,2897,1448,5",
        "0.001100000,drop,3,4345,1448,5", "0.002000000,state,3,0,4",
    ]) + "\n")
    assert load().kinds(str(p)) == {"whole_window_first_flight": 1, "whole_window_mid_block": 1, "with_probe": 1,
                                    "lost_retransmission": 1, "other": 1}


def test_a_line_that_is_not_an_event_is_one_line_and_status_2(tmp_path, capsys):
    assert_refuses_a_line_that_is_not_an_event("timeout-kinds", tmp_path, capsys)
