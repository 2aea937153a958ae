#!/usr/bin/env python3
"""A simulated `monitor --record` file of one Riak node, for docs/doctor.md's second case.

Runs the Riak cluster of ``003_a133663d5dbcfa75.txt`` (20 nodes on 1 Gbps, gets from 3
replicas of 100 KB replies, R = 2, a Linux-like SACK/CUBIC stack, RTOmin 200 ms, a shallow
64 KiB port; ``get_rate`` 125 per node per second is 30 % of the link, inside the blog's
"25-35 %") with every port sampled at 100 us, and writes node 0's receive side (its switch
port's transmitted bytes) and transmit side (its NIC) in the monitor's recording format
(``monitor/record.py``: t_s, dt_s, rx/tx bytes and packets).

Until issue 26 lands a simulated run cannot write a monitor recording itself; this is the
bridge, and it goes when `simulate --millisampler` does the same.

    python scripts/doctor-riak-recording.py out/riak-node0.csv [--seconds 5]
"""

from __future__ import annotations

import argparse

import numpy as np

import incastlab
from incastlab.monitor.record import Recorder

RIAK = dict(workload="riak", servers=20, replicas=3, read_quorum=2, reply_bytes="100KB", get_rate=125,
            rate="1Gbps", rtt="100us", buffer="64KiB", tcp="sack", cc="cubic", rto_min="200ms", seed=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="a .csv or .parquet recording to write")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--node", type=int, default=0)
    args = ap.parse_args()
    r = incastlab.simulate(incastlab.Scenario(duration=f"{args.seconds}s", **RIAK), port_util_interval="100us")
    u = r.port_util
    down, nic = u.downlink(args.node), u.nic(args.node)
    k = u.intervals
    dt = u.interval_s
    rec = Recorder(args.out)
    rec.write(np.arange(1, k + 1) * dt, np.full(k, dt), u["tx_bytes"][down], u["tx_bytes"][nic],
              u["tx_packets"][down].astype(np.uint64), u["tx_packets"][nic].astype(np.uint64))
    rec.close()
    rx = u["tx_bytes"][down].sum() * 8 / args.seconds
    print(f"wrote {args.out}: node {args.node}, {k} intervals of {dt * 1e6:g} us, rx average {rx / 1e6:.0f} Mbps, "
          f"{int(u['drop_packets'][down].sum())} drops at its port, {r.timeouts} timeouts in the cluster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
