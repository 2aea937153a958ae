"""The doctor's defaults for what a user does not give (shown in every report), kept free of
heavy imports so that ``incastlab doctor --help`` and a refused flag load nothing else."""

#: name -> (default, why), in the user's terms
DEFAULTS: dict[str, tuple[object, str]] = {
    "rate": ("10Gbps", "a common server link today"),
    "rtt": ("100us", "one rack to a few racks (FAST'08 Table 1; DCTCP paper §2.3: under 250 us)"),
    "buffer": ("128KiB", "per port of a shallow-buffered ToR (DCTCP paper §2.3.2: 4 MB shared by 48 ports)"),
    "fan_in": (32, "servers answering one read"),
    "response": ("256KiB", "bytes each server returns per read (FAST'08 Table 1's SRU)"),
    "stack": ("linux", "the core's linux preset: a stock kernel (docs/simulate.md, presets)"),
}

#: The largest fan-in the doctor simulates (and its onset search tries).
MAX_FAN_IN = 1024
