"""The connection-serialization model against the worked examples of Osada et al.

Source: ``004_f48ce568b38e0ea9.txt`` (IJCNC 2016), §4.2-§4.4, §5.1 and Appendix A.
The readings of brackets and units are explained in docs/model-serialization.md; the
tests named ``..._rules_out_...`` show that the other readings miss an example.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

import pytest

import incastlab.cli.main as cli_main
from incastlab.errors import UsageError
from incastlab.model import serialization as ser
from incastlab.model.serialization import serialization_model, smallest_sru, sru_thresholds

KIB = 1024  # the paper's "KB" (§3: K = 2^10)
US = 10**6  # picoseconds per microsecond
GBPS = 10**9


def paper(rate_gbps: int, sru_bytes: int, **kw) -> ser.SerializationModel:
    """The paper's setting: BaseRTT 100 us, MSS 1460 B (§4.2, §5.1 Table 1)."""
    return serialization_model(rate_gbps * GBPS, 100 * US, 1460, sru_bytes, **kw)


# --- §4.2: T1, T2 ------------------------------------------------------------------


def test_t1_is_412us_at_1gbps_100us_mss1460_64kb():
    # §4.2: "when V = 1 Gbps, BaseRTT = 100 usec, MSS = 1460 Bytes and S = 64 KBytes, T1 = 412 usec"
    m = paper(1, 64 * KIB)
    assert m.base_bdp_bytes == 12500  # §4.2: "BaseBDP is about 12500 Bytes"
    assert m.m == 5
    assert m.t1_ps == 412 * US  # 4 x 100 us + (9 - 8) x 12 us, exactly


def test_t2_is_360us_at_1gbps_100us_mss1460_64kb():
    # §4.2: "T2 ~ 360 usec". Eq. (5) read as a floor gives exactly 30 packets x 12 us.
    m = paper(1, 64 * KIB)
    assert m.t2_ps == 360 * US


def test_t2_reading_rules_out_ceiling_and_no_rounding():
    # Why Eq. (5)'s bracket is a floor: (65536 - 14 x 1460) / 1460 = 30.89 packets;
    # the ceiling would give 31 x 12 = 372 us, no rounding 370.7 us, neither "~ 360".
    packets = Fraction(64 * KIB - ser.doubling_sum(2, 4) * 1460, 1460)
    assert 30 < packets < 31
    assert 31 * 12 == 372 and float(packets) * 12 > 370


def test_fig3_example_bdp_6_5_packets():
    # §4.2, Fig. 3: BaseBDP_pkt = 6.5 -> m = 4, [BaseBDP_pkt] - 2^(m-2) = 7 - 4 = 3, so T1
    # ends at the third ACK of the fourth BaseRTT. 6.5 x 1500 B at 1 Gbps is 78 us.
    rtt = 78 * US
    m = serialization_model(GBPS, rtt, 1460, 5 * 1460)
    assert m.base_bdp_pkt == 6.5
    assert m.m == 4
    assert m.base_bdp_pkt_ceil - 2 ** (m.m - 2) == 3
    assert m.t1_ps == 3 * rtt + 3 * 12 * US


def test_fig3_example_eq6_fails_with_4_packets_and_holds_with_5():
    # §4.2: with BaseBDP_pkt = 6.5, [S/MSS] = 4 leaves cwnd_pkt at 6 (< 7): undefined;
    # [S/MSS] = 5 reaches the third ACK: defined.
    four = serialization_model(GBPS, 78 * US, 1460, 4 * 1460)
    five = serialization_model(GBPS, 78 * US, 1460, 5 * 1460)
    assert ser.eq6_lhs(4 * 1460, 1460, 4) == 6
    assert not four.eq6_holds and four.t2_ps is None
    assert five.eq6_holds


# --- §4.2: Eq. (6) thresholds -------------------------------------------------------


@pytest.mark.parametrize(
    "rate_gbps, fails_kb, holds_kb",
    [(1, 8, 9), (10, 115, 116)],  # §4.2, last paragraph before Fig. 4
)
def test_eq6_fails_and_holds_where_the_paper_says(rate_gbps, fails_kb, holds_kb):
    assert not paper(rate_gbps, fails_kb * KIB).eq6_holds
    assert paper(rate_gbps, holds_kb * KIB).eq6_holds


def test_eq6_reading_rules_out_kb_as_1000_bytes():
    # With KB = 1000 B, 116 KB is 79.45 packets -> 80, and 80 + 2 < 84: the 10 Gbps example
    # of §4.2 would fail. So the paper's KB is 1024 B (as §3 declares, K = 2^10).
    assert not paper(10, 116_000).eq6_holds


