"""Presets: the core's named presets as tables, and a real TCP stack read item by item.

The presets themselves (``fast08``, ``ns2``, ``ns3``, ``linux``, ``rfc``) are the core's
(``crates/sim/src/preset.rs``, read through ``incastlab.schema.PRESETS``); ``table`` renders
them for ``incastlab simulate --preset-table`` and the docs.

The core's ``linux`` preset is a stock kernel, so a scenario means the same everywhere. The
kernel this machine runs, as the namespace testbed sees it, is ``linux(...)``: each row
names a behaviour, what the running kernel says about it (a sysctl, the routes, the
timer tick, or a constant of the kernel's source where there is no knob), the scenario
field and value the simulator runs for it, and whether the simulator models it. The
kernel values are read when the preset is built, so the table describes this machine,
and the scenario follows them (``tcp_sack = 0`` gives NewReno recovery, a route's
``initcwnd`` the initial window). ``incastlab validate`` runs the simulator with it
(``--preset-table`` prints it); docs/testbed.md, "Simulator vs testbed", has it as measured.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import schema, units
from .errors import UsageError

# The testbed's --cc (a kernel module name) -> the simulator's cc.
CC_OF_KERNEL = {"cubic": "cubic", "reno": "newreno"}

# Kernel constants where Linux has no knob (include/net/tcp.h).
TCP_INIT_CWND = 10          # segments
TCP_RTO_MIN_S = 0.2         # HZ / 5
TCP_DELACK_MIN_S = 0.040    # HZ / 25
MSS_WITH_TIMESTAMPS = 1448  # 1500 - 20 (IP) - 20 (TCP) - 12 (timestamp option, padded)
MSS_PLAIN = 1460


@dataclass(frozen=True)
class Item:
    """One row: a behaviour, the kernel's value, the simulator's field=value, modelled or not."""

    what: str
    kernel: str
    simulator: str
    modelled: str
    fields: dict[str, Any] = field(default_factory=dict)  # what this row sets in the scenario

    @property
    def is_modelled(self) -> bool:
        return self.modelled.startswith("yes")


@dataclass
class Kernel:
    """Where the preset reads the running kernel; tests point it at a fake one."""

    sysctl_dir: Path = Path("/proc/sys/net/ipv4")
    module_dir: Path = Path("/sys/module")
    routes: Callable[[], str] = lambda: _ip_route()
    jiffy: Callable[[], float | None] = lambda: _jiffy()

    def sysctl(self, name: str) -> str | None:
        try:
            return " ".join((self.sysctl_dir / name).read_text().split())  # tcp_rmem's tabs too
        except OSError:
            return None

    def module_param(self, module: str, param: str) -> str | None:
        try:
            return (self.module_dir / module / "parameters" / param).read_text().strip()
        except OSError:
            return None

    def route_metric(self, name: str) -> str | None:
        """A metric (``initcwnd``, ``rto_min``) on the default route, if set there."""
        for line in self.routes().splitlines():
            if line.startswith("default"):
                m = re.search(rf"\b{name} (?:lock )?(\S+)", line)
                return m.group(1) if m else None
        return None


def _ip_route() -> str:
    try:
        return subprocess.run(["ip", "route", "show"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _jiffy() -> float | None:
    from .testbed.compare import jiffy_seconds
    return jiffy_seconds()


def in_this_build(public_name: str, fields: Any = None) -> bool:
    """The scenario schema has this field. A feature check, not a version guess: RACK-TLP and
    PRR land as scenario fields (``rack_tlp``, ``prr``), and the rows that name them become
    modelled, and the preset sets them, in the first build whose schema has them."""
    return public_name in (schema.BY_PUBLIC if fields is None else fields)


def _newer_field(what: str, kernel: str, public: str, on: bool, kernel_on: bool, fields: Any) -> Item:
    sim = f"{public}={on}"
    if not in_this_build(public, fields):
        return Item(what, kernel, sim, f"no: not in this build (no `{public}` in the scenario schema)")
    if on != kernel_on:  # RACK without TLP or TLP without RACK: the field has both or neither
        return Item(what, kernel, sim, f"no: `{public}` turns RACK and TLP on together", {public: on})
    return Item(what, kernel, sim, "yes", {public: on})


def _value(raw: str | None) -> str:
    return "unreadable" if raw is None else raw


def linux(*, cc: str | None, quickack: bool = False, rto_min_s: float | None = None,
          rwnd_clamp: int | None = None, kernel: Kernel | None = None, fields: Any = None) -> list[Item]:
    """The ``linux`` preset's table for senders running congestion control `cc` (the testbed's
    ``--cc``; None: the kernel's default). `rto_min_s` is the testbed's per-route RTOmin (None:
    the kernel's), `quickack` and `rwnd_clamp` the testbed's socket options. `fields`
    stands in for the schema's field names in tests. Refuses a cc the simulator lacks."""
    k = kernel or Kernel()
    default_cc = k.sysctl("tcp_congestion_control")
    algo = cc or default_cc
    if algo not in CC_OF_KERNEL:
        flag = "--cc" if cc else "--cc (not given: the kernel's default, net.ipv4.tcp_congestion_control)"
        raise UsageError(flag, algo,
                         "cubic or reno: the congestion controls the simulator models (cc=cubic, cc=newreno)")
    items = [Item("congestion control", f"testbed --cc {algo} (default: {_value(default_cc)})" if cc else
                  f"net.ipv4.tcp_congestion_control = {algo}",
                  f"cc={CC_OF_KERNEL[algo]}", "yes", {"cc": CC_OF_KERNEL[algo]})]
    if algo == "cubic":
        hystart = k.module_param("tcp_cubic", "hystart")
        items.append(Item("CUBIC slow start: HyStart", f"tcp_cubic hystart = {_value(hystart)}",
                          "RFC 5681 slow start", "no: RFC 9438 §4.10 allows it; HyStart is not modelled"))

    sack = k.sysctl("tcp_sack")
    tcp = "sack" if sack != "0" else "newreno"
    items.append(Item("SACK loss recovery (RFC 2018, RFC 6675)", f"net.ipv4.tcp_sack = {_value(sack)}",
                      f"tcp={tcp}", "yes", {"tcp": tcp}))

    recovery = k.sysctl("tcp_recovery")
    early = k.sysctl("tcp_early_retrans")
    rack = recovery is not None and recovery.isdigit() and int(recovery) & 1 == 1
    tlp = early in ("3", "4")
    items.append(_newer_field("RACK loss detection (RFC 8985)", f"net.ipv4.tcp_recovery = {_value(recovery)}"
                              f" (0x1: RACK {'on' if rack else 'off'})", "rack_tlp", rack and tlp, rack, fields))
    items.append(_newer_field("tail loss probe (RFC 8985 §7)", f"net.ipv4.tcp_early_retrans = {_value(early)}"
                              f" (3, 4: TLP {'on' if tlp else 'off'})", "rack_tlp", rack and tlp, tlp, fields))
    items.append(_newer_field("PRR during recovery (RFC 6937)", "always (tcp_cwnd_reduction; no knob)",
                              "prr", True, True, fields))

    ts = k.sysctl("tcp_timestamps")
    on = ts != "0"
    mss = MSS_WITH_TIMESTAMPS if on else MSS_PLAIN
    items.append(Item("timestamps (RFC 7323): RTT sample per ACK", f"net.ipv4.tcp_timestamps = {_value(ts)}",
                      f"timestamps={on}, mss={mss}", "yes", {"timestamps": on, "mss": mss}))

    iw_route = k.route_metric("initcwnd")
    iw = int(iw_route) if iw_route and iw_route.isdigit() else TCP_INIT_CWND
    where = (f"default route initcwnd {iw_route}" if iw_route
             else f"no initcwnd on the default route: TCP_INIT_CWND = {iw}")
    items.append(Item("initial window", where, f"init_cwnd={iw}", "yes", {"init_cwnd": iw}))

    delack = 0 if quickack else TCP_DELACK_MIN_S
    items.append(Item("delayed ACK", "testbed --quickack: TCP_QUICKACK re-armed after every read" if quickack
                      else f"TCP_DELACK_MIN = {TCP_DELACK_MIN_S * 1e3:g} ms", f"delayed_ack={delack:g}", "yes",
                      {"delayed_ack": delack}))
    if not quickack:
        items.append(Item("quick-ACK mode at the start and after idle",
                          "always (tcp_enter_quickack_mode; no knob)", "-", "no"))

    if rto_min_s is not None:
        rto_kernel, rto = f"route rto_min {rto_min_s * 1e3:g} ms (testbed --rto-min)", rto_min_s
    else:
        # a route's rto_min wins over the sysctl (tcp_rto_min() reads the route metric first)
        route_rto = k.route_metric("rto_min")
        rto_us = k.sysctl("tcp_rto_min_us")
        if route_rto:
            rto, rto_kernel = units.parse_duration_ps(route_rto, "rto_min") / 1e12, f"default route rto_min {route_rto}"
        elif rto_us and rto_us.isdigit():
            rto, rto_kernel = int(rto_us) / 1e6, f"net.ipv4.tcp_rto_min_us = {rto_us}"
        else:
            rto, rto_kernel = TCP_RTO_MIN_S, f"TCP_RTO_MIN = {TCP_RTO_MIN_S * 1e3:g} ms"
    items.append(Item("minimum RTO", rto_kernel, f"rto_min={rto:g}", "yes", {"rto_min": rto}))

    jiffy = k.jiffy()
    if jiffy:
        items.append(Item("timers on jiffies", f"HZ = {1 / jiffy:g} (tick {jiffy * 1e3:g} ms, probed with "
                          "TCP_RTO_MIN_US)", f"timer_granularity={jiffy:g}, timer_ticks=True", "yes",
                          {"timer_granularity": jiffy, "timer_ticks": True}))
    else:
        exact = {"timer_ticks": False, "timer_granularity": schema.BY_PUBLIC["timer_granularity"].public_default}
        items.append(Item("timers on jiffies", "tick not detected (TCP_RTO_MIN_US needs Linux 6.15)",
                          "exact timers", "no", exact))

    idle = k.sysctl("tcp_slow_start_after_idle")
    restart = idle != "0"
    items.append(Item("restart from the initial window after idle", f"net.ipv4.tcp_slow_start_after_idle = "
                      f"{_value(idle)}", f"slow_start_after_idle={restart}", "yes", {"slow_start_after_idle": restart}))

    rmem = k.sysctl("tcp_rmem")
    if rwnd_clamp:
        items.append(Item("receive window", f"testbed --rwnd-clamp {rwnd_clamp} (TCP_WINDOW_CLAMP)",
                          f"rwnd={rwnd_clamp}", "yes", {"rwnd": rwnd_clamp}))
    else:
        items.append(Item("receive window", f"autotuned, net.ipv4.tcp_rmem = {_value(rmem)}", "rwnd=1GiB",
                          "yes: never the limit at these windows", {"rwnd": "1GiB"}))

    frto = k.sysctl("tcp_frto")
    items.append(Item("F-RTO spurious timeout detection (RFC 5682)", f"net.ipv4.tcp_frto = {_value(frto)}", "-", "no"))
    return items


def scenario_fields(items: list[Item]) -> dict[str, Any]:
    """The scenario keywords the table's rows set."""
    out: dict[str, Any] = {}
    for it in items:
        out.update(it.fields)
    return out


def linux_scenario(items: list[Item], *, servers: int, sru: int, block: int | None, buffer: int, rate: int,
                   rtt_s: float, blocks: int, seed: int = 1):
    """The testbed's scenario: the core's ``linux`` preset with the running kernel's values,
    `items` (``linux(...)``), given explicitly over it."""
    from .scenario import Scenario
    part = dict(block=block) if block is not None else dict(sru=sru)  # fixed-block or fixed-SRU mode
    return Scenario(preset="linux", servers=servers, **part, buffer=buffer, rate=rate, rtt=rtt_s, blocks=blocks,
                    duration=None, seed=seed, **scenario_fields(items))


def render(items: list[Item], markdown: bool = False) -> str:
    """The table, as text for the terminal or as markdown for the docs."""
    head = ["item", "kernel", "simulator", "modelled"]
    rows = [[it.what, it.kernel, it.simulator, it.modelled] for it in items]
    if markdown:
        return "\n".join(["| " + " | ".join(head) + " |", "|---|---|---|---|"] +
                         ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows)


# --- the core's presets as tables -------------------------------------------------------


def table(markdown: bool = False, kernel: Kernel | None = None,
          presets: dict[str, schema.PresetSpec] | None = None) -> str:
    """Every preset of the core (or of ``presets``), with the fields it sets and why: as
    text for ``incastlab simulate --preset-table`` (with where this host's kernel differs
    from the ``linux`` preset's stock values), or as the markdown section of the docs."""
    chosen = schema.PRESETS if presets is None else presets
    return _markdown(chosen) if markdown else _text(chosen, kernel)


def _markdown(presets: dict[str, schema.PresetSpec]) -> str:
    out = ["## Presets", "",
           "`preset` names a set of fields the core keeps together (`crates/sim/src/preset.rs`):",
           "`--preset fast08` on `incastlab simulate`, `preset=fast08` in a sweep grid or study file,",
           "`Scenario(preset=\"fast08\")` in Python. Its values stand where a field is not given; a field",
           "given explicitly wins; a field it does not name keeps the default above. Every result row",
           "names its preset (`preset` column). `incastlab simulate --preset-table` prints this table.", ""]
    for p in presets.values():
        out += [f"### `{p.name}`", "", p.doc + ".", ""]
        if p.host:
            out += ["On a host: " + p.host + ".", ""]
        if not p.settings:
            out += ["It sets no field.", ""]
            continue
        out += ["| field | value | why |", "|---|---|---|"]
        out += [f"| `{s.field.public}` | {s.text} | {_cell(s.why)} |" for s in p.settings]
        out.append("")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _text(presets: dict[str, schema.PresetSpec], kernel: Kernel | None) -> str:
    import textwrap

    out = []
    for p in presets.values():
        out.append(f"{p.name}: " + textwrap.fill(p.doc, 100, subsequent_indent="  "))
        if not p.settings:
            out.append("  (sets no field)")
        width = max((len(s.field.public) + 1 + len(s.text) for s in p.settings), default=0) + 4
        for s in p.settings:
            out.append(textwrap.fill(s.why, 100, initial_indent=f"  {s.field.public}={s.text}".ljust(width),
                                     subsequent_indent=" " * width))
        if p.host:
            out.append("  " + textwrap.fill("on a host: " + p.host, 100, subsequent_indent="  "))
            out.append("  this host: " + host_differences(kernel))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def host_differences(kernel: Kernel | None = None) -> str:
    """Where the running kernel differs from the ``linux`` preset's stock values, read as
    ``incastlab validate`` reads it (its congestion control, if the simulator has it)."""
    k = kernel or Kernel()
    default_cc = k.sysctl("tcp_congestion_control")
    notes = []
    if default_cc not in CC_OF_KERNEL:
        notes.append(f"net.ipv4.tcp_congestion_control = {_value(default_cc)}, which the simulator does not "
                     "model (validate runs --cc cubic or reno)")
    try:
        read = scenario_fields(linux(cc=default_cc if default_cc in CC_OF_KERNEL else "cubic", kernel=k))
    except UsageError as e:  # pragma: no cover - linux() refuses only a cc, chosen above
        return str(e)
    stock = schema.PRESETS["linux"].values()
    for name, value in read.items():
        f = schema.BY_PUBLIC[name]
        ours = stock.get(name, f.public_default if f.default is not None else None)
        theirs = f.parse(value)
        if ours is not None and theirs != ours:
            notes.append(f"{name}={f.format(theirs)} (stock {f.format(ours)})")
    return "; ".join(notes) if notes else "the same as the stock values"
