#!/usr/bin/env bash
# Build everything and run every test: Rust unit tests, then pytest end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo test --workspace --release
# again in the debug profile: integer overflow checks and debug assertions (an event
# scheduled in the past, a counter going backwards) are off in release
cargo test --workspace
python3 -m pytest -q
