#!/usr/bin/env bash
# Build everything and run every test: Rust unit tests, then pytest end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo test --workspace --release
python3 -m pytest -q
