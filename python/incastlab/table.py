"""Plain-text tables for the terminal: right-aligned columns, one header row."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import pandas as pd

# (heading, result field, formatter) for one simulated point per row.
Column = tuple[str, str, Callable[[Any], str]]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


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


def render_results(df: pd.DataFrame, columns: list[Column] = SIM_COLUMNS) -> str:
    """One row per simulated point, the columns of ``incastlab simulate``."""
    rows = [[("-" if key in _NEEDS_A_BLOCK and rec.get("blocks") == 0 else fmt(rec[key]))
             for _, key, fmt in columns] for rec in df.to_dict("records")]
    return render([h for h, _, _ in columns], rows)
