"""The source documents (``shared/seeds``) and grids the reproductions share."""

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
LATER_PAPERS = (DCTCP_PAPER, NDP_PAPER)

# What a reader calls each source (figure titles); checks and CSVs keep the file names.
PAPER_NAMES = {FAST08: "FAST'08", SIGCOMM09: "SIGCOMM'09", WREN09: "WREN'09", OSADA: "Osada et al.",
               RIAK: "the Riak blog"}


def cite(text: str) -> str:
    """``text`` with each seed file name replaced by the paper's name."""
    for file, name in PAPER_NAMES.items():
        text = text.replace(file, name)
    return text

# FAST'08's simulation figures sweep 1 to 64 servers (Fig. 4, 7, 10, 12, 13).
FAST08_SERVERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
# --quick: a few points on each side of the collapse.
QUICK_SERVERS = (1, 4, 8, 16, 32, 64)

# FAST'08 as ns-2 ran it (docs/model.md, "The ns-2 reading of FAST'08"): the paper ran
# ns-2 and names only what it changed (Table 1); everything else is ns-2.35's default
# (tcl/lib/ns-default.tcl, measured against the ns-2 peer, peers/ns2): Agent/TCP's rules
# (the idle retransmission timer, ns-2's recover check, window halving, whole packets), DropTail
# counting packets, packetSize_ 1000, window_ 20 packets, windowInit_ 2. Limited transmit
# is on, ns-2's default since 2001, although Table 1 says disabled: only with it do
# Table 3's NewReno (89 blocks) and dathresh=1 (84) come out about equal, as they do in
# ns-2 (67 and 73 against 42 and 73 with it off), and Fig. 12's "no benefit" hold.
NS2_FAST08 = {
    "tcp_rules": "ns2",
    "limited_transmit": True,
    "buffer_admission": "packets",
    "mss": 1000,
    "rwnd": 20 * 1000,
}
# Osada et al. ran ns-2 too, and state MSS 1460 and buffers in packets (§5.1).
NS2_OSADA = {"tcp_rules": "ns2", "limited_transmit": True}
