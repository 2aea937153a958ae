"""Units are parsed once, at the edge (DESIGN.md): sizes, rates and durations the way
people write them, and a refusal that names the parameter, its value and what is allowed."""

import pytest

from incastlab import Scenario, UsageError
from incastlab import units


@pytest.mark.parametrize("text, expected", [
    ("32KiB", 32 * 1024),
    ("32KB", 32_000),          # decimal prefix: powers of 1000 (IEC 80000-13)
    ("256KiB", 262_144),
    ("1MiB", 1_048_576),
    ("1500", 1500),
    ("64kB", 64_000),
])
def test_sizes(text, expected):
    assert units.parse_size(text, "buffer") == expected


@pytest.mark.parametrize("text, as_bytes, as_bits", [
    ("32Kb", "32KB (32,000 B)", "32 kbit (4,000 B)"),
    ("64kb", "64KB (64,000 B)", "64 kbit (8,000 B)"),
    ("1Mib", "1MiB (1,048,576 B)", "1 Mibit (131,072 B)"),
    ("2Gb", "2GB (2,000,000,000 B)", "2 Gbit (250,000,000 B)"),
])
def test_a_lower_case_b_after_a_prefix_is_refused_naming_both_readings(text, as_bytes, as_bits):
    # issue 25: 32Kb was 32,000 bytes; a reader of rates (1Gbps) takes b for bits, 8x less
    with pytest.raises(UsageError) as e:
        units.parse_size(text, "--buffer")
    assert e.value.param == "--buffer" and as_bytes in e.value.allowed and as_bits in e.value.allowed


@pytest.mark.parametrize("text", ["100", " 5 ", "0.2", "1e3"])
def test_a_written_duration_without_a_unit_is_refused(text):
    # issue 25: --timer-granularity 100 was a 100 s clock; people mean 100us as often
    with pytest.raises(UsageError) as e:
        units.parse_duration_ps(text, "--timer-granularity")
    assert f"{text.strip()}us" in e.value.allowed and f"{text.strip()}ms" in e.value.allowed


def test_zero_and_python_numbers_need_no_unit():
    # 0 is 0 in any unit; a number from Python (or a parsed file) is the SI unit, seconds
    assert units.parse_duration_ps("0", "spin", allow_zero=True) == 0
    assert units.parse_duration_ps(0.2, "rto_min") == 2 * 10**11
    assert units.parse_duration_ps(2, "duration") == 2 * 10**12


@pytest.mark.parametrize("text, expected", [
    ("1Gbps", 10**9), ("10Gbps", 10**10), ("100Mbps", 10**8), ("2.5Gbps", 2_500_000_000),
    ("1Gb/s", 10**9), ("1Gbit/s", 10**9), ("100Mbit/s", 10**8), ("1gbps", 10**9), ("400bps", 400),
    # bytes per second, as the monitor and many tools print them: x8, never read as bits
    ("1GBps", 8 * 10**9), ("125MBps", 10**9), ("125MB/s", 10**9), ("1kBps", 8000),
])
def test_rates(text, expected):
    assert units.parse_rate(text, "rate") == expected


@pytest.mark.parametrize("text, expected_ps", [
    ("200ms", 200 * 10**9), ("200us", 200 * 10**6), ("100us", 10**8), ("2s", 2 * 10**12), ("10ns", 10**4),
    ("0.2s", 2 * 10**11),
])
def test_durations_are_exact_picoseconds(text, expected_ps):
    assert units.parse_duration_ps(text, "rto_min") == expected_ps


@pytest.mark.parametrize("parse, text, param", [
    (units.parse_size, "-1", "buffer"),
    (units.parse_size, "0", "sru"),
    (units.parse_rate, "1Qbps", "rate"),
    (units.parse_rate, "0Gbps", "rate"),
    (units.parse_rate, "1G", "rate"),
    (units.parse_rate, "1Gbit/h", "rate"),
    (units.parse_duration_ps, "banana", "rto_min"),
    (units.parse_duration_ps, "-5ms", "rto_min"),
])
def test_bad_quantities_name_parameter_value_and_allowed(parse, text, param):
    with pytest.raises(UsageError) as e:
        parse(text, param)
    msg = str(e.value)
    assert msg.startswith(f"{param}: ") and repr(text) in msg and "expected" in msg


