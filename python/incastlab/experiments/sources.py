"""The source documents (``shared/seeds``) and grids the reproductions share."""

FAST08 = "000_315d806dde942a9f.txt"   # Phanishayee et al., FAST 2008
SIGCOMM09 = "001_e0dada207805edc8.txt"  # Vasudevan et al., SIGCOMM 2009 slides
WREN09 = "002_08b014e448da6385.txt"   # Chen et al., WREN 2009 talk notes

# FAST'08's simulation figures sweep 1 to 64 servers (Fig. 4, 7, 10, 12, 13).
FAST08_SERVERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
# --quick: a few points on each side of the collapse.
QUICK_SERVERS = (1, 4, 8, 16, 32, 64)
