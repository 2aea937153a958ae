"""argparse ``type=`` helpers: units parsed at the edge, errors that name the flag."""

from __future__ import annotations

import argparse
from typing import Callable

from .. import units
from ..errors import UsageError

# The largest value the native parts take: sizes, rates and picoseconds are u64 there,
# counts at most i64. Beyond, the core's config parser refused with a line naming no flag
# ("serve: server config: invalid type: floating point `1e+25`, expected u64").
U64_MAX = 2**64 - 1
COUNT_MAX = 2**63 - 1


def _wrap(fn: Callable, flag: str):
    def convert(text: str):
        try:
            return fn(text, flag)
        except UsageError as e:
            # argparse prefixes "argument FLAG:"; keep only the value and what is allowed
            raise argparse.ArgumentTypeError(f"{e.value!r} is not allowed; expected {e.allowed}") from None
    convert.__name__ = flag  # argparse shows this name when it cannot call the type
    return convert


def size(flag: str, minimum: int = 1, maximum: int = U64_MAX):
    def parse(text, param):
        value = units.parse_size(text, param, minimum=minimum)
        if value > maximum:
            raise UsageError(param, text, f"a size of at most {units.format_size(maximum)} ({maximum:,} B)")
        return value
    return _wrap(parse, flag)


def rate(flag: str, minimum: int = 1):
    def parse(text, param):
        value = units.parse_rate(text, param)
        if not minimum <= value <= U64_MAX:
            raise UsageError(param, text, f"a rate of at least {minimum:,} and at most {U64_MAX:,} bit/s")
        return value
    return _wrap(parse, flag)


def listen_address(flag: str):
    """An IP address to listen on, as the server takes it (``[::1]`` for IPv6): the wire
    server binds a literal address, not a host name."""
    def parse(text, param):
        import ipaddress
        try:
            ip = ipaddress.ip_address(text.strip().removeprefix("[").removesuffix("]"))
        except ValueError:
            raise UsageError(param, text, "an IPv4 or IPv6 address, e.g. 0.0.0.0, 127.0.0.1 or [::]") from None
        return f"[{ip}]" if ip.version == 6 else str(ip)
    return _wrap(parse, flag)


def testbed_prefix(flag: str):
    """A testbed name prefix: interface names hold 15 bytes, so prefix + "-s1000-p" must fit."""
    def parse(text, param):
        from ..testbed.names import Names
        try:
            Names(text)
        except ValueError:
            raise UsageError(param, text, "2-7 lower-case letters or digits, starting with a letter") from None
        return text
    return _wrap(parse, flag)


def duration(flag: str, allow_zero: bool = False, *, bounds: tuple[int, int, str] | None = None):
    """A duration in ps; ``bounds`` = (least ps, most ps, how to say the range), refused
    with the text as typed (25h, not 90000s)."""
    def parse(text, param):
        ps = units.parse_duration_ps(text, param, allow_zero=allow_zero)
        if bounds is not None and not bounds[0] <= ps <= bounds[1]:
            raise UsageError(param, text, bounds[2])
        if ps > U64_MAX:
            raise UsageError(param, text, f"a duration of at most {units.exact_duration(U64_MAX // 10**12 * 10**12)}")
        return ps
    return _wrap(parse, flag)


def duration_or_word(flag: str, word: str):
    """A duration in ps, or `word` itself (validate's ``--rtt measured``)."""
    def parse(text, param):
        if text.strip() == word:
            return word
        try:
            return units.parse_duration_ps(text, param)
        except UsageError as e:
            raise UsageError(param, text, f"{e.allowed}, or {word}") from None
    return _wrap(parse, flag)


def int_list(flag: str, minimum: int = 1, maximum: int | None = None):
    return _wrap(lambda t, p: units.parse_int_list(t, p, minimum=minimum, maximum=maximum), flag)


def positive_int(flag: str, minimum: int = 1, maximum: int = COUNT_MAX):
    def parse(text: str, p: str) -> int:
        bound = f"at least {minimum} and at most {maximum}"
        try:
            n = int(text)
        except ValueError:
            raise UsageError(p, text, f"a whole number {bound}") from None
        if n < minimum or (maximum is not None and n > maximum):
            raise UsageError(p, text, f"a whole number {bound}")
        return n
    return _wrap(parse, flag)
