"""Independent simulators of incastlab's workload, run side by side with ours.

A peer is written without our code, so where its numbers and ours differ one of the two
models has a rule the other lacks. ``peers.ns3`` builds and runs the ns-3.44 scenario in
``../shared/peers/ns3`` over a grid of points and tabulates both; ``peers.tracediff``
compares two per-event traces in that peer's format (ns-3's or ours, from
``Recording(events=...)``) to find the first packet where the two runs part.

    python -m incastlab.peers.ns3 --servers 4,16 --duration 2s --limited-transmit on,off
    python -m incastlab.peers.tracediff ns3.csv incastlab.csv --flow 0 --until 0.2
"""
