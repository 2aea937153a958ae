"""A cluster described in its operator's terms, and the scenario it becomes.

The doctor's user says what they know: link rate, round trip, the switch's buffer per port
(or its shared pool), how many servers answer one read and how much each returns, and the
TCP stack (a named preset or this host's kernel). Everything not given takes a documented
datacenter default (``defaults.DEFAULTS``), and the report shows which values were defaults.

Stacks are the core's named presets (``schema.PRESETS``: ``linux``, a stock kernel; ``fast08``,
FAST'08 as ns-2 ran it; ``rfc``, the RFCs with the scenario's defaults; ``ns2``, ``ns3``).
``--this-host`` (``this_host=True``) reads this machine's kernel through ``presets.linux``
(the table ``incastlab validate`` runs): ``tcp_rto_min_us`` if the kernel has it, a
``rto_min`` on the default route (which wins, as in ``tcp_rto_min()``), the congestion
control, SACK/RACK/timestamps, the jiffy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .. import presets, schema, units
from ..errors import UsageError
from ..scenario import Scenario
from .defaults import DEFAULTS, MAX_FAN_IN

#: The stacks a user may name: the core's presets.
STACKS = tuple(sorted(schema.PRESETS))

#: Resolved by the core for the screen and the fixes (a preset's values, or the defaults).
RESOLVED = ("mss", "rwnd", "init_cwnd", "delayed_ack", "timer_granularity", "rto_min")


@dataclass(frozen=True)
class Cluster:
    """One described cluster. Sizes in bytes, rates in bit/s, times in seconds."""

    rate_bps: int
    rtt_s: float
    buffer_bytes: int
    pool_bytes: int | None
    fan_in: int
    response_bytes: int
    stack: str
    stack_fields: dict = field(default_factory=dict)
    stack_table: tuple = ()          # presets.Item rows behind stack_fields (--this-host)
    resolved: dict = field(default_factory=dict)  # RESOLVED fields as the core reads them
    overrides: dict = field(default_factory=dict)  # rto_min, delayed_ack, cc the user set
    defaulted: tuple = ()            # the DEFAULTS keys the user did not give
    source: str = "description"      # or "recording FILE"
    cable_m: tuple = ()              # --cable: metres per tier, when the RTT came from them

    # --- what the simulator and the screen need -----------------------------------
    def fields(self) -> dict[str, Any]:
        """Scenario keywords of this cluster (no servers, no stop condition)."""
        f: dict[str, Any] = dict(self.stack_fields)
        f.update(rate=self.rate_bps, rtt=self.rtt_s, buffer=self.buffer_bytes, sru=self.response_bytes)
        if self.pool_bytes is not None:
            f.update(buffer_sharing="dynamic", buffer_pool=self.pool_bytes)
        f.update(self.overrides)
        return f

    @property
    def mss(self) -> int:
        return int(self.resolved["mss"])

    @property
    def is_linux(self) -> bool:
        return self.stack in ("linux", "this host (Linux)")

    def setting(self, name: str, default: Any) -> Any:
        return self.resolved.get(name, default)

    def inputs(self) -> list[tuple[str, str, bool]]:
        """(name, value, was a default) for the report's first lines."""
        rows = [("rate", units.format_rate(self.rate_bps), "rate" in self.defaulted),
                ("rtt", f"{self.rtt_s * 1e6:.4g} us" + (f" ({cable_text(self.cable_m)})" if self.cable_m else ""),
                 "rtt" in self.defaulted)]
        if self.pool_bytes is not None:
            rows.append(("shared pool", units.format_size(self.pool_bytes) + " (dynamic thresholds, alpha 1)", False))
        else:
            rows.append(("buffer per port", units.format_size(self.buffer_bytes), "buffer" in self.defaulted))
        rows += [("fan-in", str(self.fan_in), "fan_in" in self.defaulted),
                 ("response per server", units.format_size(self.response_bytes), "response" in self.defaulted),
                 ("stack", self.stack, "stack" in self.defaulted)]
        for k, v in self.overrides.items():
            rows.append((k, str(v), False))
        return rows


