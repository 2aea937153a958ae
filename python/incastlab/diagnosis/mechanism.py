"""The mechanism line: which kind of timeout the point's blocks waited on, from the timeout
forensics every result carries (FAST'08 §5.1 categories, docs/model.md, "Timeout
categories"), the delayed-ACK timer and PAUSE."""

from __future__ import annotations

CATEGORIES = {
    "timeouts_full_window": ("full-window losses",
                             "a server lost its whole window in the synchronized burst, so no duplicate ACKs came "
                             "back and only the retransmission timer could recover it (FAST'08 §5.1)"),
    "timeouts_lost_retransmit": ("lost retransmissions",
                                 "retransmissions were dropped again in the still-full queue, and the timer had to "
                                 "fire (FAST'08 §5.1, Table 3)"),
    "timeouts_last_packet": ("tail losses",
                             "the last packets of a response were lost with too few packets after them for three "
                             "duplicate ACKs (FAST'08 §5.1)"),
    "timeouts_other": ("losses fast retransmit could not repair",
                       "losses with some duplicate ACKs, but too few or too late for fast recovery"),
}


def mechanism(forensics: dict, rto_min_s: float, delayed_ack_s: float, collapsed: bool) -> str:
    t = int(forensics.get("timeouts", 0))
    blocks = max(int(forensics.get("blocks", 0)), 1)
    if t == 0:
        return ("no retransmission timeouts at this point" +
                ("; goodput is lost to recovery and queueing, not to idle timers" if collapsed else ""))
    counts = {k: int(forensics.get(k, 0)) for k in CATEGORIES}
    top = max(counts, key=counts.get)
    name, why = CATEGORIES[top]
    share = counts[top] / t
    parts = [f"{t} timeouts over {forensics.get('blocks', 0)} blocks ({t / blocks:.1f} a block), "
             f"{share:.0%} {name}: {why}; each idles the client's link for about RTOmin "
             f"({rto_min_s * 1e3:g} ms)"]
    rest = ", ".join(f"{counts[k]} {CATEGORIES[k][0]}" for k in CATEGORIES if k != top and counts[k])
    if rest:
        parts.append(f"the rest: {rest}")
    delack = int(forensics.get("delayed_ack_timeouts", 0))
    if delayed_ack_s > 0 and delack:
        parts.append(f"{delack} delayed-ACK timer expiries ({delayed_ack_s * 1e3:g} ms) stalled senders with one "
                     "segment out (delayed-ACK stalls, WREN'09)")
    spurious = int(forensics.get("spurious_timeouts", 0))
    if spurious:
        parts.append(f"{spurious} of the timeouts were spurious (the data had arrived)")
    pause = int(forensics.get("pause_xoff_frames", 0))
    if pause:
        parts.append(f"{pause} PAUSE (XOFF) frames: head-of-line blocking upstream (FAST'08 §5.2)")
    return "; ".join(parts)
