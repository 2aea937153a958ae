"""``Scenario``: one simulated incast experiment, written the way people write it.

Its fields are the core's schema (``incastlab.schema``, ``crates/sim/src/schema.rs``;
the table is ``docs/scenario-fields.md``): nothing about a field (name, unit, range,
default, doc) is written here. Fields take human units (``"32KiB"``, ``"1Gbps"``,
``"100us"``, ``"0.1%"``) or plain numbers in the SI base unit (bytes, bit/s, seconds), and
read back in those SI units: ``Scenario(servers=1, rtt="100us").rtt == 0.0001``.

A Scenario is checked twice, both times against the one schema: each field against its
own range here, as it is parsed, so a refusal speaks in the units its user wrote; then
the whole scenario by the core (``_native.validate_scenario``), which also resolves
fields whose default depends on others (RTOmin under TCPFG, the advertised window under
CCS and NCCS) and derives what the simulator runs (the schemes' thresholds from Osada et
al.'s model). A refusal from either is a ``UsageError`` naming the field its user set.

Defaults are FAST'08 Table 1 (``000_315d806dde942a9f.txt`` §3.1) with a 32 KiB buffer,
the buffer of its Fig. 4 collapse; ``docs/defaults.md`` gives each one's source. A preset
(``Scenario(servers=16, preset="fast08")``: FAST'08 as ns-2 ran it) gives its values to the
fields not given; the core owns the presets (``crates/sim/src/preset.rs``) and applies them,
``incastlab simulate --preset-table`` and ``docs/scenario-fields.md`` list them.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, create_model, field_serializer
from pydantic import field_validator, model_validator

from . import schema
from .errors import UsageError
from .schema import BY_NAME, BY_PUBLIC, FIELDS, PRESETS

PS_PER_US = 10**6
PS_PER_MS = 10**9
PS_PER_S = 10**12

# The Python type of each unit's public value.
_TYPES = {"count": int, "bytes": int, "bits_per_second": int, "picoseconds": float, "fraction": float,
          "per_second": float, "flag": bool, "choice": str, "weights": str, "durations": str}


class _ScenarioBase(BaseModel):
    """What ``Scenario`` does; its fields come from the schema (below)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    # What the core derived at validation (link delay, buffer as ports count it, the
    # scheduling scheme with its thresholds): ``derived()``.
    _derived: dict = PrivateAttr(default_factory=dict)

    # --- construction: every refusal is one UsageError naming the field ---------------

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise _usage_error(e) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> "Scenario":  # type: ignore[override]
        if isinstance(obj, dict):
            return cls(**obj)
        return super().model_validate(obj, **kwargs)

    @field_validator("*", mode="before")
    @classmethod
    def _parse(cls, v: Any, info) -> Any:
        return BY_PUBLIC[info.field_name].parse(v)

    @model_validator(mode="after")
    def _check_in_core(self) -> "_ScenarioBase":
        from . import _native

        # only the fields given: the core fills the others from the preset, then from the
        # schema's defaults (crates/sim/src/preset.rs), and resolves the ones that depend
        # on others (RTOmin under TCPFG, the window under CCS)
        given = {f.name: f.to_native(getattr(self, f.public)) for f in FIELDS if f.public in self.model_fields_set}
        try:
            checked = json.loads(_native.validate_scenario(json.dumps(given)))
        except _native.ScenarioError as e:
            raise self._refusal(*e.args) from None
        for f in FIELDS:
            if f.public not in self.model_fields_set or getattr(self, f.public) is None:
                object.__setattr__(self, f.public, f.to_public(checked["spec"][f.name]))
        self._derived = checked["derived"]
        return self

    def _refusal(self, param: str, value: str, allowed: str, related: list[str]) -> UsageError:
        """The core's refusal, blaming the field its user set: of two fields that conflict
        (``rto_min`` above ``rto_max``), the one given rather than the default; a value
        the preset gave says so."""
        given = [n for n in (param, *related) if BY_NAME[n].public in self.model_fields_set]
        blamed = BY_NAME[given[0] if given else param]
        if blamed.name != param:
            value = blamed.format(getattr(self, blamed.public))
        preset = PRESETS[self.preset].values()
        culprit = BY_NAME[param]
        if culprit.public not in self.model_fields_set and culprit.public in preset:
            allowed += f" ({culprit.public}={culprit.format(preset[culprit.public])} comes from preset {self.preset})"
        return UsageError(blamed.public, value, allowed)

    # --- output ----------------------------------------------------------------------

    def __repr_args__(self):
        # the fields given, in the units people write: Scenario(servers=16, rtt='100us'),
        # which eval() reads back
        dumped = self.model_dump()
        for f in FIELDS:
            if f.public == "servers" or f.public in self.model_fields_set:
                yield f.public, dumped[f.public]

    @field_serializer("*")
    def _dump(self, v: Any, info) -> Any:
        # quantities as exact text, so Scenario(**s.model_dump()) == s
        return BY_PUBLIC[info.field_name].dump(v)

    def _native_values(self) -> dict[str, Any]:
        return {f.name: f.to_native(getattr(self, f.public)) for f in FIELDS}

    def to_native(self) -> dict[str, Any]:
        """The scenario in the core's base units and names (``docs/native-api.md``)."""
        return self._native_values()

    def ps(self, field: str) -> int:
        """A duration field in the core's whole picoseconds (``s.ps("rtt")``)."""
        return BY_PUBLIC[field].to_native(getattr(self, field))

    def given(self) -> dict[str, Any]:
        """The fields its user set, as ``model_dump`` writes them: what ``with_servers``
        and sweeps start from, so a default that depends on other fields follows them."""
        dumped = self.model_dump()
        return {name: dumped[name] for name in self.model_fields_set}

    def derived(self) -> dict[str, Any]:
        """What the core derived: ``link_delay_ps``, ``buffer_admission``,
        ``buffer_packets`` (as ports count it), ``mitigation`` (the scheme and its
        thresholds from Osada et al.'s model)."""
        return dict(self._derived)

    def result_fields(self) -> dict[str, Any]:
        """Every field under its result column, in SI units (``rto_min_s``, ``buffer_bytes``)."""
        return {f.result_name: getattr(self, f.public) for f in FIELDS}

    def with_servers(self, servers: int) -> "Scenario":
        """This scenario with another number of servers (validated again)."""
        return Scenario(**{**self.given(), "servers": servers})

    def is_flows(self) -> bool:
        """One-shot flows (incast, shuffle, permutation; docs/fabrics.md): a point runs
        until they are delivered and reports completion times, not blocks."""
        return self.workload in FLOW_WORKLOADS

    def block_part_bytes(self) -> int:
        """Bytes one server returns per block (the SRU, or the block split over N)."""
        return self.block // self.servers if self.block is not None else self.sru

    def admission(self) -> str:
        """The buffer admission rule the core applies (an unset one follows buffer_packets)."""
        return self._derived["buffer_admission"]

    def buffer_text(self) -> str:
        """The switch buffer as the core counts it: "32KiB", "31 packets", "32KiB (MTU slots)"."""
        rule = self.admission()
        if rule == "packets":
            return f"{self._derived['buffer_packets']} packets"
        return BY_PUBLIC["buffer"].format(self.buffer) + (" (MTU slots)" if rule == "mtu_slots" else "")

    def label(self) -> str:
        """A short description for plot legends and table headings: the workload, the
        buffer, the timers and the rules in force, then every other field given that
        differs from its default, so two runs that differ in any field read differently."""
        fmt = {f.public: f.format(getattr(self, f.public)) for f in FIELDS}
        if self.workload == "riak":
            load = (f"riak {fmt['get_rate']} gets/s per node, R {self.read_quorum} of {self.replicas}, "
                    f"{fmt['reply_size_dist']} replies of {fmt['reply_bytes']}")
        elif self.is_flows():
            size = f"block {fmt['block']}" if self.block is not None else f"flows of {fmt['sru']}"
            load = f"{self.workload} {size}"
        else:
            load = f"block {fmt['block']}" if self.block is not None else f"SRU {fmt['sru']}"
        parts = [load, f"buffer {self.buffer_text()}", f"RTOmin {fmt['rto_min']}", fmt["rate"]]
        if self.preset != "rfc":
            parts.insert(0, f"preset {self.preset}")
        if self.delayed_ack:
            parts.append(f"delACK {fmt['delayed_ack']}")
        parts.append(f"LT {fmt['limited_transmit']}")
        if self.tcp_rules != "rfc":
            parts.append({"ns2": "ns-2's TCP", "ns3": "ns-3's TCP"}[self.tcp_rules])
        # a field the preset sets and the caller gave otherwise reads as such
        # (`--preset fast08 --mss 1460` shows MSS 1460B, not the preset's 1000 B unsaid)
        preset = PRESETS[self.preset].values()

        def stands_out(public: str) -> bool:
            value = getattr(self, public)
            return value != BY_PUBLIC[public].public_default or value != preset.get(public, value)

        if stands_out("mss"):
            parts.append(f"MSS {fmt['mss']}")
        shown = {"preset", "servers", "block", "sru", "buffer", "buffer_packets", "buffer_admission", "rto_min", "rate",
                 "delayed_ack", "limited_transmit", "tcp_rules", "mss", "duration", "blocks", "seed", "workload",
                 "get_rate", "read_quorum", "replicas", "reply_size_dist", "reply_bytes"}
        for f in FIELDS:
            if f.public not in shown and f.public in self.model_fields_set and stands_out(f.public):
                parts.append(f"{f.public} {fmt[f.public]}")
        return ", ".join(parts)


