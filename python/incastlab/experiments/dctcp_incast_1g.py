"""DCTCP against NewReno on incast at 1 Gbps (``dctcp_common`` says what and why).

1 Gbps, RTT 100 us (FAST'08 Table 1, 000_315d806dde942a9f.txt), K = 20 packets (the DCTCP
paper's 1 Gbps setting), 100-packet buffer, 1 to 64 servers: N_pred = min(51, 45) = 45 (BDP
8.3 packets).
"""

from __future__ import annotations

from .dctcp_common import BASE, checks, series
from .sources import DCTCP_PAPER, SIGCOMM09
from .spec import Experiment, Plot

SERVERS = (1, 2, 4, 8, 16, 24, 32, 40, 44, 48, 50, 52, 56, 64)
SERIES = series({"rate": "1Gbps", "rtt": "100us"}, (20,), SERVERS, (1, 16, 32, 44, 64))

EXPERIMENT = Experiment(
    name="dctcp-incast-1g",
    title="DCTCP (K = 20) against NewReno, fixed 1 MiB block, 1 Gbps, 100-packet buffer",
    source=f"{DCTCP_PAPER} §4.2.1; workload {SIGCOMM09}",
    summary="1 MiB split over N servers at 1 Gbps, RTT 100 us, a 100-packet port buffer marking at K = 20 "
            "(DCTCP paper): DCTCP keeps the link busy where NewReno has collapsed, and collapses in turn "
            "once the servers' first windows (N x IW 2) no longer fit the buffer.",
    series=SERIES,
    checks=checks(SERIES),
    base=BASE,
    seeds=3,
    plot=Plot(),
)
