"""Properties of incastlab.units over any text (issue 11): every parser returns a value of
the right type and range or raises UsageError naming the parameter, never another
exception; what the formatters write parses back to the same integer; B is a byte and b a
bit in a rate."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuzz_support import HOSTILE_TEXT, TALLY, examples
from incastlab import units
from incastlab.errors import UsageError

# sizes: bytes; rates: bit/s; durations: ps (units.py)
SIZE_SCALE = {"": 1, "B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20,
              "GiB": 2**30, "Ki": 2**10, "k": 10**3}
RATE_PREFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "m": 10**6, "G": 10**9, "T": 10**12}
BIT_UNITS = ["bps", "b/s", "bit/s", "bits/s", "bit"]
BYTE_UNITS = ["Bps", "B/s"]
TIME_SCALE = {"h": 3600 * 10**12, "min": 60 * 10**12, "s": 10**12, "ms": 10**9, "us": 10**6, "µs": 10**6,
              "ns": 10**3, "ps": 1}

PARAM = "some-param"


def _outcome(parse, value, check):
    """Call ``parse(value)``: a value must pass ``check``, a refusal must be a UsageError
    naming PARAM; anything else fails (and is counted as a traceback)."""
    try:
        got = parse(value)
    except UsageError as e:
        TALLY.add("units", "refused")
        assert e.param == PARAM and e.allowed, e
        assert str(e).startswith(f"{PARAM}: ") and "\n" not in str(e)
        return None
    except Exception:
        TALLY.add("units", "traceback")
        raise
    TALLY.add("units", "accepted")
    check(got)
    return got


def _is_int_at_least(lo):
    def check(v):
        assert type(v) is int and v >= lo, v
    return check


ANY_INPUT = st.one_of(HOSTILE_TEXT, st.integers(-(10**30), 10**30), st.floats(), st.booleans(), st.none())

# Regressions found by these properties (each failed before its fix): an exponent past
# float range, NaN, and integers past 2**53 (read through a float and silently rounded).
HUGE = ["1e400", "1e400KiB", "1e400Gbps", "1e400s", "-1e400ms", "1" + "0" * 400, "1e999999999", "1e-999999999"]


@settings(max_examples=examples(5))
@given(text=ANY_INPUT, minimum=st.sampled_from([0, 1, 64, 1500]))
@example(text="1e400", minimum=1)
@example(text="1e999999999KiB", minimum=1)
@example(text="9007199254740993", minimum=1)
def test_parse_size_returns_bytes_or_refuses(text, minimum):
    _outcome(lambda v: units.parse_size(v, PARAM, minimum=minimum), text, _is_int_at_least(minimum))


@settings(max_examples=examples(5))
@given(text=ANY_INPUT)
@example(text="1e400Gbps")
@example(text="1e-999999999Gbps")
def test_parse_rate_returns_positive_bits_per_second_or_refuses(text):
    _outcome(lambda v: units.parse_rate(v, PARAM), text, _is_int_at_least(1))


@settings(max_examples=examples(5))
@given(text=ANY_INPUT, allow_zero=st.booleans())
@example(text="1e400s", allow_zero=False)
@example(text=float("nan"), allow_zero=True)
@example(text=float("inf"), allow_zero=True)
@example(text=-float("inf"), allow_zero=True)
@example(text=1e300, allow_zero=False)
def test_parse_duration_returns_picoseconds_or_refuses(text, allow_zero):
    _outcome(lambda v: units.parse_duration_ps(v, PARAM, allow_zero=allow_zero), text,
             _is_int_at_least(0 if allow_zero else 1))


@settings(max_examples=examples(5))
@given(text=st.one_of(HOSTILE_TEXT, st.integers(-5, 10**6)), minimum=st.sampled_from([0, 1]),
       maximum=st.sampled_from([None, 1000, 1 << 20]))
@example(text="9" * 5000, minimum=1, maximum=None)
def test_parse_int_list_returns_whole_numbers_in_range_or_refuses(text, minimum, maximum):
    def check(v):
        assert isinstance(v, list) and v and all(type(n) is int for n in v)
        assert all(n >= minimum and (maximum is None or n <= maximum) for n in v), v
    _outcome(lambda t: units.parse_int_list(t, PARAM, minimum=minimum, maximum=maximum), text, check)


@pytest.mark.parametrize("text", HUGE)
def test_quantities_past_float_range_are_refused_not_a_traceback(text):
    for parse in (units.parse_size, units.parse_rate, units.parse_duration_ps):
        try:
            v = parse(text, PARAM)
        except UsageError as e:
            assert e.param == PARAM
        else:  # a tiny rate or duration rounds to 0 and is refused; nothing else is accepted
            raise AssertionError(f"{parse.__name__}({text!r}) = {v}")


# --- round trips: what incastlab writes, it reads back to the same integer -----------------

@settings(max_examples=examples(3))
@given(n=st.one_of(st.integers(1, 2**70), st.integers(1, 10**4).map(lambda k: k * 2**20)))
@example(n=2**53 + 1)
def test_format_size_parses_back_exactly(n):
    assert units.parse_size(units.format_size(n), PARAM) == n
    TALLY.add("units", "accepted")


@settings(max_examples=examples(3))
@given(ps=st.one_of(st.integers(0, 10**22), st.integers(0, 10**6).map(lambda k: k * 10**9)))
@example(ps=2**53 + 1)
@example(ps=24 * 3600 * 10**12 + 1)
def test_exact_duration_parses_back_exactly(ps):
    text = units.exact_duration(ps)
    assert units.parse_duration_ps(text, PARAM, allow_zero=True) == ps
    TALLY.add("units", "accepted")


@settings(max_examples=examples(3))
@given(n=st.integers(0, 10**18), unit=st.sampled_from(sorted(SIZE_SCALE)), space=st.sampled_from(["", " "]))
def test_whole_sizes_in_any_unit_are_exact(n, unit, space):
    _outcome(lambda t: units.parse_size(t, PARAM, minimum=0), f"{n}{space}{unit}",
             lambda v: assertEqual(v, n * SIZE_SCALE[unit]))


@settings(max_examples=examples(3))
@given(n=st.integers(1, 10**18), unit=st.sampled_from(sorted(TIME_SCALE)))
def test_whole_durations_in_any_unit_are_exact(n, unit):
    _outcome(lambda t: units.parse_duration_ps(t, PARAM), f"{n}{unit}",
             lambda v: assertEqual(v, n * TIME_SCALE[unit]))


@settings(max_examples=examples(3))
@given(d=st.decimals(min_value=Decimal("0.000001"), max_value=Decimal(10**12), places=6),
       unit=st.sampled_from(sorted(TIME_SCALE)))
def test_decimal_durations_round_to_the_nearest_picosecond(d, unit):
    exact = Fraction(d) * TIME_SCALE[unit]
    got = _outcome(lambda t: units.parse_duration_ps(t, PARAM, allow_zero=True), f"{d}{unit}",
                   _is_int_at_least(0))
    assert got is not None and abs(got - exact) <= Fraction(1, 2)


@settings(max_examples=examples(3))
@given(d=st.decimals(min_value=Decimal("0.001"), max_value=Decimal(10**9), places=3),
       unit=st.sampled_from(["KiB", "MiB", "KB", "MB", "GiB"]))
def test_fractional_sizes_are_exact_or_refused_as_not_whole_bytes(d, unit):
    exact = Fraction(d) * SIZE_SCALE[unit]
    got = _outcome(lambda t: units.parse_size(t, PARAM, minimum=0), f"{d}{unit}", _is_int_at_least(0))
    assert (got == exact) if exact.denominator == 1 else got is None


@settings(max_examples=examples(3))
@given(bps=st.integers(1, 10**16))
def test_display_rates_parse_back_within_their_six_digits(bps):
    # format_rate prints %g (six significant digits) for people, not for parsing back
    got = units.parse_rate(units.format_rate(bps), PARAM)
    assert abs(got - bps) <= bps * 5e-6 + 0.5
    TALLY.add("units", "accepted")


@settings(max_examples=examples(3))
@given(ps=st.integers(1, 10**20))
def test_display_durations_parse_back_within_their_six_digits(ps):
    got = units.parse_duration_ps(units.format_duration_ps(ps), PARAM)
    assert abs(got - ps) <= ps * 5e-6 + 0.5
    TALLY.add("units", "accepted")


# --- case: in a rate B is a byte and b a bit (a silent 8x otherwise) ----------------------

def _recase(text: str, flips: list[bool]) -> str:
    return "".join(c.swapcase() if f else c for c, f in zip(text, flips))


@settings(max_examples=examples(5))
@given(n=st.integers(1, 10**6), prefix=st.sampled_from(sorted(RATE_PREFIX)),
       unit=st.sampled_from(BIT_UNITS + BYTE_UNITS), flips=st.lists(st.booleans(), min_size=6, max_size=6))
def test_rate_units_are_case_exact_bytes_times_eight(n, prefix, unit, flips):
    written = _recase(unit, flips)
    got = _outcome(lambda t: units.parse_rate(t, PARAM), f"{n}{prefix}{written}", _is_int_at_least(1))
    if written in BIT_UNITS:
        assert got == n * RATE_PREFIX[prefix]
    elif written in BYTE_UNITS:
        assert got == 8 * n * RATE_PREFIX[prefix]
    else:  # "BPS", "bPs", "Bit/s": neither spelling, so refused rather than guessed
        assert got is None, (written, got)


@pytest.mark.parametrize("text, bps", [("1GBps", 8 * 10**9), ("1Gb/s", 10**9), ("1GB/s", 8 * 10**9),
                                       ("1Gbit", 10**9), ("1gbps", 10**9), ("1MBps", 8 * 10**6)])
def test_rate_case_examples(text, bps):
    assert units.parse_rate(text, PARAM) == bps


@pytest.mark.parametrize("text", ["1b", "64b", "1 b"])
def test_a_lone_lower_case_b_is_refused_in_a_size(text):
    # a lone "b" reads as bits; refused rather than guessed (units.parse_size)
    with pytest.raises(UsageError):
        units.parse_size(text, PARAM)


def assertEqual(a, b):
    assert a == b, (a, b)
