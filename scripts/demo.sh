#!/usr/bin/env bash
# The main job: install, then simulate the FAST'08 incast collapse and two fixes
# (a bigger buffer, RTOmin 200 us), printed and plotted into out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec incastlab demo --out out
