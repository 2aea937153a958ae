"""The demo's paragraph is generated from the numbers, not written in advance: feed it
made-up sweeps and check that it reports what they contain."""

import pandas as pd

from incastlab.cli.demo import collapse_onset, explain

LABELS = {"fast08": "default", "big_buffer": "bigger buffer", "rto_200us": "RTOmin 200us"}
SERVERS = [1, 2, 4, 8, 16, 32, 64]


def frame(goodputs, timeouts=None):
    n = len(goodputs)
    return pd.DataFrame({
        "servers": SERVERS[:n], "goodput_mbps": goodputs, "blocks": [100] * n,
        "timeouts": timeouts or [0] * n, "drops": [10] * n,
    })


def test_onset_is_first_point_below_half_of_one_server():
    assert collapse_onset(frame([900, 880, 440, 100, 50, 40, 30])) == 4
    assert collapse_onset(frame([900, 880, 860, 850, 840, 830, 820])) is None


def test_paragraph_reports_onset_factor_and_fixes():
    frames = {
        "fast08": frame([900, 880, 400, 90, 60, 45, 30], timeouts=[0, 0, 40, 95, 99, 99, 99]),
        "big_buffer": frame([900, 890, 880, 870, 860, 300, 120]),
        "rto_200us": frame([900, 890, 880, 870, 860, 850, 840]),
    }
    text = explain(frames, LABELS, "5s")
    assert "collapses at 4 servers (400 Mbps)" in text
    assert "factor of 30.0" in text                # 900 / 30
    assert "40 retransmission timeouts" in text
    assert "from 4 to 32 servers" in text          # bigger buffer moves the onset
    assert "up to 64 servers" in text              # RTOmin 200us never collapses here
    assert "840 instead of 30 Mbps (28.0x)" in text


def test_paragraph_when_nothing_collapses():
    flat = frame([900, 900, 900, 900, 900, 900, 900])
    text = explain({"fast08": flat, "big_buffer": flat, "rto_200us": flat}, LABELS, "5s")
    assert "no collapse in this range" in text
    assert "at 64 servers (900 without)" in text   # what each fix gives, said once
    assert "instead of" not in text and "absorbs" not in text, "no fix explained where nothing collapsed"


def test_paragraph_compares_a_fix_once_when_the_collapse_is_at_the_last_point():
    frames = {
        "fast08": frame([900, 880, 860, 850, 840, 830, 100], timeouts=[0, 0, 0, 0, 0, 0, 90]),
        "big_buffer": frame([900, 890, 880, 870, 860, 850, 840]),
        "rto_200us": frame([900, 890, 880, 870, 860, 850, 300]),
    }
    text = explain(frames, LABELS, "5s")
    assert "collapses at 64 servers (100 Mbps)" in text
    assert text.count("at 64 servers it delivers 840 Mbps instead of 100 (8.4x)") == 1
    assert "instead of 100 (8.4x), and at 64 servers" not in text  # the same point, not twice
    assert "RTOmin 200 us leaves the onset of the collapse at 64 servers" in text
