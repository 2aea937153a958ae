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


def rate(flag: str):
    return _wrap(units.parse_rate, flag)


def duration(flag: str, allow_zero: bool = False):
    return _wrap(lambda t, p: units.parse_duration_ps(t, p, allow_zero=allow_zero), flag)


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
