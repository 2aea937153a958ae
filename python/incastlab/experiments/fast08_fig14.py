"""FAST'08 Fig. 14 and §5.2: Ethernet flow control (802.3x PAUSE) on one switch and across two.

FAST'08 measured PAUSE on one HP Procurve 2848 ("EFC can significantly improve
performance") and names its flaw, head-of-line blocking: "pause frames pause all traffic
entering an interface, regardless of whether that traffic is causing congestion"; across
more than one switch it is "difficult or impossible". We run the incast beside a victim
bulk flow (its own sender and receiver) on one switch and on two switches joined by a
trunk (the far half of the servers and the victim's sender behind the trunk, the client
and the victim's receiver in front), PAUSE off and on. Nothing in the model names the
victim: a paused trunk stops it because its data enters the client's switch over the same
ingress as the far servers' (``net/pause.rs``). The seed text gives neither the switch's
thresholds nor its buffer: the project's 32 KiB and PAUSE defaults (XOFF above 3000 B of
one ingress waiting, XON at 1500 B, 0xFFFF quanta), RTT 100 us (FAST'08 Table 1) as four
25 us links, RFC TCP rules with 1460 B segments (a testbed figure, not an ns-2 run).

Panel (c) asks whether the blocking is the pause's or the traffic's: the victim's packets
(data and ACKs) go in QoS class 1 of two (the incast in class 0), across two switches,
under 802.3x PAUSE and under IEEE 802.1Qbb PFC, which pauses one class of the trunk only.
Its ports are 64 KiB so each class keeps 32 KiB, the buffer the incast has in (a) and (b).
"""

from __future__ import annotations

from .measure import at, curve, fmt_x, mbps, ratio
from .sources import FAST08
from .spec import Check, Experiment, Plot, Series

ONE_OFF = "one switch, PAUSE off"
ONE_ON = "one switch, PAUSE on"
TWO_OFF = "two switches, PAUSE off"
TWO_ON = "two switches, PAUSE on"
TWO_3X = "two switches, 802.3x, victim in class 1"
TWO_PFC = "two switches, PFC, victim in class 1"
ONE, TWO = "(a) one switch", "(b) two switches, trunk"
CLASSES = "(c) two switches, victim in class 1"
# the incast goodput at which PAUSE is holding the trunk: the far servers keep sending into
# a lossless fabric, so the incast runs near line rate (a collapsed point is far below)
HELD_MBPS = 800
SRC = f"{FAST08} §5.2, Fig. 14"
# where the buffer holds every paused ingress's backlog: XOFF (3000 B) plus what arrives
# before the pause lands (a frame on the upstream wire, 2 x 25 us of link, a frame being
# sent) is about 12 KB per ingress, so 2 of them fit in 32 KiB and 4 nearly do
FEW = (2, 4)
VICTIM = "victim_goodput_mbps"
IN_CLASS_1 = {"qos_classes": 2, "victim_class": 1, "buffer": "64KiB"}


def pause_helps_where_the_buffer_holds_the_backlog(df):
    parts, ok = [], True
    for n in FEW:
        off, on = at(df, ONE_OFF, n), at(df, ONE_ON, n)
        parts.append(f"{n} servers {mbps(off)} -> {mbps(on)} ({fmt_x(ratio(on, off))})")
        # 2x: "significantly"; the model gives 4x or more at these points
        ok &= on >= 2 * off
    return "one switch, incast goodput PAUSE off -> on: " + ", ".join(parts), ok


def pause_helps_everywhere(df):
    off, on = curve(df, ONE_OFF), curve(df, ONE_ON)
    sel = off.index >= 2
    ratios = on[sel] / off[sel]
    per = ", ".join(f"{n}: {mbps(off[n])} -> {mbps(on[n])}" for n in off.index[sel])
    # 1.5x at every point: "significantly", read over Fig. 14's whole sweep
    return (f"one switch, incast goodput PAUSE off -> on at 2+ servers: {per}; worst {fmt_x(ratios.min())}",
            bool((ratios >= 1.5).all()))


def victim_untouched_on_one_switch(df):
    off, on = curve(df, ONE_OFF, VICTIM), curve(df, ONE_ON, VICTIM)
    worst = float((on / off).min())
    # 1 %: its path shares no ingress with the incast, so nothing can pause it
    return (f"one switch, victim goodput PAUSE on / off at worst {worst:.3f} "
            f"(off {mbps(off.mean())}, on {mbps(on.mean())} on average)", worst >= 0.99)


def victim_blocked_across_two(df):
    off, on = curve(df, TWO_OFF, VICTIM), curve(df, TWO_ON, VICTIM)
    sel = off.index >= 2
    a, b = off[sel].mean(), on[sel].mean()
    per = ", ".join(f"{n}: {mbps(off[n])} -> {mbps(on[n])}" for n in off.index[sel])
    # 0.75x: a fall no run-to-run variation explains (one run per point)
    return (f"two switches, victim goodput PAUSE off -> on, mean over 2+ servers {mbps(a)} -> {mbps(b)} "
            f"({fmt_x(ratio(b, a))}); per server count {per}", b < 0.75 * a)


def held_points(df) -> list:
    """Server counts (2+) where 802.3x keeps the incast near line rate across two switches."""
    c = curve(df, TWO_3X)
    return [n for n in c.index if n >= 2 and c[n] >= HELD_MBPS]


