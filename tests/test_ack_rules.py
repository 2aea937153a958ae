"""scripts/ack-rules.py's classification on a hand-made connection whose answers are
counted by hand (reading a capture needs tshark; the rules do not)."""

import collections

from script_support import load_script

MSS = 1448


def load():
    return load_script("ack-rules")


def data(t, seq, length=MSS, psh=False):
    return dict(t=t, cli=False, psh=psh, seq=seq, ack=25, len=length, win=64, sack=False)


def ack(t, ackno, win, sack=False):
    return dict(t=t, cli=True, psh=False, seq=25, ack=ackno, len=0, win=win, sack=sack)


def request(t):
    return dict(t=t, cli=True, psh=True, seq=1, ack=1, len=24, win=63, sack=False)


def test_each_ack_is_named_by_the_rule_that_sent_it_and_ping_pong_is_tracked():
    seq = lambda k: 1 + k * MSS  # segment k's first byte
    packets = [
        request(0.0),                                           # no data yet: not ping-pong
        data(0.001, seq(0)), ack(0.00102, seq(1), 66),          # within 16 ACKs of the first data
    ]
    # 16 more ACKs of two segments each use up the quick budget (ACKs 1-16)
    t, k = 0.002, 1
    for _ in range(16):
        packets += [data(t, seq(k)), data(t + 0.0001, seq(k + 1)), ack(t + 0.00012, seq(k + 2), 66)]
        t, k = t + 0.001, k + 2
    packets += [data(t, seq(k)), ack(t + 0.00002, seq(k + 1), 69)]                   # window grew
    k += 1
    packets += [data(t + 0.001, seq(k), psh=True), ack(t + 0.00102, seq(k + 1), 69)]  # full segment with PSH
    k += 1
    packets += [data(t + 0.002, seq(k + 1)), ack(t + 0.00202, seq(k), 69, sack=True)]  # out of order: dupack
    packets += [data(t + 0.003, seq(k)), ack(t + 0.00302, seq(k + 2), 69)]            # fills the hole
    k += 2
    packets += [data(t + 0.004, seq(k), length=80), ack(t + 0.00402, seq(k) + 80, 69)]  # short
    packets += [request(t + 0.010)]                              # 6 ms after data: enters ping-pong
    packets += [data(t + 0.011, seq(k) + 80), ack(t + 0.051, seq(k + 1) + 80, 69)]    # delayed-ACK timer: leaves it
    packets += [data(t + 0.052, seq(k + 1) + 80), ack(t + 0.05202, seq(k + 2) + 80, 69)]  # other, not ping-pong
    got = collections.Counter(load().classify_flow(packets, MSS))
    assert got == {
        ("quick_after_gap", False): 1, ("pair", False): 16, ("window_grew", False): 1, ("psh_full", False): 1,
        ("dupack", False): 1, ("hole_fill", False): 1, ("short", False): 1, ("delack_timer", True): 1,
        ("other", False): 1,
    }


def test_a_gap_longer_than_the_rto_re_arms_the_quick_acks():
    mod = load()
    packets = [request(0.0), data(0.001, 1), ack(0.00102, 1 + MSS, 66)]
    t, seq = 0.002, 1 + MSS
    for _ in range(16):  # use up the connection's first 16
        packets += [data(t, seq), data(t + 0.0001, seq + MSS), ack(t + 0.00012, seq + 2 * MSS, 66)]
        t, seq = t + 0.001, seq + 2 * MSS
    packets += [data(t, seq), ack(t + 0.00002, seq + MSS, 66)]              # budget spent: other
    packets += [data(t + 0.3, seq + MSS), ack(t + 0.30002, seq + 2 * MSS, 66)]  # 300 ms later: quick again
    kinds = [k for k, _ in mod.classify_flow(packets, MSS)]
    assert kinds[-2:] == ["other", "quick_after_gap"]


def test_an_unreadable_capture_is_one_line_and_status_2(tmp_path, capsys):
    bad = tmp_path / "not.pcapng"
    bad.write_text("not a capture\n")
    assert load().main([str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not.pcapng" in err[0]
