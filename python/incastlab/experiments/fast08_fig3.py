"""FAST'08 Fig. 3: QoS partitions and shared buffers against the onset of the collapse
(000_315d806dde942a9f.txt §4.1).

The paper measured real switches: "A common implementation technique for providing QoS is to
partition the output queue for each class of service. As a result, disabling QoS increases the
effective size of the output queues ... Figure 3(b) shows that disabling QoS on the Force10 S50
significantly delays the onset of Incast", and "most switches dynamically allocate each link's
output buffer from a shared memory pool". It gives neither the S50's buffer nor its number of
classes, so this is the mechanism, not the S50: a 128 KiB port with QoS off, the same port split
equally into 2 and 4 classes with all the storage traffic in class 0 (one class of service: its
packets carry no priority marks, so the partition only shrinks the incast's buffer), and a shared
pool of 512 KiB (four such ports' memory) with Choudhury-Hahne dynamic thresholds, alpha 1
(`net::buffer`, `net::qos`; docs/model.md, "Switch buffers"). Otherwise FAST'08 Table 1
(1 Gbps, RTT 100 us, SRU 256 KiB, NewReno, RTOmin 200 ms) under the RFC rules, the buffer
counted in bytes (partitions and pools count bytes).
"""

from __future__ import annotations

from . import measure
from .measure import at, curve, rows
from .sources import FAST08
from .spec import Check, Experiment, Plot, Series

PORT_KIB = 128
POOL_KIB = 4 * PORT_KIB
SERVERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128)
SRC = f"{FAST08} §4.1, Fig. 3"
MTU = 1500

OFF = f"QoS off: {PORT_KIB}KiB port"
POOL = f"shared pool {POOL_KIB}KiB, alpha 1"


def qos(n: int) -> str:
    return f"QoS on, {n} classes: {PORT_KIB // n}KiB for incast"


# an onset beyond the sweep counts as later than its end ("later" is then not shown as a number)
BEYOND = SERVERS[-1] * 2


def onset(df, series: str) -> int | None:
    """`measure.onset` of `series` (fast08-fig6's rule: curves of large buffers bend and
    level off rather than collapse by 10x)."""
    return measure.onset(curve(df, series))


def onset_for_good(df, series: str) -> int | None:
    """Fewest servers from which every larger N is below 75 % of one server's: shown beside
    `onset` because single curves dip and recover (WREN'09's collapse and recovery regions;
    here the 128 KiB port at 6 servers, every seed), which the first-below rule reads as the onset."""
    c = curve(df, series)
    high = c[c >= 0.75 * c.iloc[0]]
    after = c.index[c.index > high.index[-1]]
    return int(after[0]) if len(after) else None


def shown(n: int | None) -> str:
    return str(n) if n else f">{SERVERS[-1]}"


def disabling_qos_delays_onset(df):
    ons = {s: onset(df, s) for s in (qos(4), qos(2), OFF)}
    on4, on2, off = (ons[s] or BEYOND for s in (qos(4), qos(2), OFF))
    text = ", ".join(f"{s}: {shown(n)} (below for good from {shown(onset_for_good(df, s))})" for s, n in ons.items())
    # "significantly": with a quarter of the buffer, FAST'08 Fig. 6 (onset ~ proportional to
    # the buffer) predicts ~4x; the bar is 2x, a factor 2 for the grid's 1.2-1.5x steps
    return f"onset (first N < 75% of 1 server) {text}", on4 < on2 <= off and off >= 2 * on4


def incast_class_holds_its_share(df):
    parts, ok = [], True
    for s, limit in ((qos(4), PORT_KIB * 1024 // 4), (qos(2), PORT_KIB * 1024 // 2), (OFF, PORT_KIB * 1024)):
        most = int(rows(df, s)["max_queue_bytes"].max())
        parts.append(f"{s}: {most} B of {limit} B")
        # at the collapsed points the class fills to within one packet of its limit
        ok &= limit - MTU < most <= limit
    return "most bytes queued at the client's port: " + "; ".join(parts), ok


def pool_beats_static_share(df):
    most = int(rows(df, POOL)["max_queue_bytes"].max())
    bound = POOL_KIB * 1024 // 2 + MTU  # alpha/(1+alpha) of the pool, one packet over at most
    on_pool, on_off = onset(df, POOL), onset(df, OFF)
    text = (f"client port held up to {most} B (static port {PORT_KIB * 1024} B, DT bound {bound} B); "
            f"onset {shown(on_pool)} vs {shown(on_off)} with QoS off (below for good from "
            f"{shown(onset_for_good(df, POOL))} vs {shown(onset_for_good(df, OFF))})")
    later = (on_pool or BEYOND) > (on_off or BEYOND)
    return text, PORT_KIB * 1024 < most <= bound and later


def one_server_unaffected(df):
    g = {s: at(df, s, 1) for s in (OFF, qos(2), qos(4), POOL)}
    lo, hi = min(g.values()), max(g.values())
    # one flow's window (20 x 1460 B) fits even the 32 KiB class: nothing is dropped and the
    # one FIFO class sends in the same order, so every series gives the same goodput exactly
    return f"1 server: {lo:.0f}-{hi:.0f} Mbps across the series", hi == lo


EXPERIMENT = Experiment(
    name="fast08-fig3",
    title="QoS partitions and a shared pool: onset of the collapse",
    source=f"{FAST08} Fig. 3",
    summary="Goodput vs. servers with a 128 KiB port whole (QoS off), split into 2 or 4 QoS classes with the "
            "incast in one, and a 512 KiB shared pool with dynamic thresholds: partitions bring the collapse "
            "earlier, a shared pool lets the congested port take more than a static port and delays it.",
    series=(Series(OFF, {}), Series(qos(2), {"qos_classes": 2}), Series(qos(4), {"qos_classes": 4}),
            Series(POOL, {"buffer_sharing": "dynamic", "buffer_pool": f"{POOL_KIB}KiB", "dt_alpha": 1.0})),
    base={"buffer": f"{PORT_KIB}KiB", "buffer_admission": "bytes"},
    values=SERVERS,
    quick_values=(1, 4, 8, 16, 32, 64, 128),
    plot=Plot(logx=True),
    checks=(
        Check("\"disabling QoS on the Force10 S50 significantly delays the onset of Incast\": onset with 4 "
              "classes < with 2 <= QoS off, and QoS off at least 2x the 4-class onset", SRC,
              disabling_qos_delays_onset),
        Check("\"partition the output queue for each class of service\": the incast's class holds at most its "
              "1/n of the port, and fills to within one packet of it", SRC, incast_class_holds_its_share),
        Check("\"most switches dynamically allocate each link's output buffer from a shared memory pool\": "
              "the congested port takes more than a static port's 128 KiB, at most alpha/(1+alpha) of the "
              "pool (+1 packet), and the onset comes later than with the static port", f"{FAST08} §4.1",
              pool_beats_static_share),
        Check("One server is not affected by the partition (its 20-packet window fits every class): "
              "the same goodput", SRC, one_server_unaffected),
    ),
)
