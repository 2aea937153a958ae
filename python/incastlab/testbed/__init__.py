"""Real-TCP testbed: the synchronized-read workload over the Linux stack.

One client namespace, N server namespaces and a switch namespace holding a Linux bridge;
the bridge port towards the client carries a ``tbf`` qdisc whose rate is the bottleneck
and whose byte limit is the shallow switch buffer (FAST'08, ``000_315d806dde942a9f.txt``
§3.2 and Fig. 1). The data path is native (crates/wire); this package only builds the
network, runs points and collects counters. See docs/testbed.md.
"""

from .topology import Topology, TopologySpec, find_stale, teardown
from .runner import Workload, run_point

__all__ = ["Topology", "TopologySpec", "Workload", "find_stale", "run_point", "teardown"]
