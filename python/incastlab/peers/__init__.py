"""Independent simulators of incastlab's workload, run side by side with ours.

A peer is written without our code, so where its numbers and ours differ one of the two
models has a rule the other lacks. ``peers.ns3`` builds and runs the ns-3.44 scenario in
``../shared/peers/ns3``, ``peers.ns2`` the ns-2.35 one in ``peers/ns2``, each over a grid
of points beside ours (``peers.compare``: the grid, the runs, the side-by-side tables;
``peers.fields``: how a peer treats each Scenario field); ``peers.tracediff`` compares two
per-event traces in the peers' format (theirs or ours, from ``Recording(events=...)``) to
find the first packet where the two runs part. ``peers.htsim`` is the exception to "runs":
htsim is in no registry, so its fat-tree incasts were run by hand and only their numbers are
committed (``peers/htsim/references.json``); it runs ours beside them.

    python -m incastlab.peers.ns3 --servers 4,16 --duration 2s --limited-transmit on,off
    python -m incastlab.peers.ns2 --servers 4,16 --duration 2s --vary limited_transmit=on,off --ns2-rules
    python -m incastlab.peers.tracediff ns3.csv incastlab.csv --flow 0 --until 0.2
    python -m incastlab.peers.htsim --only tcp-432-100,tcp-8192-1000-q100
"""