def pause_blocks_another_class(df):
    held = held_points(df)
    v = curve(df, TWO_3X, VICTIM)
    per = ", ".join(f"{n}: {mbps(v[n])}" for n in held)
    # a quarter of the link: a victim paused with the trunk sends only between pauses
    ok = bool(held) and all(v[n] < 250 for n in held)
    return f"802.3x, victim in class 1, where the incast runs at {HELD_MBPS}+ Mbps: victim {per or 'no such point'}", ok


def pfc_frees_the_other_class(df):
    held = held_points(df)
    a, b = curve(df, TWO_3X, VICTIM), curve(df, TWO_PFC, VICTIM)
    per = ", ".join(f"{n}: {mbps(a[n])} -> {mbps(b[n])} ({fmt_x(ratio(b[n], a[n]))})" for n in held)
    # 3x: under PFC class 1 is never paused and takes the trunk the far servers' class 0
    # leaves (about half the link); under 802.3x it is held below a quarter
    ok = bool(held) and all(b[n] >= 3 * a[n] for n in held)
    return f"victim in class 1, 802.3x -> PFC, at the same points: {per or 'no such point'}", ok


def victim_table(df) -> str:
    lines = ["Victim flow goodput (Mbps), PAUSE off / on:"]
    for label, off, on in (("one switch", ONE_OFF, ONE_ON), ("two switches", TWO_OFF, TWO_ON)):
        a, b = curve(df, off, VICTIM), curve(df, on, VICTIM)
        lines.append(f"  {label:13s} " + "  ".join(f"{n}: {a[n]:.0f}/{b[n]:.0f}" for n in a.index))
    a, b = curve(df, TWO_3X, VICTIM), curve(df, TWO_PFC, VICTIM)
    lines.append("Victim in class 1 across two switches (Mbps), 802.3x / PFC:")
    lines.append("  " + "  ".join(f"{n}: {a[n]:.0f}/{b[n]:.0f}" for n in a.index))
    return "\n".join(lines)


EXPERIMENT = Experiment(
    name="fast08-fig14",
    title="Ethernet flow control (PAUSE): one switch vs two, with a victim flow",
    source=f"{FAST08} Fig. 14",
    summary="Incast goodput vs. servers with 802.3x PAUSE off and on, on one switch and on two joined by a "
            "trunk, beside a victim bulk flow that never crosses the client's port: PAUSE helps the incast on "
            "one switch while the buffer holds each paused ingress's backlog, and across two it pauses the trunk "
            "and with it the victim (head-of-line blocking), even in another QoS class; 802.1Qbb PFC pauses "
            "the incast's class only and frees the victim.",
    series=(
        Series(ONE_OFF, {"topology": "star", "pause": False}, panel=ONE),
        Series(ONE_ON, {"topology": "star", "pause": True}, panel=ONE),
        Series(TWO_OFF, {"topology": "two_switch", "pause": False}, panel=TWO),
        Series(TWO_ON, {"topology": "two_switch", "pause": True}, panel=TWO),
        Series(TWO_3X, {"topology": "two_switch", "pause": True, **IN_CLASS_1}, panel=CLASSES),
        Series(TWO_PFC, {"topology": "two_switch", "pause": True, "pfc": True, **IN_CLASS_1}, panel=CLASSES),
    ),
    base={"victim": True, "buffer": "32KiB"},
    values=(1, 2, 3, 4, 6, 8, 12, 16),
    quick_values=(1, 2, 4, 8, 16),
    # (c) draws the victim: the incast's goodput there is the same under 802.3x and PFC
    plot=Plot(y="goodput_mbps", panel_y={CLASSES: (VICTIM, "Victim goodput (Mbps)")}),
    checks=(
        Check("\"EFC can significantly improve performance\" on one switch: incast goodput with PAUSE at least 2x "
              "without at 2 and 4 servers, where the 32 KiB buffer holds each paused ingress's backlog", SRC,
              pause_helps_where_the_buffer_holds_the_backlog),
        Check("... and at every server count from 2 to 16 (at least 1.5x). Per-ingress PAUSE is lossless only "
              "while the buffer holds every ingress's XOFF plus what arrives before its pause lands (about 12 KB "
              "each with 25 us links): a failure here says a 32 KiB port cannot, beyond a few servers", SRC,
              pause_helps_everywhere),
        Check("On one switch the victim, whose ingress never fills, keeps its goodput with PAUSE (within 1 %)",
              SRC, victim_untouched_on_one_switch),
        Check("\"pause frames pause all traffic entering an interface, regardless of whether that traffic is "
              "causing congestion\": across two switches the victim's mean goodput over 2+ servers falls below "
              "0.75x with PAUSE", SRC, victim_blocked_across_two),
        Check("... \"regardless of whether that traffic is causing congestion\": with the victim in QoS class 1 "
              "of two, 802.3x still holds it below 250 Mbps wherever the paused trunk keeps the incast at "
              f"{HELD_MBPS}+ Mbps", SRC, pause_blocks_another_class),
        Check("IEEE 802.1Qbb PFC pauses only the congested class: at those points the victim in class 1 gets at "
              "least 3x its 802.3x goodput", f"{SRC}; IEEE 802.1Qbb-2011", pfc_frees_the_other_class),
    ),
    report=victim_table,
)
