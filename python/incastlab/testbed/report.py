"""Human tables for testbed points and read summaries."""

from __future__ import annotations

from ..table import plural
from ..units import format_size

COLUMNS = [
    ("servers", "servers", "{:d}"),
    ("goodput_mbps", "goodput Mbps", "{:.0f}"),
    ("blocks", "blocks", "{:d}"),
    ("block_time_p50_s", "p50 ms", "{:.2f}"),
    ("block_time_p99_s", "p99 ms", "{:.1f}"),
    ("block_time_max_s", "max ms", "{:.1f}"),
    ("timeouts", "timeouts", "{}"),
    ("retransmits", "retrans", "{}"),
    ("drops", "drops", "{}"),
]


def _cell(row: dict, key: str, fmt: str) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    if key.endswith("_s"):
        v = v * 1000
    return fmt.format(v)


def table(rows: list[dict]) -> str:
    head = [h for _, h, _ in COLUMNS]
    body = [[_cell(r, k, f) for k, _, f in COLUMNS] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))
    return "\n".join([line(head)] + [line(b) for b in body])


def describe(spec, work) -> str:
    """One line saying what was run."""
    parts = [f"rate {spec.rate_bps / 1e6:g} Mbps", f"buffer {format_size(spec.buffer_bytes)}"]
    parts.append(f"block {format_size(work.block_bytes)} split over the servers" if work.block_bytes
                 else f"SRU {format_size(work.sru_bytes)}")
    parts.append(f"RTOmin {spec.rto_min_s * 1000:g} ms via {spec.rto_min_via}" if spec.rto_min_s is not None
                 else "RTOmin kernel default (200 ms)")
    parts.append(f"cc {work.congestion or 'namespace default'}")
    if work.quickack:
        parts.append("quickack")
    if work.rwnd_clamp_bytes:
        parts.append(f"rwnd clamp {format_size(work.rwnd_clamp_bytes)}")
    if work.max_concurrent:
        parts.append(f"at most {plural(work.max_concurrent, 'server')} at a time")
    if work.stagger_s:
        parts.append(f"stagger {work.stagger_s * 1e6:g} us")
    if work.start_next_at is not None:
        parts.append(f"next request at {format_size(work.start_next_at)} left")
    parts.append("offloads on" if spec.offload else "TSO/GSO/GRO off")
    return ", ".join(parts)
