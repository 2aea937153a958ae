"""FAST'08 Table 3: timeout events by category (000_315d806dde942a9f.txt §5.1).

The same runs as fast08-fig11 (Reno, NewReno, NewReno with dathresh = 1; one 20 s run at
16 servers, 32 KiB buffer; see that module for why 16), next to the paper's numbers.
Categories as in §5.1: full window loss (no duplicate ACK for the window), lost
retransmit (split by DART >= / < dathresh), last packet of the SRU dropped, and other.
"""

from __future__ import annotations

from ..table import render
from .fast08_fig11 import BASE, DT1, NEWRENO, RENO, SERIES, SERVERS
from .measure import per_run_total, ratio
from .sources import FAST08
from .spec import Check, Experiment, Plot

SRC = f"{FAST08} §5.1, Table 3"

# Table 3 of the paper (one 20 s ns-2 run each).
PAPER = {
    RENO: {"blocks": 49, "timeouts": 589, "timeouts_full_window": 464, "timeouts_lost_retransmit": 61,
           "lost_retransmits_dart_ge_threshold": 0, "lost_retransmits_dart_lt_threshold": 61,
           "timeouts_last_packet": 2},
    NEWRENO: {"blocks": 89, "timeouts": 442, "timeouts_full_window": 362, "timeouts_lost_retransmit": 2,
              "lost_retransmits_dart_ge_threshold": 0, "lost_retransmits_dart_lt_threshold": 2,
              "timeouts_last_packet": 5},
    DT1: {"blocks": 84, "timeouts": 349, "timeouts_full_window": 313, "timeouts_lost_retransmit": 41,
          "lost_retransmits_dart_ge_threshold": 34, "lost_retransmits_dart_lt_threshold": 7,
          "timeouts_last_packet": 2},
}

ROWS = [
    ("data blocks transmitted", "blocks"),
    ("timeout events", "timeouts"),
    ("full window losses", "timeouts_full_window"),
    ("lost retransmits", "timeouts_lost_retransmit"),
    ("  when DART >= dathresh", "lost_retransmits_dart_ge_threshold"),
    ("  when DART < dathresh", "lost_retransmits_dart_lt_threshold"),
    ("last packets dropped", "timeouts_last_packet"),
    ("other", "timeouts_other"),
    ("timeouts per block", None),
]


def total(df, series, col):
    return per_run_total(df, series, col)


def report(df) -> str:
    """Table 3 with our numbers next to the paper's."""
    heads = ["Table 3"] + [f"{s} {who}" for s in (RENO, NEWRENO, DT1) for who in ("ours", "paper")]
    rows = []
    for name, col in ROWS:
        row = [name]
        for s in (RENO, NEWRENO, DT1):
            if col is None:
                ours = ratio(total(df, s, "timeouts"), total(df, s, "blocks"))
                theirs = PAPER[s]["timeouts"] / PAPER[s]["blocks"]
                row += [f"{ours:.1f}", f"{theirs:.1f}"]
            else:
                ours = f"{total(df, s, col):.0f}" if col in df else "n/a"
                theirs = PAPER[s].get(col)
                row += [ours, "-" if theirs is None else str(theirs)]
        rows.append(row)
    width = max(len(r[0]) for r in rows + [heads])
    for r in [heads] + rows:  # the row names read best left-aligned
        r[0] = r[0].ljust(width)
    return render(heads, rows)


def full_window_majority(df):
    shares = {s: ratio(total(df, s, "timeouts_full_window"), total(df, s, "timeouts")) for s in (RENO, NEWRENO, DT1)}
    text = ", ".join(f"{s} {v:.0%}" for s, v in shares.items())
    return f"full window losses / timeouts: {text} (paper 79%, 82%, 90%)", all(0.5 < v <= 1 for v in shares.values())


