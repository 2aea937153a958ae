"""RACK-TLP against SACK alone on the tail losses of FAST'08's setting (RFC 8985 §7; 000_315d806dde942a9f.txt §5.1).

FAST'08 Table 3 counts timeouts whose lost segment was the last one of a server's block
("last packet dropped"): nothing follows it to produce duplicate ACKs, so only the RTO can
repair it. RFC 8985's tail loss probe is built for exactly that: 2 SRTT after the last ACK
(more when a lone segment may wait for a delayed ACK, §7.2) the sender sends new data or
its last segment again, whose ACK or SACK lets RACK (§6) find the loss without an RTO.

Setting: FAST'08 in the ns-2 reading its other reproductions use (the core's preset fast08:
Table 1 with ns-2's defaults; 32 KiB buffer as fast08-fig10/11), SACK (RFC 6675) with and
without `rack_tlp`. The checks follow from the mechanism: with probes, last-packet
timeouts are strictly fewer wherever SACK alone has any, and probes are sent at those
server counts (a loss with data behind it is found from SACKs, without a probe).
Last-packet timeouts are a small share of all timeouts in this
setting (as in Table 3: 2-5 of 349-589), so most of RACK-TLP's effect on goodput comes from
RACK's detection of lost retransmissions, not from the tail; docs/model.md says more.
"""

from __future__ import annotations

from .measure import curve
from .sources import FAST08, FAST08_SERVERS, QUICK_SERVERS
from .spec import Check, Experiment, Series

RFC8985 = "RFC 8985 §7"
SACK = "SACK (RFC 6675)"
RACK_TLP = "SACK + RACK-TLP (RFC 8985)"
SRC = f"{FAST08} §5.1, Table 3 (last packet dropped); {RFC8985}"


def fewer_tail_timeouts(df):
    sack = curve(df, SACK, "timeouts_last_packet")
    tlp = curve(df, RACK_TLP, "timeouts_last_packet")
    where = [x for x in sack.index if sack[x] > 0]
    if not where:
        return "SACK alone has no last-packet timeout at any server count: nothing for the probe to save", False
    worse = [x for x in where if not tlp.get(x, 0) < sack[x]]
    parts = ", ".join(f"{x}: {sack[x]:.0f} -> {tlp.get(x, 0):.0f}" for x in where)
    total = f"total {sack.sum():.0f} -> {tlp.sum():.0f}"
    return f"last-packet timeouts, SACK -> RACK-TLP, where SACK has any ({parts}); {total}", not worse


def probes_where_sack_times_out_on_the_tail(df):
    tails = curve(df, SACK, "timeouts_last_packet")
    probes = curve(df, RACK_TLP, "tail_loss_probes")
    where = [x for x in tails.index if tails[x] > 0]
    missing = [x for x in where if probes.get(x, 0) == 0]
    text = ", ".join(f"{x}: {probes.get(x, 0):.0f}" for x in where)
    # a loss with data behind it is found from SACKs; the PTO is armed only with nothing
    # SACKed (RFC 8985 §7.2), so probes are expected where tails are lost, not at every drop
    return f"tail loss probes where SACK alone has last-packet timeouts ({text})", bool(where) and not missing


EXPERIMENT = Experiment(
    name="rack-tlp-tail",
    title="Tail loss probes and last-packet timeouts",
    source=f"{FAST08} Table 3; {RFC8985}",
    summary="Goodput vs. servers for SACK with and without RACK-TLP (RFC 8985) in FAST'08's setting (ns-2 "
            "reading, 32 KiB buffer): the tail loss probe turns the timeouts of a block's lost last packet "
            "into probes.",
    series=(
        Series(SACK, {"tcp": "sack"}),
        Series(RACK_TLP, {"tcp": "sack", "rack_tlp": True}),
    ),
    base={"preset": "fast08", "buffer": "32KiB"},
    values=FAST08_SERVERS,
    quick_values=QUICK_SERVERS,
    checks=(
        Check("A tail loss probe repairs a lost last packet without the RTO: with RACK-TLP, strictly fewer "
              "last-packet timeouts at every server count where SACK alone has them", SRC, fewer_tail_timeouts),
        Check("The probe is what saves them: RACK-TLP sends tail loss probes at every server count where SACK "
              "alone times out on a last packet", f"{FAST08} §5.1; {RFC8985}.2-7.3",
              probes_where_sack_times_out_on_the_tail),
    ),
)
