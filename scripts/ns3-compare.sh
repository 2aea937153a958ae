#!/usr/bin/env bash
# Compare incastlab with the ns-3 peer (../shared/peers/ns3) over a grid of points.
# The default grid (FAST'08 defaults, 20 simulated seconds a point: about 1.5 minutes on 2 cores):
#   scripts/ns3-compare.sh --servers 4,8,16,32,64 --duration 20s --limited-transmit on,off
# The first run builds ns-3 into ~/.cache/incastlab/ns3 (about 3 minutes); an existing
# binary: --ns3-binary PATH. Our simulator with ns-3's hard-wired rules: --ns3-rules.
# Every option: scripts/ns3-compare.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m incastlab.peers.ns3 "$@"
