"""Plain-text tables for the terminal: right-aligned columns, one header row."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

if TYPE_CHECKING:
    import pandas as pd

def plural(n: int | float, word: str, words: str | None = None) -> str:
    """``n word`` with the word in the plural unless n is 1: "1 server", "3 blocks"."""
    return f"{n:g} {word if n == 1 else words or word + 's'}"


# (heading, result field, formatter) for one simulated point per row.
Column = tuple[str, str, Callable[[Any], str]]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


# Units a column of durations is shown in, from the largest value it holds: block times
# run from microseconds to hours (a 1 Mbps link, 64 servers of 1 GiB), and a column keeps
# one unit so its rows compare. (unit, seconds per unit, shown below this many seconds)
_TIME_UNITS = (("ms", 1e-3, 10.0), ("s", 1.0, 10_000.0), ("h", 3600.0, math.inf))


def _time_unit(values: Iterable[Any]) -> tuple[str, Callable[[float], str]]:
    """The unit a duration column is shown in (its heading's word) and its formatter."""
    largest = max((v for v in values if isinstance(v, (int, float)) and math.isfinite(v)), default=0.0)
    for unit, scale, below in _TIME_UNITS:
        if largest < below:
            break
    return unit, lambda seconds: f"{seconds / scale:.2f}"


def _int(v: Any) -> str:
    return f"{int(v):d}"


SIM_COLUMNS: list[Column] = [
    ("servers", "servers", _int),
    ("goodput Mbps", "goodput_mbps", lambda v: f"{v:.1f}"),
    ("blocks", "blocks", _int),
    ("p50 ms", "block_time_p50_s", _ms),
    ("p99 ms", "block_time_p99_s", _ms),
    ("max ms", "block_time_max_s", _ms),
    ("timeouts", "timeouts", _int),
    ("retx", "retransmits", _int),
    ("drops", "drops", _int),
    ("maxQ KiB", "max_queue_bytes", lambda v: f"{v / 1024:.1f}"),
    ("events", "events", _int),
    ("wall s", "wall_seconds", lambda v: f"{v:.3f}"),
]


# The Riak workload's points: gets instead of blocks (latency from issue to the quorum).
RIAK_COLUMNS: list[Column] = [
    ("nodes", "servers", _int),
    ("goodput Mbps", "goodput_mbps", lambda v: f"{v:.1f}"),
    ("gets", "gets_issued", _int),
    ("done", "gets_completed", _int),
    ("p50 ms", "get_latency_p50_s", _ms),
    ("p99 ms", "get_latency_p99_s", _ms),
    ("max ms", "get_latency_max_s", _ms),
    *SIM_COLUMNS[6:],
]


# One-shot flows (incast, shuffle, permutation): completion times instead of blocks
# (docs/fabrics.md defines FCT and slowdown); the background's only when it ran.
FLOW_COLUMNS: list[Column] = [
    ("senders", "servers", _int),
    ("flows", "flows", _int),
    ("done", "flows_completed", _int),
    ("last ms", "incast_completion_s", _ms),
    ("FCT p50 ms", "fct_p50_s", _ms),
    ("FCT p99 ms", "fct_p99_s", _ms),
    ("slowdown p99", "slowdown_p99", lambda v: f"{v:.1f}"),
    *SIM_COLUMNS[6:],
]
BACKGROUND_COLUMNS: list[Column] = [
    ("bg flows", "background_flows_completed", _int),
    ("bg FCT p99 ms", "background_fct_p99_s", _ms),
    ("bg slowdown p99", "background_slowdown_p99", lambda v: f"{v:.1f}"),
]


# More than one switch: where the drops were (the receiver's port or somewhere above it).
BUSIEST_COLUMNS: list[Column] = [
    ("busiest port", "busiest_port", str),
    ("its drops", "busiest_port_drops", _int),
]


def flow_columns(with_background: bool) -> list[Column]:
    if not with_background:
        return FLOW_COLUMNS
    return FLOW_COLUMNS[:7] + BACKGROUND_COLUMNS + FLOW_COLUMNS[7:]


def render(headings: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Columns right-aligned to their widest cell."""
    rows = [list(r) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headings)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headings, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


# Block completion times mean nothing when no block completed.
_NEEDS_A_BLOCK = {"block_time_p50_s", "block_time_p99_s", "block_time_max_s"}
# Percentiles drawn from fewer blocks than this are marked: with one block p50 = p99 = max.
FEW_BLOCKS = 10
_PERCENTILES = {"block_time_p50_s", "block_time_p99_s"}


def _cell(rec: dict, key: str, fmt: Callable[[Any], str]) -> str:
    import pandas as pd

    blocks = rec.get("blocks")
    if key in _NEEDS_A_BLOCK and blocks == 0:
        return "-"
    if rec.get(key) is None or pd.isna(rec[key]):
        return "-"  # no value: e.g. get latencies when no get completed (null in JSON)
    text = fmt(rec[key])
    if key in _PERCENTILES and blocks is not None and blocks < FEW_BLOCKS:
        return text + "*"
    return text


def render_results(df: pd.DataFrame, columns: list[Column] = SIM_COLUMNS) -> str:
    """One row per simulated point, the columns of ``incastlab simulate``; percentiles
    drawn from fewer than ``FEW_BLOCKS`` blocks carry a * and a note under the table."""
    records = df.to_dict("records")
    shown = []
    for heading, key, fmt in columns:
        if fmt is _ms:  # a duration: in the unit its largest value needs (heading "p50 ms" -> "p50 h")
            unit, fmt = _time_unit(rec.get(key) for rec in records)
            heading = heading.removesuffix(" ms") + f" {unit}"
        shown.append((heading, key, fmt))
    rows = [[_cell(rec, key, fmt) for _, key, fmt in shown] for rec in records]
    out = render([h for h, _, _ in shown], rows)
    shows_percentiles = any(key in _PERCENTILES for _, key, _ in columns)
    if shows_percentiles and any(r.get("blocks") is not None and 0 < r["blocks"] < FEW_BLOCKS for r in records):
        out += f"\n* percentile of fewer than {FEW_BLOCKS} blocks: read it as one block's time, not a distribution"
    return out
