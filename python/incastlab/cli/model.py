"""``incastlab model``: closed-form models from the source documents.

``incastlab model serialization`` evaluates the connection-serialization model of Osada
et al. (``004_f48ce568b38e0ea9.txt`` §4, §5.1 Eq. (12), Appendix A); the readings of the
paper's brackets and units are in ``docs/model-serialization.md``.
"""

from __future__ import annotations

import argparse
import json

from ..errors import UsageError
from ..model.serialization import SerializationModel, SruThresholds, serialization_model, sru_thresholds
from ..units import format_rate
from . import argtypes

_EPILOG = (
    "The paper's KB is 1024 bytes: write 64KiB for its '64 KB' (64KB means 64000 bytes). "
    "Packets on the wire are MSS + 40 bytes. See docs/model-serialization.md."
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "model",
        help="closed-form models from the source papers",
        description="Closed-form models from the source papers (no simulation).",
    )
    models = parser.add_subparsers(dest="model", metavar="MODEL")
    models.required = True

    ser = models.add_parser(
        "serialization",
        help="Osada et al. connection serialization: T1, T2, n_min, wnd_pkt, Q_max, MCT",
        description=(
            "Evaluate the connection-serialization model of Osada et al. (IJCNC 2016, §4 and "
            "Appendix A): BaseBDP, m, T1, T2, Eq. (6), n_min, wnd_pkt, Q_max^TCP and the ideal "
            "mission complete time."
        ),
        epilog=_EPILOG,
    )
    ser.add_argument("--rate", required=True, type=argtypes.rate("--rate"),
                     help="client link bandwidth V, e.g. 1Gbps")
    ser.add_argument("--base-rtt", required=True, type=argtypes.duration("--base-rtt"),
                     help="BaseRTT of one MSS packet on an idle network, e.g. 100us")
    ser.add_argument("--mss", type=argtypes.positive_int("--mss"), default=1460,
                     help="maximum segment size in bytes (default 1460)")
    what = ser.add_mutually_exclusive_group(required=True)
    what.add_argument("--sru", type=argtypes.size("--sru"),
                      help="SRU size S per server, e.g. 64KiB (the paper's 64 KB)")
    what.add_argument("--find-threshold", action="store_true",
                      help="instead of evaluating one S, search the smallest S for which Eq. (6) "
                           "(and Eq. (7)) holds at this rate and BaseRTT")
    ser.add_argument("--servers", type=argtypes.positive_int("--servers"),
                     help="number of active servers N_a, for the ideal MCT of Eq. (12)")
    ser.add_argument("--buffer-packets", type=argtypes.positive_int("--buffer-packets"),
                     help="client port buffer in packets, to say whether Q_max^TCP fits")
    ser.add_argument("--json", action="store_true", help="print one JSON object")
    ser.set_defaults(func=run_serialization)


def run_serialization(args: argparse.Namespace) -> int:
    if args.find_threshold:
        for flag, value in (("--servers", args.servers), ("--buffer-packets", args.buffer_packets)):
            if value is not None:
                raise UsageError(flag, value, "nothing: it does not apply with --find-threshold")
        try:
            found = sru_thresholds(args.rate, args.base_rtt, args.mss)
        except UsageError as e:
            raise _as_flag(e) from None
        print(json.dumps(found.to_dict()) if args.json else _threshold_table(found))
        return 0
    try:
        model = serialization_model(
            args.rate, args.base_rtt, args.mss, args.sru,
            servers=args.servers, buffer_packets=args.buffer_packets,
        )
    except UsageError as e:
        raise _as_flag(e) from None
    print(json.dumps(model.to_dict()) if args.json else _model_table(model))
    return 0


def _as_flag(e: UsageError) -> UsageError:
    """The model names parameters like ``base-rtt``; on the command line say ``--base-rtt``."""
    return UsageError(e.param if e.param.startswith("-") else f"--{e.param}", e.value, e.allowed)


