"""What the peer-harness tests share: stand-in executables, a hand-written trace, and the
sample values of the fields the peers cannot express."""

from __future__ import annotations

import stat
from pathlib import Path

# A trace in the peers' format in which flow 0's retransmission of 1461 is dropped.
ONE_LOST_RETRANSMIT = """\
0.000100000,tx,0,1,1460
0.000100000,tx,0,1461,1460
0.000130000,drop,0,1461,1460,21
0.000200000,rtx,0,1461,1460
0.000230000,drop,0,1461,1460,21
"""


def executable(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and make it executable (a stand-in for ns or ns3-incast)."""
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# One value other than the default for every field neither peer (ns-2, ns-3) can express;
# each peer's tests add the fields only it cannot express (test_peer_ns2.py, test_peer_ns3.py).
NEITHER_PEER_EXPRESSES = {
    "blocks": 5, "timer_ticks": True, "rto_random": 0.5, "slow_start": False, "slow_start_after_idle": True,
    "active_servers": 2, "handshake": True, "syn_timeout": "1s", "mitigation": "ictcp", "nccs_k": 2,
    "condition_i": "delivered", "udp": 0.001, "udp_packet": 500, "cc": "cubic", "ecn_threshold": 20,
    "topology": "two_switch", "trunk_rate": "10Gbps", "leaves": 3, "spines": 2, "oversubscription": 2.0,
    "pause": True, "pause_xoff": 6000, "pause_xon": 1000, "pause_quanta": 100, "victim": True,
    "prr": True, "rack_tlp": True, "hystart": True, "ssthresh_from_cwnd": True,
    "count_acked_segments": True, "cwnd_limited_growth": True, "prr_extra_if_advanced": True,
    "prr_counts_fast_retransmit": True, "grow_on_recovery_exit": True, "recovery_from_loss": True, "quickack_mode": True,
    "loss_retransmit_queue": True, "frto": True,
    "receiver_rto_min": "150ms",
    "rearm_rto_from_head": True, "tso_deferral": True, "rack_rtt_sack_first": True, "sacked_leave_flight": True, "cwnd_limited_latch": True, "cubic_linux": True, "gso_half_cwnd": True, "rto_min_on_rttvar": True, "timer_wheel": True,
    "ack_short_segments": True, "rack_timer_floor": True, "rcv_window_growth": True, "rcv_autotuning": True, "rcv_rtt_from_window": True,
    "ack_pingpong": True, "rcv_scaling_ratio": 162, "buffer_sharing": "dynamic", "buffer_pool": 1_000_000, "dt_alpha": 2.0,
    "qos_classes": 2, "qos_scheduler": "wrr", "qos_weights": "3,1", "victim_class": 1, "pfc": True,
    "clients": 2, "workload": "riak", "get_rate": 50, "replicas": 2, "read_quorum": 1, "reply_bytes": 20_000,
    "reply_size_dist": "exponential",
    # the fabrics (docs/fabrics.md): a fat tree's shape and links, uplink choice, one-shot
    # flows' placement and timing, Poisson background
    "fat_tree_k": 4, "core_rate": "40Gbps", "trunk_delay": "1us", "core_delay": "1us",
    "load_balancing": "ecmp", "incasts": 2, "placement": "packed", "start": "1ms", "start_spread": "1ms",
    "background_load": 0.3, "background_cdf": "data_mining", "background_hosts": 4,
    # trimming and the receiver-driven transports (docs/transports.md)
    "trimming": True, "trim_bytes": 64, "trim_header_queue": 100_000, "return_to_sender": True,
    "transport": "ndp",
    "swift_base_target": "20us", "swift_h": "1us", "swift_fs_range": "50us", "swift_fs_min_cwnd": 0.5,
    "swift_fs_max_cwnd": 50.0, "swift_ai": 2.0, "swift_beta": 0.5, "swift_max_mdf": 0.25, "swift_rto": "tcp",
    "swift_min_cwnd_floor": 1.0, "flows_per_sender": 2, "measure_from": "1s",
    "shaper_rate": "100Mbps", "shaper_burst": 6056,
    # bulk flows and Riak over Erlang distribution (docs/simulate.md, docs/monitor.md)
    "bulk_flows": 1, "bulk_from": [2], "bulk_to": [1], "bulk_rate": "100Mbps",
    "riak_transport": "erlang_dist", "dist_buf_busy_limit": 65536,
    # measured think times (validate --measured-think-times; docs/testbed.md)
    "think_times": "20us,70us",
}

# Fields a sample needs beside it to be a valid scenario at all (the core's own constraints).
# A peer checks fields in the schema's order, so buffer_pool's refusal names buffer_sharing,
# the inexpressible field a pool needs: either name tells the user what the peer cannot do.
CONTEXT = {"prr": {"tcp": "sack"}, "rack_tlp": {"tcp": "sack"}, "buffer_pool": {"buffer_sharing": "dynamic"},
           "trunk_rate": {"topology": "two_switch"}, "leaves": {"topology": "leaf_spine"},
           "spines": {"topology": "leaf_spine"}, "oversubscription": {"topology": "leaf_spine"},
           "qos_weights": {"qos_scheduler": "wrr", "qos_classes": 2},
           "victim_class": {"victim": True, "qos_classes": 2}, "pfc": {"pause": True, "qos_classes": 2},
           **{f: {"topology": "fat_tree", "fat_tree_k": 4} for f in ("core_rate", "core_delay", "load_balancing")},
           "fat_tree_k": {"topology": "fat_tree"}, "trunk_delay": {"topology": "two_switch"},
           **{f: {"workload": "incast"} for f in ("incasts", "placement", "start", "start_spread")},
           **{f: {"background_load": 0.3} for f in ("background_cdf", "background_hosts")},
           **{f: {"trimming": True} for f in ("trim_bytes", "trim_header_queue")},
           "return_to_sender": {"trimming": True, "transport": "ndp", "workload": "incast"},
           "transport": {"workload": "incast"},
           **{f: {"transport": "swift", "workload": "incast"}
              for f in ("swift_base_target", "swift_h", "swift_fs_range", "swift_fs_min_cwnd", "swift_fs_max_cwnd",
                        "swift_ai", "swift_beta", "swift_max_mdf", "swift_rto", "swift_min_cwnd_floor")},
           "flows_per_sender": {"workload": "incast"},
           "measure_from": {"duration": "2s"},
           "shaper_burst": {"shaper_rate": "100Mbps"},
           **{f: {"bulk_flows": 1} for f in ("bulk_from", "bulk_to", "bulk_rate")},
           **{f: {"workload": "riak"} for f in ("riak_transport",)},
           "dist_buf_busy_limit": {"workload": "riak", "riak_transport": "erlang_dist"},
           # Riak's own fields are refused unless the workload is riak
           **{f: {"workload": "riak"}
              for f in ("get_rate", "replicas", "read_quorum", "reply_bytes", "reply_size_dist")}}
