#!/usr/bin/env bash
# Run a grid of points in the ns-2 peer (peers/ns2/incast.tcl), the simulator FAST'08 used.
# The FAST'08 grid (20 simulated seconds a point: about 12 s on 2 cores):
#   scripts/ns2-run.sh --servers 4,8,16,32,64 --duration 20s --vary limited_transmit=on,off
# ns-2's own default packets (1000 B payload) and a 32-packet port:
#   scripts/ns2-run.sh --servers 16 --set mss=1000 --set buffer_packets=32 --set rwnd=20000
# Needs ns (Debian package ns2; installed on first use when run as root).
# Every option: scripts/ns2-run.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m incastlab.peers.ns2 "$@"