def newreno_fewer_per_block(df):
    reno = ratio(total(df, RENO, "timeouts"), total(df, RENO, "blocks"))
    nr = ratio(total(df, NEWRENO, "timeouts"), total(df, NEWRENO, "blocks"))
    # "much lower": at most two thirds (the paper's is 5.0 vs 12.0, 0.41)
    return f"timeouts per block: Reno {reno:.1f}, NewReno {nr:.1f} (paper 12.0, 5.0)", nr <= (2 / 3) * reno


def newreno_more_blocks(df):
    reno, nr = total(df, RENO, "blocks"), total(df, NEWRENO, "blocks")
    return f"blocks in the run: Reno {reno:.0f}, NewReno {nr:.0f} (paper 49, 89)", nr > reno


def reno_loses_more_retransmits(df):
    reno, nr = (total(df, s, "timeouts_lost_retransmit") for s in (RENO, NEWRENO))
    return f"lost retransmits: Reno {reno:.0f}, NewReno {nr:.0f} (paper 61, 2)", reno > nr


def dt1_lost_retransmits_above_threshold(df):
    ge, lt = (total(df, DT1, c) for c in ("lost_retransmits_dart_ge_threshold", "lost_retransmits_dart_lt_threshold"))
    return f"dathresh=1 lost retransmits: DART >= 1: {ge:.0f}, DART < 1: {lt:.0f} (paper 34, 7)", ge > lt


def few_last_packet(df):
    shares = {s: ratio(total(df, s, "timeouts_last_packet"), total(df, s, "timeouts")) for s in (RENO, NEWRENO, DT1)}
    text = ", ".join(f"{s} {total(df, s, 'timeouts_last_packet'):.0f} ({v:.1%})" for s, v in shares.items())
    return f"last packet losses: {text} (paper 2, 5, 2)", all(v <= 0.05 for v in shares.values())


def categories_sum(df):
    bad = []
    for s in (RENO, NEWRENO, DT1):
        parts = sum(total(df, s, c) for c in ("timeouts_full_window", "timeouts_last_packet",
                                               "timeouts_lost_retransmit", "timeouts_other"))
        if abs(parts - total(df, s, "timeouts")) > 1e-9:
            bad.append(f"{s}: {parts:.0f} vs {total(df, s, 'timeouts'):.0f}")
    return ("the four categories add up to the timeouts for all three" if not bad else "; ".join(bad)), not bad


EXPERIMENT = Experiment(
    name="fast08-table3",
    title=f"Timeout categories, {SERVERS} servers",
    source=f"{FAST08} Table 3",
    summary="Timeouts of one 20 s run (16 servers, 32 KiB) split into full window losses, lost retransmits "
            "(by DART vs dathresh), last packet losses and other, next to the paper's Table 3.",
    series=SERIES,
    base=BASE,
    values=(SERVERS,),
    plot=Plot(kind="categories", reference=PAPER),
    report=report,
    checks=(
        Check("Full window losses are the majority of timeouts for all three configurations (Table 3: 464/589, "
              "362/442, 313/349)", SRC, full_window_majority),
        Check("\"The total number of timeouts per data block is much lower for NewReno\" (bar: at most 2/3 of "
              "Reno's)", f"{FAST08} §5.1.1, Table 3", newreno_fewer_per_block),
        Check("NewReno transmits more data blocks than Reno in the same 20 s (Table 3: 89 vs 49)", SRC,
              newreno_more_blocks),
        Check("Reno loses more retransmissions than NewReno (Table 3: 61 vs 2 lost retransmits)", SRC,
              reno_loses_more_retransmits),
        Check("With dathresh=1 most lost retransmits happen at DART >= dathresh (Table 3: 34 of 41)", SRC,
              dt1_lost_retransmits_above_threshold),
        Check("\"there are relatively few Last Packet Loss cases\" (at most 5% of timeouts each; Table 3: 2, 5, 2)",
              f"{FAST08} §5.1", few_last_packet),
        Check("Every timeout falls in exactly one category (full window, last packet, lost retransmit, other)",
              SRC, categories_sum),
    ),
)