def test_eq6_reading_rules_out_floor_of_s_over_mss():
    # With a floor, 9 KB = 6.31 packets -> 6 and 6 + 2 < 9: the 1 Gbps example would fail.
    assert 9 * KIB // 1460 + 2 < paper(1, 9 * KIB).base_bdp_pkt_ceil


@pytest.mark.parametrize(
    "rate_gbps, below_kb, at_or_above_kb, expected_bytes",
    [(1, 8, 9, 6 * 1460 + 1), (10, 115, 116, 81 * 1460 + 1)],
)
def test_find_threshold_lands_between_the_papers_sizes(rate_gbps, below_kb, at_or_above_kb, expected_bytes):
    # §4.2: the search must find the first byte at which Eq. (6) holds: ceil(S/MSS) + 2
    # reaches [BaseBDP_pkt] (9 -> 7 packets at 1 Gbps; 84 -> 82 packets at 10 Gbps).
    t = sru_thresholds(rate_gbps * GBPS, 100 * US, 1460)
    assert below_kb * KIB < t.eq6_min_sru_bytes <= at_or_above_kb * KIB
    assert t.eq6_min_sru_bytes == expected_bytes
    assert paper(rate_gbps, t.eq6_min_sru_bytes).eq6_holds
    assert not paper(rate_gbps, t.eq6_min_sru_bytes - 1).eq6_holds


def test_find_threshold_of_eq7_is_its_first_byte():
    t = sru_thresholds(GBPS, 100 * US, 1460)
    assert paper(1, t.eq7_min_sru_bytes).eq7_holds
    assert not paper(1, t.eq7_min_sru_bytes - 1).eq7_holds
    assert paper(1, t.eq7_min_sru_bytes).n_min_eq8 == 1  # §4.4: Eq. (7) holds -> n_min = 1


def test_t2_of_eq5_is_negative_just_above_the_eq6_threshold():
    # Documented inconsistency of §4.2: Eq. (6) holds at 9 KB (1 Gbps) and the paper says T2
    # "is also defined", but Eq. (5) subtracts the 14 slow-start packets of a 7-packet SRU:
    # (6 - 14) x 12 us = -96 us. The model reports Eq. (5) as written.
    m = paper(1, 9 * KIB)
    assert m.eq6_holds
    assert m.t2_ps == -96 * US


# --- §4.4 Eqs. (7)-(11), §5.1 worked values ------------------------------------------


def test_eq7_is_t2_at_least_twice_t1():
    # §4.4: "From Eqs. (4) and (5), the inequality T2 >= 2 T1 is expressed as" Eq. (7).
    # Checked exactly (Fractions) over a grid wherever T1 and T2 are defined.
    checked = 0
    for rate in (GBPS, 10 * GBPS, 25 * GBPS, 40 * GBPS):
        for rtt_us in (50, 78, 100, 250):
            bdp = ser.base_bdp_pkt(ser.base_bdp_bytes(rate, rtt_us * US), 1460)
            tau = ser.packet_time_ps(rate, 1460)
            m = ser.slow_start_rounds(bdp)
            t1 = ser.t1_ps(m, bdp, rtt_us * US, tau)
            for sru in range(1460, 4 * 2**20, 7919):
                if ser.eq6_holds(sru, 1460, m, bdp):
                    assert ser.eq7_holds(sru, 1460, bdp) == (ser.t2_ps(sru, 1460, m, tau) >= 2 * t1)
                    checked += 1
    assert checked > 1000


def test_section_5_1_values_at_1gbps():
    # §5.1 (Fig. 9/10 setting, S = 32 KB): "BaseBDP_pkt = [1Gbps x 100usec/(1500 x 8)] = 9,
    # wnd_pkt = 4, n_min = 3 and Q_max^TCP = 8 x 3 - 9 = 15".
    m = paper(1, 32 * KIB)
    assert m.base_bdp_pkt_ceil == 9
    assert m.n_min_eq8 == 4  # Eq. (8): 4 x 22 >= 82.67; then 9/4 < 4 ...
    assert m.window_case == "b"  # ... so case (b) of Eq. (9)
    assert m.wnd_pkt == 4
    assert m.n_min == 3  # Eq. (10): [9/4] = 3
    assert m.q_max_tcp_packets == 15