# The workloads of one-shot flows, as the core names them (app/flows.rs).
FLOW_WORKLOADS = ("incast", "shuffle", "permutation")


def _field_definition(f: schema.FieldSpec) -> tuple[Any, Any]:
    from pydantic import Field

    kind = _TYPES[f.unit]
    annotation = kind | None if f.optional else kind
    if f.public == "servers":  # the one field every scenario must give
        return annotation, Field(..., description=f.doc)
    return annotation, Field(default=f.public_default, description=f.doc)


Scenario = create_model("Scenario", __base__=_ScenarioBase, __module__=__name__,
                        **{f.public: _field_definition(f) for f in FIELDS})
Scenario.__doc__ = """One synchronized-read incast experiment on a single-switch star.

Build with keywords, ``Scenario(servers=16, buffer="64KiB", rto_min="200us", duration="2s")``,
or from a preset, ``Scenario(servers=16, preset="fast08")`` (a field given wins over the preset's);
every field, its unit, default and range: ``docs/scenario-fields.md``. A value that is not
allowed raises ``incastlab.errors.UsageError`` naming the field.
"""


@functools.cache
def field_names() -> tuple[str, ...]:
    """The Scenario keywords, in the schema's order."""
    return tuple(f.public for f in FIELDS)


def _usage_error(e: ValidationError) -> UsageError:
    """The first problem pydantic found, as a UsageError naming the field."""
    err = e.errors()[0]
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, UsageError):
        return cause
    field = ".".join(str(p) for p in err.get("loc", ())) or "scenario"
    if err.get("type") == "extra_forbidden":
        return UsageError(field, err.get("input"), "one of the Scenario fields: " + ", ".join(field_names()))
    if err.get("type") == "missing":
        return UsageError(field, None, "a value (this field is required)")
    return UsageError(field, err.get("input"), err.get("msg", "a valid value"))
