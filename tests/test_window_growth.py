"""scripts/window-growth.py on hand-made traces whose answers are counted by hand."""

from script_support import assert_refuses_a_line_that_is_not_an_event, load_script

MSS = 1448


def load():
    return load_script("window-growth")


HEAD = ["0.000000000,ack,0,1,24", f"0.000000000,cwnd,0,{4 * MSS},0", f"0.000000000,ssth,0,{2 * MSS},0",
        "0.000100000,ack,0,1,0"]
LOSS = ["0.010000000,drop,0,1,1448,21", "0.010001000,drop,0,1449,1448,21", "0.011000000,state,0,0,3"]


def lines(acks: list[tuple[int, int | None]]) -> str:
    """One flow in congestion avoidance (cwnd 4 >= ssthresh 2): ACKs of the given numbers of
    segments, each followed by cwnd's new value in bytes (None: unchanged); then a loss: two
    drops and Recovery entered."""
    out, una = list(HEAD), 1
    for i, (segments, cwnd) in enumerate(acks):
        t = 0.001 * (i + 1)
        una += segments * MSS
        out.append(f"{t:.9f},ack,0,{una},0")
        if cwnd is not None:
            out.append(f"{t:.9f},cwnd,0,{cwnd},0")
    return "\n".join(out + LOSS) + "\n"


def test_linux_growth_is_one_segment_per_window_acknowledged(tmp_path):
    # tcp_cong_avoid_ai: at cwnd 4, 4 segments acknowledged (2 ACKs of 2) grow it to 5; at 5,
    # 5 segments (ACKs of 2, 2, 1) to 6: growth x cwnd = 4 + 5 over 9 segments = 1.0
    p = tmp_path / "linux.csv"
    p.write_text(lines([(2, None), (2, 5 * MSS), (2, None), (2, None), (1, 6 * MSS)]))
    g = load().growth(str(p))
    assert g["avoidance_acked_segments"] == 9
    assert g["avoidance_growth"] == 1.0
    assert g["segments_per_ack"] == 1.8
    # the loss: one episode, entered at cwnd 6, two drops
    assert (g["episodes"], g["cwnd_at_episode_median"], g["drops"], g["drops_per_episode"]) == (1, 6.0, 2, 2.0)


def test_rfc_growth_is_half_as_fast_with_two_segments_per_ack(tmp_path):
    # RFC 5681 eq. (3): SMSS^2 / cwnd per ACK whatever it acknowledges; four ACKs of two
    # segments each add about one segment x cwnd / cwnd each: 4 over 8 segments = 0.5
    acks, cwnd = [], 4 * MSS
    for _ in range(4):
        cwnd += MSS * MSS // cwnd
        acks.append((2, cwnd))
    p = tmp_path / "rfc.csv"
    p.write_text(lines(acks))
    g = load().growth(str(p))
    assert g["avoidance_growth"] == 0.5  # integer bytes: 0.4997, rounded to 2 places
    assert g["segments_per_ack"] == 2.0


def test_a_line_that_is_not_an_event_is_one_line_and_status_2(tmp_path, capsys):
    assert_refuses_a_line_that_is_not_an_event("window-growth", tmp_path, capsys)


def test_the_window_a_loss_found_is_read_before_the_entering_acks_reduction(tmp_path):
    # the simulator writes the entering ACK's reduction (cwnd 6 -> 3) at the ACK's instant,
    # before the state line: the loss found cwnd 6, as the kernel's tcp_probe would report it
    p = tmp_path / "sim.csv"
    p.write_text("\n".join(HEAD + [
        f"0.001000000,cwnd,0,{6 * MSS},0",
        "0.002000000,ack,0,1449,0", f"0.002000000,cwnd,0,{3 * MSS},0", "0.002000000,state,0,0,3",
    ]) + "\n")
    assert load().growth(str(p))["cwnd_at_episode_median"] == 6.0


def test_new_data_ahead_of_the_retransmission_and_segments_delivered_twice_are_counted(tmp_path):
    # entry 1 (simulator-style, same instant): tx 5 then rtx 1 -> new data first; entry 2:
    # rtx then tx -> Linux's order. Segment 1 passes the bottleneck twice.
    p = tmp_path / "order.csv"
    p.write_text("\n".join(HEAD + [
        "0.001000000,deq,0,1,1448,0",
        "0.002000000,ack,0,1,0", "0.002000000,tx,0,7241,1448", "0.002000000,state,0,0,3",
        "0.002000000,rtx,0,1,1448", "0.002100000,deq,0,1,1448,0",
        "0.003000000,ack,0,1449,0", "0.003000000,state,0,3,0",
        "0.004000000,ack,0,2897,0", "0.004000000,state,0,0,3",
        "0.004000000,rtx,0,2897,1448", "0.004000000,tx,0,8689,1448",
        "0.005000000,ack,0,4345,0",
    ]) + "\n")
    g = load().growth(str(p))
    assert (g["entries_new_data_first"], g["delivered_twice"]) == (1, 1)


def test_ack_stalls_are_counted_by_state_and_by_the_last_send(tmp_path):
    # flow 0: in Recovery its last send is a retransmission, answered 40 ms later (a stall:
    # recovery_rtx); then an answer 1 ms after a send (none). Flow 1, Open: its last send is
    # a 56-byte segment answered 40 ms later (open_short), then a full segment answered 40
    # ms later but with nothing outstanding by then (the request before it acknowledged
    # everything: none), then a full one answered 30 ms later (open_full).
    p = tmp_path / "stalls.csv"
    p.write_text("\n".join(HEAD + [
        "0.001000000,state,0,0,3", "0.001000000,rtx,0,1,1448",
        "0.041000000,ack,0,1449,0",
        "0.041000000,tx,0,1449,1448", "0.042000000,ack,0,2897,0",
        "0.000000000,ack,1,1,24", "0.001000000,tx,1,1,56", "0.041000000,ack,1,57,0",
        "0.050000000,tx,1,57,1448", "0.060000000,ack,1,1505,24", "0.090000000,ack,1,1505,0",
        "0.100000000,tx,1,1505,1448", "0.130000000,ack,1,2953,0",
    ]) + "\n")
    assert load().ack_stalls(str(p)) == {"recovery_rtx": 1, "recovery_new": 0, "open_short": 1, "open_full": 1,
                                         "other": 0}


def test_the_sends_at_each_recoverys_entry_and_exit_are_counted(tmp_path):
    # entry 1 (simulator-style: the rtx of the ACK's instant before the state line, a new
    # segment after it): 2 sends; its exit ACK releases 3 new segments. Entry 2: the rtx
    # alone, then a timeout (Recovery -> Loss) whose retransmission counts for no ACK: 1,
    # and no exit.
    p = tmp_path / "edges.csv"
    p.write_text("\n".join(HEAD + [
        "0.002000000,ack,0,1,0", "0.002000000,rtx,0,1,1448", "0.002000000,state,0,0,3",
        "0.002000000,tx,0,7241,1448",
        "0.003000000,ack,0,8689,0", "0.003000000,state,0,3,0",
        "0.003000000,tx,0,8689,1448", "0.003000000,tx,0,10137,1448", "0.003000000,tx,0,11585,1448",
        "0.004000000,ack,0,8689,0", "0.004000000,state,0,0,3", "0.004000000,rtx,0,8689,1448",
        "0.204000000,state,0,3,4", "0.204000000,rtx,0,8689,1448",
        "0.205000000,ack,0,13033,0",
    ]) + "\n")
    assert load().recovery_edge_sends(str(p)) == ({1: 1, 2: 1}, {3: 1})