#: Propagation delay per metre of cable, fibre or copper: about 5 ns/m. Light in standard
#: single-mode fibre travels at c / n_g, group index n_g about 1.468 (Corning SMF-28 Ultra's
#: datasheet: 1.4676 at 1310 nm, 1.4682 at 1550 nm), i.e. 4.9 ns/m; a signal in twinax copper
#: (DAC) travels at a velocity factor of about 0.7 of c, 4.8 ns/m. Rounded up to 5 ns/m.
NS_PER_M = 5.0
CABLE_TIERS_MAX = 8


def cable_rtt_s(metres: tuple[float, ...]) -> float:
    """The round trip over cables of ``metres`` per tier, from a server up to the switch
    where its path meets the client's and down again (the star's 4 links when one tier):
    each tier is crossed twice each way, so 4 x the sum x NS_PER_M. Propagation only."""
    return 4 * sum(metres) * NS_PER_M * 1e-9


def cable_text(metres: tuple[float, ...]) -> str:
    tiers = ",".join(f"{m:g}m" for m in metres)
    return (f"from cables {tiers}: 4 x {sum(metres):g} m x {NS_PER_M:g} ns/m, propagation only; "
            "the hosts' stacks add to a measured RTT")


def parse_cable(text: str, param: str) -> tuple[float, ...]:
    """``2m,30m`` (one length per tier, server side first) or one value; m or km."""
    allowed = (f"cable lengths per tier from the server up, e.g. 2m or 2m,30m (m or km, each 0.1m-10km, "
               f"at most {CABLE_TIERS_MAX} tiers)")
    parts = [p.strip().lower() for p in str(text).split(",")]
    if not 1 <= len(parts) <= CABLE_TIERS_MAX:
        raise UsageError(param, text, allowed)
    out = []
    for p in parts:
        scale = 1000.0 if p.endswith("km") else 1.0 if p.endswith("m") else None
        if scale is None:
            raise UsageError(param, text, allowed)
        try:
            v = float(p[:-2] if scale == 1000.0 else p[:-1]) * scale
        except ValueError:
            raise UsageError(param, text, allowed) from None
        if not 0.1 <= v <= 10_000 or v != v:
            raise UsageError(param, text, allowed)
        out.append(v)
    return tuple(out)


def _param(name: str, cli: bool) -> str:
    return "--" + name.replace("_", "-") if cli else name


