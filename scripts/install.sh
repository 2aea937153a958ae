#!/usr/bin/env bash
# Install everything incastlab needs on a fresh Debian machine of this kind (run as root),
# then build the Rust core and install the Python package (editable, release build).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(iproute2 ethtool procps)
apt_packages+=(tshark)  # tests/test_pcap.py: opens and analyses simulate --pcap captures
apt_packages+=(chromium)  # tests/test_report.py: renders incastlab report's page headless and looks at it
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "install: apt packages ${missing[*]}"
    apt-get update -qq
    # wireshark-common asks whether non-root users may capture; answer no, without a prompt
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "install: not root; skipping apt packages ${missing[*]} (the testbed and monitor need them)" >&2
  fi
fi

python3 -m pip install -q --disable-pip-version-check -e '.[test]'
