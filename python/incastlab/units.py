"""Parse quantities the way people write them: ``32KiB``, ``64KB``, ``10Gbps``, ``200us``.

Parsing happens once, at the edge (CLI and ``Scenario``); everything inside works in
integers: bytes, bits per second, picoseconds. Decimal prefixes (k, M, G) are powers of
1000 and binary prefixes (Ki, Mi, Gi) powers of 1024, as in IEC 80000-13.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .errors import UsageError

PS_PER_S = 10**12

# Numbers are read exactly (a decimal, not a float: 9007199254740993B is that many bytes,
# and 1e400 is not infinity) and written numbers above 1e30 are refused: 1e30 of any unit
# is beyond every range incastlab has, and a bound keeps 1e999999999 from becoming an
# integer of a billion digits. Below 1e-30 every unit rounds to zero.
_MAX_EXPONENT = 30

_NUMBER = r"(?P<num>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"

_SIZE_UNITS = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
}
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
# bits per second: 1Gbps, 1Gb/s, 1Gbit/s, 1Gbit; bytes per second (x8): 1GBps, 1GB/s, 125MBps
_RATE_UNIT = re.compile(r"(?P<prefix>[kKmMgGtT]?)(?:(?P<bits>bps|b/s|bit/s|bits/s|bit)|(?P<bytes>Bps|B/s))")
_TIME_UNITS_PS = {
    "h": 3600 * 10**12, "min": 60 * 10**12,
    "s": 10**12, "ms": 10**9, "us": 10**6, "µs": 10**6, "ns": 10**3, "ps": 1,
}

_SIZE_HELP = "a size such as 32KiB, 64KB, 1MiB or 1500 (bytes)"
_RATE_HELP = ("a rate such as 1Gbps, 10Gb/s, 100Mbit/s (bits per second) or 125MBps, 125MB/s "
              "(bytes per second)")
_TIME_HELP = "a duration such as 200ms, 200us, 2s, 10min, 1h or 10ns"


def _split(text: str, param: str, allowed: str) -> tuple[Fraction, str]:
    """The exact number and the unit in ``text`` (a float goes by its shortest repr)."""
    shown = text
    if isinstance(text, float):
        if not math.isfinite(text):
            raise UsageError(param, shown, allowed)
        text = repr(text)
    elif not isinstance(text, str):
        text = str(text)
    m = re.fullmatch(_NUMBER + r"\s*(?P<unit>[A-Za-zµ/]*)", text.strip())
    if not m:
        raise UsageError(param, shown, allowed)
    try:
        num = Decimal(m.group("num"))
    except InvalidOperation:  # an exponent beyond what a decimal can hold
        raise UsageError(param, shown, f"{allowed} (at most 1e{_MAX_EXPONENT})") from None
    if num and num.adjusted() > _MAX_EXPONENT:
        raise UsageError(param, shown, f"{allowed} (at most 1e{_MAX_EXPONENT})")
    if num and num.adjusted() < -_MAX_EXPONENT:
        num = Decimal(f"1e-{_MAX_EXPONENT + 1}")  # as good as zero in any unit, yet not zero
    return Fraction(num), m.group("unit")


def parse_size(text: str | int, param: str = "size", *, minimum: int = 1) -> int:
    """Bytes in ``text``; ``minimum`` is the smallest allowed value."""
    allowed = f"{_SIZE_HELP}, at least {minimum} B"
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        num, unit = _split(text, param, allowed)
        scale = _SIZE_UNITS.get(unit.lower())
        if scale is None or unit == "b":
            # a lone lower-case "b" reads as bits; refuse it in a size rather than guess x8
            raise UsageError(param, text, allowed)
        if len(unit) > 1 and unit.endswith("b"):
            raise UsageError(param, text, _bits_or_bytes(num, unit))
        value = num * scale
        if value.denominator != 1:
            raise UsageError(param, text, f"{allowed} (a whole number of bytes)")
        value = int(value)
    if value < minimum:
        raise UsageError(param, text, allowed)
    return value


def _bits_or_bytes(num: Fraction, unit: str) -> str:
    """What to write instead of ``32Kb`` or ``1Mib`` in a size: a lower-case b is a bit
    where rates are written (1Gbps) and a byte where sizes often are (64kb); both readings
    are named rather than one guessed (an 8x difference in a buffer)."""
    prefix = unit[:-1]
    scale = _SIZE_UNITS[prefix.lower()]
    n = f"{num.numerator}" if num.denominator == 1 else f"{float(num):g}"
    as_bytes = num * scale
    as_bits = num * scale / 8
    proper = prefix[0].upper() + ("i" if prefix.lower().endswith("i") else "")
    byte_unit, bit_prefix = proper + "B", "k" if proper == "K" else proper
    shown = lambda v: f"{int(v):,} B" if v.denominator == 1 else f"{float(v):g} B"  # noqa: E731
    return (f"a size in bytes written with B: {n}{unit} could be {n}{byte_unit} ({shown(as_bytes)}) or "
            f"{n} {bit_prefix}bit ({shown(as_bits)}); write {n}{byte_unit} or the bytes you mean")


def parse_rate(text: str | int, param: str = "rate") -> int:
    """Bits per second in ``text`` (must be positive)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        num, unit = _split(text, param, _RATE_HELP)
        # case matters for the unit: B is a byte, b a bit (a silent 8x otherwise)
        m = _RATE_UNIT.fullmatch(unit)
        if m is None:
            raise UsageError(param, text, _RATE_HELP)
        scale = _RATE_PREFIX[m["prefix"].lower()] * (8 if m["bytes"] else 1)
        value = round(num * scale)
    if value <= 0:
        raise UsageError(param, text, f"{_RATE_HELP}, above zero")
    return value


