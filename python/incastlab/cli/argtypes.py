"""argparse ``type=`` helpers: units parsed at the edge, errors that name the flag."""

from __future__ import annotations

import argparse
from typing import Callable

from .. import units
from ..errors import UsageError


def _wrap(fn: Callable, flag: str):
    def convert(text: str):
        try:
            return fn(text, flag)
        except UsageError as e:
            # argparse prefixes "argument FLAG:"; keep only the value and what is allowed
            raise argparse.ArgumentTypeError(f"{e.value!r} is not allowed; expected {e.allowed}") from None
    convert.__name__ = flag  # argparse shows this name when it cannot call the type
    return convert


def size(flag: str, minimum: int = 1):
    return _wrap(lambda t, p: units.parse_size(t, p, minimum=minimum), flag)


def rate(flag: str, minimum: int = 1):
    def parse(text, param):
        value = units.parse_rate(text, param)
        if value < minimum:
            raise UsageError(param, text, f"a rate of at least {minimum:,} bit/s")
        return value
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
        return ps
    return _wrap(parse, flag)


def int_list(flag: str, minimum: int = 1, maximum: int | None = None):
    return _wrap(lambda t, p: units.parse_int_list(t, p, minimum=minimum, maximum=maximum), flag)


def positive_int(flag: str, minimum: int = 1, maximum: int | None = None):
    def parse(text: str, p: str) -> int:
        bound = f"at least {minimum}" + (f" and at most {maximum}" if maximum is not None else "")
        try:
            n = int(text)
        except ValueError:
            raise UsageError(p, text, f"a whole number {bound}") from None
        if n < minimum or (maximum is not None and n > maximum):
            raise UsageError(p, text, f"a whole number {bound}")
        return n
    return _wrap(parse, flag)
