"""The doctor's typed report and its three faces: a terminal page, JSON, and HTML."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field

from .search import CHAOS_BAND, COLLAPSE_SHARE, EXTRA_SEEDS, JITTER, MAX_POINT_BYTES, MIN_BLOCKS, RTO_SPAN, SHORT_POINT_BYTES

RULE = (f"onset = the smallest fan-in whose goodput falls below {COLLAPSE_SHARE:.0%} of one server's "
        f"(the demo's rule); each point is at least {MIN_BLOCKS} blocks and enough to last {RTO_SPAN} RTOmin at line "
        f"rate (within {MAX_POINT_BYTES // 2**30} GiB a point; a point beyond {SHORT_POINT_BYTES // 2**20} MiB runs that long first, and at full length only if it had a few timeouts), with 0-{JITTER} server think time, seed 1, and "
        f"the mean of seeds 1-{1 + len(EXTRA_SEEDS)} where goodput lands within "
        f"{CHAOS_BAND[0]:.0%}-{CHAOS_BAND[1]:.0%} of one server's (the chaotic band)")


@dataclass(frozen=True)
class Verdict:
    collapse: bool               # at the user's fan-in
    fan_in: int
    goodput_mbps: float
    one_server_mbps: float
    block_time_p99_s: float
    onset: int | None            # None: no collapse up to searched_up_to
    last_good: int | None
    searched_up_to: int
    mechanism: str
    cheapest_fix: str | None     # the cheapest fix (by what it changes) that lifts the point out of collapse
    rule: str = RULE
    # where the blocks' time went at the user's point (seed 1; incastlab.timesplit): over,
    # parts, mean_s, rows (component, what, seconds, share), sentence; None if not measured
    time_split: dict | None = None


@dataclass(frozen=True)
class RankedFix:
    rank: int
    key: str
    name: str
    goodput_mbps: float
    block_time_p99_s: float
    collapse: bool
    takes: str
    setting: str
    side_effects: str
    cost: str                    # what it has to change (fixes.COSTS)
    sweep: str


@dataclass(frozen=True)
class SimPoint:
    label: str
    servers: int
    seeds: list
    goodput_mbps: float
    block_time_p99_s: float
    timeouts: int
    fields: dict


@dataclass(frozen=True)
class Evidence:
    sweep: str                   # reproduces the verdict's points
    points: list[SimPoint]
    screen: str
    osada: dict | None
    validation: list[dict]


@dataclass(frozen=True)
class DoctorReport:
    inputs: list[dict]           # name, value, default (bool)
    stack_table: list[dict]      # the linux preset rows behind the stack
    verdict: Verdict
    fixes: list[RankedFix]
    evidence: Evidence
    simulations: int
    wall_seconds: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    # --- terminal ---------------------------------------------------------------------
    def text(self) -> str:
        v = self.verdict
        out = ["incastlab doctor", ""]
        out.append(cluster_line(self.inputs))
        out.append("")
        head = "COLLAPSE" if v.collapse else "no collapse"
        out.append(f"verdict: {head} at {v.fan_in} servers: {v.goodput_mbps:.0f} Mbps "
                   f"({v.goodput_mbps / max(v.one_server_mbps, 1e-9):.0%} of one server's {v.one_server_mbps:.0f}), "
                   f"p99 block time {_ms(v.block_time_p99_s)}")
        if v.onset is None:
            out.append(f"onset: none up to {v.searched_up_to} servers")
        else:
            held = f" (holds at {v.last_good})" if v.last_good else ""
            out.append(f"onset: {v.onset} servers{held}")
        if v.time_split:
            out.append(f"where the time went: {v.time_split['sentence']}")
        out.extend(_split_table(v))
        out.append(f"mechanism: {v.mechanism}")
        if v.collapse:
            out.append(f"cheapest fix that works: {v.cheapest_fix or 'none of those tried'}")
        out.append(f"rule: {v.rule}")
        out.append("")
        out.append(f"fixes at {v.fan_in} servers, best first:")
        for f in self.fixes:
            out.append(f"  {f.rank}. {f.name}: {f.goodput_mbps:.0f} Mbps, p99 {_ms(f.block_time_p99_s)}"
                       f"{'  (still collapsed)' if f.collapse else ''}")
            out.append(f"     takes: {f.takes} [{f.cost}]")
            out.append(f"     setting: {f.setting}")
            out.append(f"     side effects: {f.side_effects}")
        out.append("")
        out.append("evidence:")
        out.append(f"  screen: {self.evidence.screen}")
        if self.evidence.osada:
            o = self.evidence.osada
            out.append(f"  Osada et al.: BaseBDP {o['base_bdp_pkt']:.1f} packets, n_min {o['n_min']}, wnd_pkt "
                       f"{o['wnd_pkt']}, Q_max^TCP {o['q_max_tcp_packets']} packets")
        pts = [p for p in self.evidence.points if p.label == "cluster"]
        out.append("  simulated: " + ", ".join(f"{p.servers}: {p.goodput_mbps:.0f}" + ("*" if len(p.seeds) > 1 else "")
                                            for p in pts) + " Mbps (* mean of 3 seeds)")
        out.append(f"  reproduce: {self.evidence.sweep}")
        out.append("  each fix: its `sweep` command in --json")
        for d in self.evidence.validation:
            at = f"{d['ratio']:.2f}x at {d['nearest_servers']} servers, " if d["ratio"] is not None else ""
            lo, hi = d["ratio_range"]
            out.append(f"  simulator vs {d['peer']} ({d['metric']}, sim/peer, at {d['rate_bps'] / 1e9:g} Gbps): "
                       f"{at}{lo:.2f}-{hi:.2f}x over its table [{d['source']}]")
        if not self.evidence.validation:
            out.append("  simulator vs peers: no validation run in this RTOmin class")
        for n in self.notes:
            out.append(f"note: {n}")
        out.append(f"({self.simulations} simulations in {self.wall_seconds:.1f} s)")
        return "\n".join(out)

    # --- HTML ----------------------------------------------------------------------------
    def html(self) -> str:
        e = html.escape
        v = self.verdict
        rows = "".join(f"<tr><td>{e(i['name'])}</td><td>{e(str(i['value']))}</td>"
                       f"<td>{'default' if i['default'] else 'given'}</td></tr>" for i in self.inputs)
        fixes = "".join(
            f"<tr><td>{f.rank}</td><td>{e(f.name)}</td><td>{f.goodput_mbps:.0f}</td><td>{_ms(f.block_time_p99_s)}</td>"
            f"<td>{e(f.takes)}</td><td><code>{e(f.setting)}</code></td><td>{e(f.side_effects)}</td></tr>"
            for f in self.fixes)
        pts = "".join(f"<tr><td>{e(p.label)}</td><td>{p.servers}</td><td>{p.goodput_mbps:.0f}</td>"
                      f"<td>{_ms(p.block_time_p99_s)}</td><td>{p.timeouts}</td><td>{len(p.seeds)}</td></tr>"
                      for p in self.evidence.points)
        val = "".join(f"<li>vs {e(d['peer'])} ({e(d['metric'])}): "
                      + (f"{d['ratio']:.2f}x at {d['nearest_servers']} servers, " if d['ratio'] is not None else "")
                      + f"{d['ratio_range'][0]:.2f}-{d['ratio_range'][1]:.2f}x; {e(d['setting'])} "
                      f"<code>{e(d['command'])}</code></li>" for d in self.evidence.validation)
        onset = f"none up to {v.searched_up_to}" if v.onset is None else str(v.onset)
        return f"""<!doctype html><html><head><meta charset="utf-8"><title>incastlab doctor</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}}td,th{{border-bottom:1px solid #ddd;padding:.3em;vertical-align:top}}
table{{border-collapse:collapse}}.bad{{color:#b00}}.ok{{color:#070}}</style></head><body>
<h1>incastlab doctor</h1>
<table>{rows}</table>
<h2 class="{'bad' if v.collapse else 'ok'}">{'Collapse' if v.collapse else 'No collapse'} at {v.fan_in} servers</h2>
<p>{v.goodput_mbps:.0f} Mbps of one server's {v.one_server_mbps:.0f}; p99 block time {_ms(v.block_time_p99_s)};
onset {onset} servers.</p>{_split_html(v)}<p>Mechanism: {e(v.mechanism)}</p><p><small>{e(v.rule)}</small></p>
<h2>Fixes at {v.fan_in} servers</h2>
<table><tr><th>#</th><th>fix</th><th>Mbps</th><th>p99</th><th>takes</th><th>setting</th><th>side effects</th></tr>{fixes}</table>
<h2>Evidence</h2><p>{e(self.evidence.screen)}</p>
<p>Reproduce: <code>{e(self.evidence.sweep)}</code></p>
<table><tr><th>series</th><th>servers</th><th>Mbps</th><th>p99</th><th>timeouts</th><th>seeds</th></tr>{pts}</table>
<ul>{val}</ul>
<p><small>{self.simulations} simulations in {self.wall_seconds:.1f} s</small></p></body></html>
"""


def _split_table(v: Verdict) -> list[str]:
    """The terminal table of where the time went (empty without one)."""
    t = v.time_split
    if not t:
        return []
    out = [f"  where the time went at {v.fan_in} servers (mean over the {t['parts']} blocks' last flows, "
           f"block {_ms(t['mean_s'])}, seed 1):"]
    out += [f"    {r['share']:>4.0%}  {_ms(r['seconds']):>10}  {r['what']}" for r in t["rows"] if r["seconds"] > 0]
    return out


def _split_html(v: Verdict) -> str:
    t = v.time_split
    if not t:
        return ""
    rows = "".join(f"<tr><td>{html.escape(r['what'])}</td><td>{r['share']:.0%}</td><td>{_ms(r['seconds'])}</td></tr>"
                   for r in t["rows"] if r["seconds"] > 0)
    return (f"<h3>Where the time went at {v.fan_in} servers</h3><p>{html.escape(t['sentence'])} "
            f"<small>(mean over the {t['parts']} blocks' last flows, block {_ms(t['mean_s'])}, seed 1)</small></p>"
            f"<table><tr><th>component</th><th>share</th><th>mean</th></tr>{rows}</table>")


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms"


def cluster_line(inputs: list[dict]) -> str:
    """The report's "cluster:" line: each input with its value, defaults marked."""
    return "cluster: " + ", ".join(f"{i['name']} {i['value']}{' (default)' if i['default'] else ''}" for i in inputs)