def parse_duration_ps(text: str | int | float, param: str = "duration", *, allow_zero: bool = False) -> int:
    """Picoseconds in ``text``. A number (int or float, from Python or a parsed file) is
    seconds, the SI unit; written text needs its unit, except 0: ``--timer-granularity 100``
    is refused, not read as a 100 s clock (people mean 100 us or 100 ms as often)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text * PS_PER_S
    else:
        num, unit = _split(text, param, _TIME_HELP)
        if not unit and num and isinstance(text, str):
            n = text.strip()
            raise UsageError(param, text, f"a duration with its unit, e.g. {n}us, {n}ms or {n}s (a bare number "
                             f"is refused: {n} could be any of them)")
        scale = _TIME_UNITS_PS.get(unit if unit == "µs" else unit.lower()) if unit else PS_PER_S
        if scale is None:
            raise UsageError(param, text, _TIME_HELP)
        value = round(num * scale)
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(param, text, f"{_TIME_HELP}, above zero" if not allow_zero else _TIME_HELP)
    return value


def number_or_text(text: str) -> int | float | str:
    """A printed value read back: an int, else a float, else the text as it is."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_int_list(text: str, param: str, *, minimum: int = 1, maximum: int | None = None) -> list[int]:
    """Comma-separated integers such as ``1,2,4,8``."""
    bound = f"at least {minimum}" + (f" and at most {maximum}" if maximum is not None else "")
    allowed = f"comma-separated whole numbers, each {bound}, e.g. 1,2,4,8"
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not re.fullmatch(r"[0-9]+", part):
            raise UsageError(param, text, allowed)
        try:
            n = int(part)
        except ValueError:  # more digits than int() reads (sys.get_int_max_str_digits)
            raise UsageError(param, text, allowed) from None
        if n < minimum or (maximum is not None and n > maximum):
            raise UsageError(param, text, allowed)
        out.append(n)
    return out


def format_size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def format_rate(bps: int) -> str:
    for unit, scale in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps >= scale:
            v = bps / scale
            return f"{v:g}{unit}"
    return f"{bps}bps"


def exact_size(n: int) -> str:
    """Bytes in the largest binary unit that states them exactly: ``"32KiB"``, ``"1500B"``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def exact_rate(bps: int) -> str:
    """A rate in the largest decimal unit that states it exactly: ``"1Gbps"``, ``"1500bps"``."""
    for unit, scale in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps and bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def exact_duration(ps: int) -> str:
    """``ps`` in the largest unit that states it exactly (``"100us"``, ``"1500ns"``, ``"0s"``):
    parsed back by ``parse_duration_ps`` and by ns-3's Time attribute alike."""
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % scale == 0:
            return f"{ps // scale}{unit}"
    return f"{ps}ps"


def format_duration_ps(ps: int) -> str:
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps >= scale:
            return f"{ps / scale:g}{unit}"
    return f"{ps}ps"