def test_scenario_fields_take_units_and_read_back_in_si_units():
    # issue 11: picoseconds do not reach users; a bare number is the SI unit, in and out
    s = Scenario(servers=8, sru="256KiB", buffer="32KB", rate="10Gbps", rtt="40us", rto_min="200us")
    assert (s.sru, s.buffer, s.rate) == (262_144, 32_000, 10**10)
    assert (s.rtt, s.rto_min) == (40e-6, 200e-6)
    assert (s.ps("rtt"), s.ps("rto_min")) == (40 * 10**6, 200 * 10**6)
    assert Scenario(servers=1, rtt=40e-6) == Scenario(servers=1, rtt="40us")


def test_scenario_defaults_are_fast08_table1():
    # 000_315d806dde942a9f.txt §3.1, Table 1 (+ 32 KiB buffer of Fig. 4, 20 s per run)
    n = Scenario(servers=4).to_native()
    assert n["rate_bps"] == 10**9
    assert n["rtt_ps"] == 100 * 10**6
    assert n["sru_bytes"] == 256 * 1024
    assert n["tcp"] == "newreno"
    assert n["dupack_threshold"] == 3
    assert n["slow_start"] is True
    assert n["rto_min_ps"] == 200 * 10**9
    assert n["buffer_bytes"] == 32 * 1024
    assert n["delayed_ack_ps"] == 0                  # off in FAST'08's ns-2 runs
    assert n["duration_ps"] == 20 * 10**12 and n["blocks"] is None


def test_rtt_is_four_link_delays():
    assert Scenario(servers=1, rtt="40us").derived()["link_delay_ps"] == 10 * 10**6


def test_blocks_replace_the_default_duration():
    n = Scenario(servers=2, blocks=5).to_native()
    assert n["blocks"] == 5 and n["duration_ps"] is None


def test_blocks_and_duration_together_are_refused():
    with pytest.raises(UsageError, match=r"^duration: '2s'"):
        Scenario(servers=2, blocks=5, duration="2s")


@pytest.mark.parametrize("value, expected_ps", [
    ("off", 0), (False, 0), (True, 40 * 10**9), ("on", 40 * 10**9), ("40ms", 40 * 10**9), ("200ms", 200 * 10**9),
])
def test_delayed_ack_forms(value, expected_ps):
    assert Scenario(servers=1, delayed_ack=value).ps("delayed_ack") == expected_ps


@pytest.mark.parametrize("field, value", [
    ("servers", 0), ("servers", "many"), ("buffer", -1), ("buffer", 100), ("sru", 0), ("rate", "1Qbps"),
    ("rto_min", "banana"), ("rto_max", "1ms"), ("dupack_threshold", 0), ("tcp", "vegas"),
    ("delayed_ack", "1s"), ("block", 3),
])
def test_scenario_refusals_name_the_field(field, value):
    kwargs = {"servers": 4, field: value}
    with pytest.raises(UsageError) as e:
        Scenario(**kwargs)
    assert e.value.param == field
    assert "expected" in str(e.value)


def test_unknown_field_is_named():
    with pytest.raises(UsageError) as e:
        Scenario(servers=1, bufer="32KiB")
    assert e.value.param == "bufer" and "buffer" in e.value.allowed


def test_dump_round_trips_exactly():
    s = Scenario(servers=3, buffer="48KiB", rtt="123456ps", duration="1.5s", delayed_ack="40ms", seed=9)
    assert Scenario(**s.model_dump()) == s
    assert s.model_dump()["rtt"] == "123456ps"


def test_numpy_numbers_from_a_dataframe_are_accepted():
    import numpy as np  # installed with pandas, a dependency
    s = Scenario(servers=np.int64(4), buffer=np.int64(65536), duration=np.float64(0.5))
    assert (s.servers, s.buffer, s.duration) == (4, 65536, 0.5)