def _us(ps: int | None) -> str:
    return "-" if ps is None else f"{ps / 1e6:.3f} us"


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def _table(rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    return "\n".join(f"{a:<{widths[0]}}  {b:>{widths[1]}}  {c}".rstrip() for a, b, c in rows)


def _model_table(m: SerializationModel) -> str:
    t2_note = "Eq. (5), floor; undefined when Eq. (6) fails"
    if m.t2_ps is not None and m.t2_ps < 0:
        t2_note = "Eq. (5) is negative: S is below the 2^(m-1)-2 slow-start packets it assumes"
    case_note = ("case (a): [BaseBDP_pkt/n_min]" if m.window_case == "a"
                 else "case (b): BaseBDP_pkt/n_min < 4, so 4")
    rows = [
        ("quantity", "value", "source (004_f48ce568b38e0ea9.txt)"),
        ("V", format_rate(m.rate_bps), "input"),
        ("BaseRTT", _us(m.base_rtt_ps), "input"),
        ("MSS", f"{m.mss_bytes} B", f"input; wire packet = MSS + {m.header_bytes} B"),
        ("S", f"{m.sru_bytes} B", f"input; [S/MSS] = {m.sru_packets} packets (ceiling)"),
        ("BaseBDP", f"{m.base_bdp_bytes:g} B", "§4.2: V/8 x BaseRTT"),
        ("BaseBDP_pkt", f"{m.base_bdp_pkt:.4g}", "Eq. (2), exact"),
        ("[BaseBDP_pkt]", str(m.base_bdp_pkt_ceil), "ceiling, as §5.1 reports it"),
        ("m", str(m.m), "Eq. (3), ceiling of log2"),
        ("T1", _us(m.t1_ps), "Eq. (4)"),
        ("T2", _us(m.t2_ps), t2_note),
        ("Eq. (6) holds", _yes(m.eq6_holds), "T1, T2 defined; NCCS usable"),
        ("Eq. (7) holds", _yes(m.eq7_holds), f"T2 >= 2 T1; needs floor(S/MSS) >= {m.eq7_rhs_packets:.4g}"),
        ("n_min (Eq. 8)", "-" if m.n_min_eq8 is None else str(m.n_min_eq8), "smallest n with n floor(S/MSS) >= Eq. (7) right side"),
        ("n_min", str(m.n_min), "Eq. (8) in case (a), Eq. (10) in case (b)"),
        ("wnd_pkt", str(m.wnd_pkt), f"Eq. (9) {case_note}"),
        ("Q_max^TCP", f"{m.q_max_tcp_packets} packets", "Eq. (11): 2 n_min wnd_pkt - [BaseBDP_pkt]"),
    ]
    if m.buffer_packets is not None:
        rows.append(("fits buffer", _yes(m.q_max_fits_buffer), f"Q_max^TCP <= {m.buffer_packets} packets"))
    rows.append(("ideal MCT", _us(m.mct_ps),
                 "Eq. (12)" + (f" with N_a = {m.servers}" if m.servers is not None else " (give --servers)")))
    rows.append(("condition-I", f"{m.condition_i_bytes:.0f} B",
                 "§4.3 NCCS: start next after S - T1 V sent (<= 0: at once)"))
    return _table(rows)


def _threshold_table(t: SruThresholds) -> str:
    def size(n: int | None) -> str:
        return "-" if n is None else f"{n} B ({n / 1024:.2f} KiB)"

    rows = [
        ("quantity", "value", "source (004_f48ce568b38e0ea9.txt)"),
        ("V", format_rate(t.rate_bps), "input"),
        ("BaseRTT", _us(t.base_rtt_ps), "input"),
        ("MSS", f"{t.mss_bytes} B", "input"),
        ("BaseBDP_pkt", f"{t.base_bdp_pkt:.4g}", "Eq. (2)"),
        ("m", str(t.m), "Eq. (3)"),
        ("smallest S, Eq. (6)", size(t.eq6_min_sru_bytes), "T1 and T2 defined from here on"),
        ("smallest S, Eq. (7)", size(t.eq7_min_sru_bytes), "n_min = 1 (plain NCCS fills the link)"),
    ]
    return _table(rows)
