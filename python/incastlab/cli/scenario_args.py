"""The ``Scenario`` fields as command-line flags, generated from the core's schema.

One flag per schema field (``rto_min`` -> ``--rto-min``; on/off fields as
``--handshake``/``--no-handshake``), its help the field's doc with its default. Values
are passed to ``Scenario`` as the text the user typed, so units are parsed and ranges
checked in one place; a refusal is re-labelled with the flag the user typed.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Any, Iterator

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..schema import BY_PUBLIC, FIELDS, SWITCHED_ON, FieldSpec

if TYPE_CHECKING:
    from ..scenario import Scenario

# Fields a command gives in its own way: servers is a list to sweep (``--servers 1,2,4``).
NOT_FLAGS = ("servers",)
# Older spellings that keep working.
ALIASES = {"nccs_k": ("--k",)}
# Fields that end a run: one or the other.
_STOP = ("duration", "blocks")


def flag_of(field: str) -> str:
    """The flag a field is given by, with its older spellings: ``--nccs-k/--k``."""
    return "/".join((BY_PUBLIC[field].flag, *ALIASES.get(field, ())))


def _default_text(f: FieldSpec) -> str:
    if f.default is None:
        return f.unset
    return f.format(f.public_default)


def _help(f: FieldSpec) -> str:
    return f"{f.doc} (default {_default_text(f)})".replace("%", "%%")


def _add_field(group, f: FieldSpec) -> None:
    flags = (f.flag, *ALIASES.get(f.public, ()))
    if f.unit == "flag":
        group.add_argument(*flags, dest=f.public, action=argparse.BooleanOptionalAction, default=None,
                           help=_help(f))
    elif f.public in SWITCHED_ON:  # --delayed-ack alone switches it on at its usual value
        on = f.format(f.to_public(SWITCHED_ON[f.public]))
        group.add_argument(*flags, dest=f.public, metavar=f.metavar, nargs="?", const=on, default=None,
                           help=_help(f) + f"; alone: {on}")
    else:
        metavar = "|".join(f.choices) if f.unit == "choice" else f.metavar
        group.add_argument(*flags, dest=f.public, metavar=metavar, default=None, help=_help(f))


def add_scenario_arguments(parser: argparse.ArgumentParser, *, duration_default: str | None = None) -> None:
    """Add every Scenario field except ``servers`` to ``parser`` (``docs/scenario-fields.md``)."""
    g = parser.add_argument_group("scenario (defaults: FAST'08 Table 1, 32 KiB buffer; docs/scenario-fields.md)")
    for f in FIELDS:
        if f.public not in NOT_FLAGS and f.public not in _STOP:
            _add_field(g, f)
    stop = g.add_mutually_exclusive_group()
    for name in _STOP:
        _add_field(stop, BY_PUBLIC[name])
    if duration_default is not None:
        parser.set_defaults(duration=duration_default)


def scenario_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The Scenario keywords the user gave (unset flags leave Scenario's defaults)."""
    fields = {f.public: getattr(args, f.public) for f in FIELDS
              if f.public not in NOT_FLAGS and getattr(args, f.public, None) is not None}
    if "blocks" in fields:
        fields.pop("duration", None)  # a command's default duration does not compete with --blocks
    return fields


@contextmanager
def flag_names(flags: dict[str, str] | None = None) -> Iterator[None]:
    """Re-raise a Scenario refusal with the flag name (``buffer`` -> ``--buffer``);
    ``flags`` names the fields a command gives by other flags (validate's ``--rwnd-clamp``)."""
    try:
        yield
    except UsageError as e:
        flag = (flags or {}).get(e.param)
        if flag is None and e.param in BY_PUBLIC and e.param not in NOT_FLAGS:
            flag = flag_of(e.param)
        if flag is None:
            raise
        raise UsageError(flag, e.value, e.allowed) from None


def build_scenarios(args: argparse.Namespace, servers: list[int]) -> list[Scenario]:
    """One Scenario per number of servers, from the parsed flags."""
    from ..scenario import Scenario

    fields = scenario_fields(args)
    with flag_names():
        return [Scenario(**fields, servers=n) for n in servers]
