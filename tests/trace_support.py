"""Hand-written per-event traces for tests of what is read from them (the format
``incastlab.peers.tracediff`` reads: ``time_s,kind,flow,a,b``)."""

from __future__ import annotations

US = 10**6  # picoseconds


def write_trace(path, lines) -> str:
    """Write `lines` of (time in us, kind, flow, a, b) to `path` as a trace; its path."""
    path.write_text("time_s,kind,flow,a,b\n" + "".join(f"{t_us / 1e6:.9f},{k},{f},{a},{b}\n"
                                                        for t_us, k, f, a, b in lines))
    return str(path)