def describe(*, rate: str | int | None = None, rtt: str | float | None = None, cable: str | None = None,
             buffer: str | int | None = None,
             pool: str | int | None = None, fan_in: int | str | None = None,
             response: str | int | None = None, stack: str | None = None, this_host: bool = False,
             rto_min: str | float | None = None, delayed_ack: str | float | None = None,
             cc: str | None = None, cli: bool = False, kernel: presets.Kernel | None = None,
             source: str = "description") -> Cluster:
    """Parse a description; a bad value raises UsageError naming the parameter (``--rate``
    style when ``cli``). ``kernel`` stands in for this host's kernel in tests."""
    name = lambda p: _param(p, cli)  # noqa: E731
    cable_m: tuple = ()
    if cable is not None:
        if rtt is not None:
            raise UsageError(name("cable"), cable, f"either {name('rtt')} or {name('cable')} (the RTT from cable "
                             "lengths), not both")
        cable_m = parse_cable(cable, name("cable"))
        rtt = f"{round(cable_rtt_s(cable_m) * 1e12)}ps"
    given = dict(rate=rate, rtt=rtt, buffer=buffer, fan_in=fan_in, response=response, stack=stack)
    defaulted = tuple(k for k, v in given.items() if v is None and not (k == "stack" and this_host)
                      and not (k == "buffer" and pool is not None))
    val = {k: (DEFAULTS[k][0] if v is None and k in DEFAULTS else v) for k, v in given.items()}

    rate_bps = units.parse_rate(val["rate"], name("rate"))
    if not 10**6 <= rate_bps <= 10**12:
        raise UsageError(name("rate"), val["rate"], "a link rate from 1Mbps to 1Tbps")
    rtt_ps = units.parse_duration_ps(val["rtt"], name("rtt"))
    # 1 us .. 100 ms as given; from cables, down to 2 ns (0.1 m, checked by parse_cable)
    if not cable_m and not 10**6 <= rtt_ps <= 10**11:
        raise UsageError(name("rtt"), val["rtt"], "a round trip from 1us to 100ms")
    if pool is not None and buffer is not None:
        raise UsageError(name("pool"), pool, f"either {name('buffer')} (per port) or {name('pool')} (shared), not both")
    buffer_bytes = units.parse_size(val["buffer"], name("buffer"))
    pool_bytes = None
    if pool is not None:
        pool_bytes = units.parse_size(pool, name("pool"))
        buffer_bytes = pool_bytes  # a port may hold the whole pool; dynamic thresholds limit it
    if buffer_bytes < 1500:
        raise UsageError(name("pool" if pool is not None else "buffer"), pool if pool is not None else val["buffer"],
                         "a buffer of at least one full packet (1500B)")
    try:
        n = int(val["fan_in"])
        if isinstance(val["fan_in"], float) and val["fan_in"] != n:
            raise ValueError
    except (TypeError, ValueError):
        raise UsageError(name("fan_in"), val["fan_in"], f"a whole number of servers from 1 to {MAX_FAN_IN}") from None
    if not 1 <= n <= MAX_FAN_IN:
        raise UsageError(name("fan_in"), val["fan_in"], f"a whole number of servers from 1 to {MAX_FAN_IN}")
    response_bytes = units.parse_size(val["response"], name("response"))
    if response_bytes > 2**30:
        raise UsageError(name("response"), val["response"], "at most 1GiB per server")

    overrides: dict[str, Any] = {}
    if rto_min is not None:
        overrides["rto_min"] = units.parse_duration_ps(rto_min, name("rto_min")) / 1e12
    if delayed_ack is not None:
        overrides["delayed_ack"] = units.parse_duration_ps(delayed_ack, name("delayed_ack"), allow_zero=True) / 1e12
    if cc is not None:
        if cc not in ("newreno", "cubic", "dctcp"):
            raise UsageError(name("cc"), cc, "one of newreno, cubic, dctcp")
        overrides["cc"] = cc

    if this_host:
        if stack is not None:
            raise UsageError(name("stack"), stack, f"no stack with {name('this_host')} (the host's kernel is the stack)")
        # --cc picks the senders' algorithm as the testbed's --cc does (the rest stays the host's)
        kernel_cc = {"newreno": "reno", "cubic": "cubic", "dctcp": "cubic"}.get(cc) if cc else None
        try:
            table = presets.linux(cc=kernel_cc, kernel=kernel)
        except UsageError as e:
            raise UsageError(name("this_host"), e.value,
                             f"a host running {e.allowed}; or give {name('cc')} (newreno, cubic, dctcp)") from None
        stack_name = "this host (Linux)"
    else:
        if val["stack"] not in STACKS:
            raise UsageError(name("stack"), val["stack"], "one of " + ", ".join(STACKS))
        stack_name = val["stack"]
        table = []
    stack_fields = presets.scenario_fields(table) if this_host else {"preset": stack_name}
    cluster = Cluster(rate_bps=rate_bps, rtt_s=rtt_ps / 1e12, buffer_bytes=buffer_bytes, pool_bytes=pool_bytes,
                      fan_in=n, response_bytes=response_bytes, stack=stack_name, stack_fields=stack_fields,
                      stack_table=tuple(table), overrides=overrides, defaulted=defaulted, source=source,
                      cable_m=cable_m)
    try:  # the core's own checks (e.g. a buffer below one packet of this MSS), and its resolved values
        s = Scenario(servers=n, blocks=1, duration=None, **cluster.fields())
    except UsageError as e:
        raise UsageError(name(e.param), e.value, e.allowed) from None
    return replace(cluster, resolved={k: getattr(s, k) for k in RESOLVED})
