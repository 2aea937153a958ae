"""Names and addresses of everything the testbed creates.

Every namespace and link starts with the prefix (default ``iltb``), so teardown can find
exactly our objects and nothing else. Addresses come from the RFC 2544 benchmarking range
198.18.0.0/15 (never routed on the Internet).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_PREFIX = "iltb"
NETNS_DIR = "/var/run/netns"
PORT = 5701
MAX_SERVERS = 1000
SUBNET_PREFIX_LEN = 16


@dataclass(frozen=True)
class Names:
    prefix: str = DEFAULT_PREFIX

    def __post_init__(self):
        # interface names are at most 15 bytes: prefix + "-s1000-p" must fit
        if not re.fullmatch(r"[a-z][a-z0-9]{1,6}", self.prefix):
            raise ValueError(f"prefix {self.prefix!r}: 2-7 lower-case letters/digits, starting with a letter")

    @property
    def client_ns(self) -> str:
        return f"{self.prefix}-c"

    @property
    def switch_ns(self) -> str:
        return f"{self.prefix}-sw"

    def server_ns(self, i: int) -> str:
        return f"{self.prefix}-s{i}"

    @property
    def bridge(self) -> str:
        return f"{self.prefix}-br"

    @staticmethod
    def port_of(endpoint: str) -> str:
        """The bridge port (in the switch namespace) facing an endpoint's interface."""
        return f"{endpoint}-p"

    def owns(self, name: str) -> bool:
        return name.startswith(self.prefix + "-")

    def netns_path(self, ns: str) -> str:
        return f"{NETNS_DIR}/{ns}"


CLIENT_ADDR = "198.18.0.1"


def server_addr(i: int) -> str:
    """Server i (1-based): 198.18.1.1, 198.18.1.2, ... 250 per /24."""
    if not 1 <= i <= MAX_SERVERS:
        raise ValueError(f"server index {i} outside 1..{MAX_SERVERS}")
    return f"198.18.{1 + (i - 1) // 250}.{1 + (i - 1) % 250}"