def test_section_5_1_values_at_10gbps_512kb():
    # §5.1 (Fig. 13-16 setting): "Q_max^TCP = 84 (= 2 x 4 x 21 - 84) ... where BaseBDP_pkt = 84,
    # n_min = 4 and wnd_pkt = 21".
    m = paper(10, 512 * KIB)
    assert m.base_bdp_pkt_ceil == 84
    assert m.n_min == 4
    assert m.window_case == "a"
    assert m.wnd_pkt == 21
    assert m.q_max_tcp_packets == 84


def test_q_max_reading_rules_out_exact_bdp_pkt():
    # Eq. (11) with the exact BaseBDP_pkt would give 24 - 8.33 = 15.67 and 168 - 83.33 = 84.67,
    # not the paper's 15 and 84: the paper substitutes the ceiling [BaseBDP_pkt].
    assert 2 * 3 * 4 - paper(1, 32 * KIB).base_bdp_pkt != 15
    assert 2 * 4 * 21 - paper(10, 512 * KIB).base_bdp_pkt != 84


def test_ideal_mct_is_2_2ms_for_32kb_8_servers_1gbps():
    # §5.1, Eq. (12): "when S = 32 KB, V = 1 Gbps and N_a = 8, MCT becomes 2.2 msec".
    # 8 x 23 packets x 12 us = 2.208 ms; the paper prints two significant digits, hence the
    # rounding. (A floor would give 8 x 22 x 12 us = 2.112 ms -> 2.1 ms.)
    m = paper(1, 32 * KIB, servers=8)
    assert m.mct_ps == 2208 * US
    assert round(m.mct_ps / 1e9, 1) == 2.2


def test_eq8_has_no_solution_below_one_mss_and_falls_back_to_case_b():
    m = paper(1, 1000)
    assert m.n_min_eq8 is None
    assert m.window_case == "b" and m.n_min == 3 and m.wnd_pkt == 4


# --- Appendix A ------------------------------------------------------------------------


def test_appendix_a_q_max_is_at_most_three_bdp_pkt():
    # Appendix A: "Q_max^TCP becomes at most three BaseBDP_pkts", over a grid of settings.
    for rate in (GBPS, 10 * GBPS, 40 * GBPS, 100 * GBPS):
        for rtt_us in (30, 50, 100, 200, 500):
            for sru in (1 * KIB, 4 * KIB, 32 * KIB, 64 * KIB, 512 * KIB, 4 * 2**20):
                m = serialization_model(rate, rtt_us * US, 1460, sru)
                assert 0 <= m.q_max_tcp_packets <= 3 * m.base_bdp_pkt_ceil, m


@pytest.mark.parametrize("bdp_pkt, n_min, case", [(12, 3, "a"), (20, 2, "a"), (84, 4, "a"), (12, None, "b")])
def test_appendix_a5_a9_divisible_bdp_gives_q_max_equal_to_bdp(bdp_pkt, n_min, case):
    # (A.5): BaseBDP_pkt = k n_min -> Q = BaseBDP_pkt; (A.9): BaseBDP_pkt = 4k -> Q = BaseBDP_pkt.
    n = n_min if case == "a" else ser.n_min_eq10(bdp_pkt)
    wnd = ser.wnd_pkt_eq9(bdp_pkt, n, case)
    assert ser.q_max_tcp_eq11(n, wnd, bdp_pkt) == bdp_pkt


# --- the API other code imports ----------------------------------------------------------


def test_model_is_frozen_and_json_ready():
    m = paper(1, 32 * KIB)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.n_min = 5  # type: ignore[misc]
    assert json.loads(json.dumps(m.to_dict()))["wnd_pkt"] == 4


def test_bdp_of_two_packets_or_less_is_refused():
    # The derivation starts from a 2-packet initial window (§4.2); 10 us at 1 Gbps is 0.83 packets.
    with pytest.raises(UsageError) as e:
        serialization_model(GBPS, 10 * US, 1460, 64 * KIB)
    assert e.value.param == "base-rtt"


@pytest.mark.parametrize("kw", [{"rate_bps": 0}, {"mss_bytes": 0}, {"sru_bytes": -1}, {"servers": 0}])
def test_non_positive_inputs_are_refused(kw):
    args = {"rate_bps": GBPS, "base_rtt_ps": 100 * US, "mss_bytes": 1460, "sru_bytes": 1}
    extra = {"servers": kw.pop("servers")} if "servers" in kw else {}
    args.update(kw)
    with pytest.raises(UsageError):
        serialization_model(**args, **extra)


