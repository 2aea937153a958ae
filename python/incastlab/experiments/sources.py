"""The source documents (``shared/seeds``) and grids the reproductions share."""

import re

FAST08 = "000_315d806dde942a9f.txt"   # Phanishayee et al., FAST 2008
SIGCOMM09 = "001_e0dada207805edc8.txt"  # Vasudevan et al., SIGCOMM 2009 slides
WREN09 = "002_08b014e448da6385.txt"   # Chen et al., WREN 2009 talk notes
OSADA = "004_f48ce568b38e0ea9.txt"    # Osada et al., IJCNC 2016
RIAK = "003_a133663d5dbcfa75.txt"     # Fritchie, the Riak blog

# Papers beyond the seeds that a reproduction checks claims of (the fabric and transport
# issues: the field's later work), cited by authors, title and venue; a check's source names
# a seed file or one of these.
DCTCP_PAPER = "Alizadeh et al., Data Center TCP (DCTCP), SIGCOMM 2010"
NDP_PAPER = ("Handley et al., Re-architecting datacenter networks and stacks for low latency and high "
             "performance (NDP), SIGCOMM 2017")
SWIFT_PAPER = ("Kumar et al., Swift: Delay is Simple and Effective for Congestion Control in the Datacenter, "
               "SIGCOMM 2020")
LATER_PAPERS = (DCTCP_PAPER, NDP_PAPER, SWIFT_PAPER)

# What a reader calls each source. What a user reads (lists, figures, the report) cites
# both, "FAST'08 Fig. 4 (000_315d806dde942a9f.txt)"; the data (CSV, checks.json, --json)
# keeps the file names.
PAPER_NAMES = {FAST08: "FAST'08", SIGCOMM09: "SIGCOMM'09", WREN09: "WREN'09", OSADA: "Osada et al.",
               RIAK: "the Riak blog"}

# A seed file name and the place in it that follows, up to the next ";" (a locator may hold
# commas: "§4.1, Fig. 4").
_CITED = re.compile(r"(\d{3}_[0-9a-f]{16}\.txt)([^;]*)")


def cite(text: str) -> str:
    """``text`` with each seed file name as people know the paper, the file after the place
    in it: ``000_315d806dde942a9f.txt Fig. 4`` -> ``FAST'08 Fig. 4 (000_315d806dde942a9f.txt)``."""
    def named(m: re.Match) -> str:
        file, where = m.group(1), m.group(2).rstrip()
        tail = m.group(2)[len(where):]
        return f"{PAPER_NAMES.get(file, file)}{where} ({file}){tail}"

    return _CITED.sub(named, text)

# FAST'08's simulation figures sweep 1 to 64 servers (Fig. 4, 7, 10, 12, 13).
FAST08_SERVERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
# --quick: a few points on each side of the collapse.
QUICK_SERVERS = (1, 4, 8, 16, 32, 64)

# FAST'08 as ns-2 ran it is the core's preset ``fast08`` (crates/sim/src/preset.rs, where
# each of its values says why; docs/model.md, "The ns-2 reading of FAST'08"): the
# reproductions name it as ``{"preset": "fast08", ...}``.
# Osada et al. ran ns-2 too, and state MSS 1460 and buffers in packets (§5.1).
NS2_OSADA = {"tcp_rules": "ns2", "limited_transmit": True}
