#!/usr/bin/env bash
# Compare incastlab with the ns-2 peer (peers/ns2/incast.tcl), the simulator FAST'08 used,
# over a grid of points: blocks, goodput, timeouts, drops and idle RTO expiries side by side.
# The FAST'08 grid (20 simulated seconds a point), incastlab with ns-2's hard-wired rules:
#   scripts/ns2-run.sh --servers 4,8,16,32,64 --duration 20s --vary limited_transmit=on,off --ns2-rules
# ns-2's own default packets (1000 B payload) and a 32-packet port:
#   scripts/ns2-run.sh --servers 16 --set mss=1000 --set buffer_packets=32 --set rwnd=20000
# Means over seeds of a server think time (the one random draw both simulators make):
#   scripts/ns2-run.sh --servers 16 --seeds 10 --set jitter=20us --ns2-rules
# Needs ns (Debian package ns2; installed on first use when run as root).
# Every option: scripts/ns2-run.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m incastlab.peers.ns2 "$@"