def test_smallest_sru_finds_the_first_true_and_stops_at_the_limit():
    assert smallest_sru(lambda s: s >= 12345) == 12345
    assert smallest_sru(lambda s: s >= 1) == 1
    assert smallest_sru(lambda s: False, limit=2**20) is None


# --- the CLI face ----------------------------------------------------------------------


@pytest.fixture
def run(monkeypatch, capsys):
    """Run ``incastlab ...`` in process with only this face registered (the other faces
    live on other branches and are not needed to test this one)."""
    monkeypatch.setattr(cli_main, "COMMANDS", ["model"])

    def go(*argv: str) -> tuple[int, str, str]:
        try:
            code = cli_main.main(list(argv))
        except SystemExit as e:  # argparse errors and --help exit through SystemExit
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err

    return go


BASE = ("model", "serialization", "--rate", "1Gbps", "--base-rtt", "100us", "--mss", "1460")


def test_cli_table_shows_the_model(run):
    code, out, err = run(*BASE, "--sru", "64KiB", "--servers", "8", "--buffer-packets", "40")
    assert code == 0 and err == ""
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "412.000 us" in lines["T1"]
    assert "360.000 us" in lines["T2"]
    assert lines["Eq. (6) holds"].split()[3] == "yes"
    for name in ("BaseBDP", "BaseBDP_pkt", "m", "n_min", "wnd_pkt", "Q_max^TCP", "ideal MCT", "fits buffer"):
        assert name in lines


def test_cli_json_is_one_object(run):
    code, out, _ = run("model", "serialization", "--rate", "10Gbps", "--base-rtt", "100us",
                       "--sru", "512KiB", "--json")
    assert code == 0
    assert len(out.strip().splitlines()) == 1
    obj = json.loads(out)
    assert (obj["base_bdp_pkt_ceil"], obj["n_min"], obj["wnd_pkt"], obj["q_max_tcp_packets"]) == (84, 4, 21, 84)
    assert obj["t1_s"] == 724e-6 and obj["mct_s"] is None and not any(k.endswith("_ps") for k in obj)


def test_cli_mct_json(run):
    code, out, _ = run(*BASE, "--sru", "32KiB", "--servers", "8", "--json")
    assert code == 0 and json.loads(out)["mct_s"] == 2208e-6


def test_cli_find_threshold(run):
    code, out, _ = run("model", "serialization", "--rate", "10Gbps", "--base-rtt", "100us",
                       "--find-threshold", "--json")
    assert code == 0
    assert json.loads(out)["eq6_min_sru_bytes"] == 81 * 1460 + 1
    code, out, _ = run(*BASE, "--find-threshold")
    assert code == 0 and "8761 B" in out


def test_cli_help(run):
    code, out, _ = run("model", "serialization", "--help")
    assert code == 0 and "--find-threshold" in out and "KiB" in out


@pytest.mark.parametrize(
    "argv, names",
    [
        (("--rate", "fast", "--base-rtt", "100us", "--sru", "1KiB"), "--rate"),
        (("--rate", "1Gbps", "--base-rtt", "soon", "--sru", "1KiB"), "--base-rtt"),
        (("--rate", "1Gbps", "--base-rtt", "10us", "--sru", "1KiB"), "--base-rtt"),  # BDP < 2 packets
        (("--rate", "1Gbps", "--base-rtt", "100us", "--sru", "0"), "--sru"),
        (("--rate", "1Gbps", "--base-rtt", "100us", "--sru", "64 apples"), "--sru"),
        (("--rate", "1Gbps", "--base-rtt", "100us", "--sru", "1KiB", "--mss", "0"), "--mss"),
        (("--rate", "1Gbps", "--base-rtt", "100us", "--sru", "1KiB", "--servers", "0"), "--servers"),
        (("--rate", "1Gbps", "--base-rtt", "100us", "--sru", "1KiB", "--buffer-packets", "x"), "--buffer-packets"),
        (("--rate", "1Gbps", "--base-rtt", "100us"), "--sru"),  # neither --sru nor --find-threshold
        (("--rate", "1Gbps", "--base-rtt", "100us", "--find-threshold", "--servers", "3"), "--servers"),
    ],
)
def test_cli_bad_input_is_one_line_naming_the_parameter_exit_2(run, argv, names):
    code, out, err = run("model", "serialization", *argv)
    assert code == 2
    assert out == ""  # nothing half-written
    assert len(err.strip().splitlines()) == 1
    assert names in err
    assert "Traceback" not in err
