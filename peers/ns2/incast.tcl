# incast.tcl -- TCP incast "synchronized reads" reference scenario for ns-2.35.
#
# The FAST'08 workload (000_315d806dde942a9f.txt §3.1, Fig. 1) written for the
# simulator the paper used, independent of incastlab's code:
#
#   topology   one client, one switch node, N servers, each host on its own
#              duplex link (--rate, --delay one way: 25us gives RTT 100 us);
#              DropTail everywhere; every switch port holds --qlim packets, the
#              port towards the client being the bottleneck; host NICs hold
#              --hostQlim packets.
#   transport  one-way ns-2 TCP (Agent/TCP/Reno|Newreno|Sack1) on each server,
#              a TCPSink (TCPSink/Sack1 for SACK) per server at the client, one
#              ACK per packet (no delayed ACK, as FAST'08 §4.2 says of its runs).
#   workload   persistent connections; block k: every server sends one SRU
#              (ceil(sru / packetSize) packets); the next block is requested
#              when the client holds the whole block (see README.md, "How a
#              block ends and the next begins").
#
# Run:   ns incast.tcl --servers 16 --simTime 20 --csvHeader 1
# Prints one CSV line (and the header line first with --csvHeader 1); with
# --trace FILE also a per-event trace in the ns-3 peer's format.
#
# ns-2 source cited below: tcp/tcp.cc, tcp/tcp-reno.cc, tcp/tcp-newreno.cc,
# tcp/tcp-sack1.cc, tcp/tcp-sink.cc, queue/drop-tail.cc, queue/queue.cc,
# trace/trace.cc, common/agent.cc, tcl/lib/ns-default.tcl.

set WALL_START [clock milliseconds]

# ---------------------------------------------------------------- options
# name -> {default help}.  Defaults are FAST'08 Table 1 where it gives one,
# else ns-2.35's own (tcl/lib/ns-default.tcl), except where said.
array set OPTS {
    servers     {4       "number of servers N"}
    sru         {262144  "Server Request Unit, bytes per server per block (FAST'08 Table 1: 256KB)"}
    qlim        {21      "switch port limit, packets (ns-2 queue-limit: DropTail holds qlim-1 waiting + 1 on the wire); 21 = 32 KiB of 1500 B packets"}
    hostQlim    {10000   "host NIC queue limit, packets (large: hosts do not drop their own packets)"}
    rate        {1Gb     "rate of every link (ns-2 bandwidth spec: 1Gb, 10Gb, or bit/s)"}
    delay       {25us    "one-way propagation delay of every link (ns-2 time spec or seconds); RTT = 4 x delay"}
    tcp         {newreno "reno | newreno | sack (Agent/TCP/Reno, Agent/TCP/Newreno, Agent/TCP/Sack1)"}
    packetSize  {1460    "payload bytes per packet (packetSize_; FAST'08 does not say; ns-2's default is 1000)"}
    header      {40      "TCP/IP header bytes per packet (tcpip_base_hdr_size_; also the ACK size)"}
    window      {20      "receive window cap, packets (window_)"}
    windowInit  {2       "initial window, packets (windowInit_)"}
    minrto      {0.2     "RTOmin, seconds (minrto_; FAST'08 Table 1: 200ms)"}
    maxrto      {60      "cap on the backed-off RTO, seconds (maxrto_)"}
    tcpTick     {0.01    "TCP clock granularity, seconds (tcpTick_; FAST'08 §5.2: RTOmin 200us needs 100us)"}
    rtxcurInit  {""      "RTO estimate before the first RTT sample, seconds (rtxcur_init_; ns-2's own default is 3.0); unset: what one sample of the path's RTT (4 x delay) gives, as a persistent connection's handshake would have"}
    singledup   {1       "limited transmit: 1 = on (singledup_, ns-2's default), 0 = off (FAST'08 Table 1)"}
    numdupacks  {3       "duplicate-ACK threshold (numdupacks_; FAST'08 dathresh)"}
    slowStartRestart {1  "1 = cwnd back to 1 when the RTO timer expires on an idle connection (slow_start_restart_, ns-2's default); 0 = no change"}
    overhead    {0       "send jitter (overhead_): what an ACK lets the agent send leaves uniform(0, overhead) s late, as one burst (TcpAgent::send_much)"}
    thinkTime   {0       "server think time: each response starts uniform(0, thinkTime) s late"}
    request     {64      "request packet size on the wire, bytes (only its serialization time is modelled)"}
    simTime     {20      "measured simulated seconds, from the first request (FAST'08 §3.1: 20 s)"}
    seed        {1       "seed of ns-2's default RNG (overhead) and of the think-time RNG; 1 or more"}
    trace       {""      "write a per-event trace CSV (the ns-3 peer's format) to this file"}
    lose        {""      "for tests: K[,K...]: the K-th packet (0-based, retransmissions included) server 0 sends is lost on its link to the switch"}
    csvHeader   {0       "1 = print the CSV header line before the result line (--header is the TCP/IP header size)"}
}

proc usage {} {
    global OPTS
    set out "usage: ns incast.tcl \[--NAME VALUE ...\]\n"
    foreach name [lsort [array names OPTS]] {
        lassign $OPTS($name) default help
        append out [format "  --%-17s %s (default %s)\n" $name $help [expr {$default eq "" ? "none" : $default}]]
    }
    return $out
}

proc fail {message} {
    puts stderr "incast.tcl: error: $message"
    exit 2
}

# --NAME VALUE or --NAME=VALUE pairs into the global array opt.
proc parse_options {argv} {
    global OPTS opt
    foreach name [array names OPTS] { set opt($name) [lindex $OPTS($name) 0] }
    while {[llength $argv] > 0} {
        set argv [lassign $argv word]
        if {$word in {-h --help}} { puts [usage]; exit 0 }
        if {![regexp {^--([A-Za-z]+)(=(.*))?$} $word -> name has value]} {
            fail "$word: expected --NAME VALUE\n[usage]"
        }
        if {![info exists OPTS($name)]} {
            fail "--$name is not an option; options: [join [lsort [array names OPTS]] {, }]"
        }
        if {$has eq ""} {
            if {[llength $argv] == 0} { fail "--$name needs a value" }
            set argv [lassign $argv value]
        }
        set opt($name) $value
    }
}

proc require {name test allowed} {
    global opt
    if {![string is double -strict $opt($name)] || ![expr $test]} {
        fail "--$name: '$opt($name)' is not allowed; expected $allowed"
    }
}

proc check_options {} {
    global opt
    require servers    {$opt(servers) == int($opt(servers)) && $opt(servers) >= 1}  "a whole number >= 1"
    require sru        {$opt(sru) == int($opt(sru)) && $opt(sru) >= 1}              "bytes >= 1"
    require qlim       {$opt(qlim) == int($opt(qlim)) && $opt(qlim) >= 2}           "a whole number >= 2 (DropTail drops everything below 2)"
    require hostQlim   {$opt(hostQlim) == int($opt(hostQlim)) && $opt(hostQlim) >= 2} "a whole number >= 2"
    require packetSize {$opt(packetSize) == int($opt(packetSize)) && $opt(packetSize) >= 1} "bytes >= 1"
    require header     {$opt(header) == int($opt(header)) && $opt(header) >= 1}    "bytes >= 1"
    require window     {$opt(window) == int($opt(window)) && $opt(window) >= 1}    "packets >= 1"
    require windowInit {$opt(windowInit) == int($opt(windowInit)) && $opt(windowInit) >= 1} "packets >= 1"
    require minrto     {$opt(minrto) > 0}   "seconds > 0"
    require maxrto     {$opt(maxrto) >= $opt(minrto)} "seconds >= --minrto"
    # TcpAgent::rtt_init stores int(rttvar_init_ / tcpTick_) << 2 in an int
    require tcpTick    {$opt(tcpTick) >= 1e-7}  "seconds >= 1e-7 (finer overflows ns-2's integer RTT state)"
    if {$opt(rtxcurInit) ne ""} { require rtxcurInit {$opt(rtxcurInit) > 0} "seconds > 0" }
    require singledup  {$opt(singledup) in {0 1}} "0 or 1"
    require numdupacks {$opt(numdupacks) == int($opt(numdupacks)) && $opt(numdupacks) >= 1} "a whole number >= 1"
    require slowStartRestart {$opt(slowStartRestart) in {0 1}} "0 or 1"
    require overhead   {$opt(overhead) >= 0} "seconds >= 0"
    require thinkTime  {$opt(thinkTime) >= 0} "seconds >= 0"
    # a request must outlast an ACK on the client's NIC (see next_offset)
    require request    {$opt(request) == int($opt(request)) && 2 * $opt(request) > $opt(header)} "bytes > header / 2"
    require simTime    {$opt(simTime) > 0}  "seconds > 0"
    # seed 0 would make ns-2's RNG seed itself from the clock: not reproducible
    require seed       {$opt(seed) == int($opt(seed)) && $opt(seed) >= 1} "a whole number >= 1"
    require csvHeader  {$opt(csvHeader) in {0 1}} "0 or 1"
    foreach k [split $opt(lose) ,] {
        if {![string is integer -strict $k] || $k < 0} {
            fail "--lose: '$opt(lose)' is not allowed; expected packet numbers K[,K...] >= 0"
        }
    }
    if {$opt(tcp) ni {reno newreno sack}} {
        fail "--tcp: '$opt(tcp)' is not allowed; expected reno, newreno or sack"
    }
}

# A number with one of `units` (suffix -> power of ten) as a number in base
# units (the spellings ns-2's bw_parse / time_parse take, without their exit
# on error).  Scaled by writing the exponent, so "25us" is the double nearest
# 25e-6, as "2.5e-5" is, not 25 x 1e-6 (one ulp away: a different tie order).
proc parse_quantity {name units allowed} {
    global opt
    if {[regexp {^([0-9.]+)([A-Za-z]*)$} $opt($name) -> number unit] && [dict exists $units $unit]} {
        set value "${number}e[dict get $units $unit]"
        if {[string is double -strict $value]} { return [expr {double($value)}] }
    }
    if {[string is double -strict $opt($name)] && $opt($name) >= 0} { return [expr {double($opt($name))}] }
    fail "--$name: '$opt($name)' is not allowed; expected $allowed"
}

parse_options $argv
check_options

set ns [new Simulator]
# rate and delay as numbers (bit/s, seconds) for the request timing and the links
set RATE [parse_quantity rate {{} 0 b 0 kb 3 Mb 6 Gb 9 Tb 12} "a rate > 0: bit/s or 100Mb, 1Gb, 10Gb"]
set DELAY [parse_quantity delay {{} 0 s 0 ms -3 us -6 ns -9 ps -12} "a delay: seconds or 25us, 1ms"]
if {$RATE <= 0} { fail "--rate: '$opt(rate)' is not allowed; expected a rate > 0" }
set N $opt(servers)
set P $opt(packetSize)
set HDR $opt(header)
# one-way ns-2 TCP sends whole packets: ceil(sru / packetSize) per SRU
set NPKTS [expr {($opt(sru) + $P - 1) / $P}]

proc serialization {bytes} {
    global RATE
    return [expr {$bytes * 8.0 / $RATE}]
}

# ---------------------------------------------------------------- TCP defaults
proc configure_tcp {} {
    global opt P HDR
    if {$opt(rtxcurInit) eq ""} { set opt(rtxcurInit) [handshake_rtxcur] }
    # Connections are open before the first request (persistent, FAST'08 §3.1):
    # no SYN (tcp.cc, TcpAgent::output sends seqno 0 as a 40 B SYN when syn_),
    # and no delayed growth after the first ACK (TcpAgent::recv_newack_helper
    # callers reset cwnd to the initial window when last_ack_ == 0 and
    # delay_growth_, which only makes sense after a SYN).
    Agent/TCP set syn_ false
    Agent/TCP set delay_growth_ false
    Agent/TCP set packetSize_ $P
    Agent/TCP set tcpip_base_hdr_size_ $HDR
    Agent/TCP set window_ $opt(window)
    Agent/TCP set windowInit_ $opt(windowInit)
    Agent/TCP set minrto_ $opt(minrto)
    Agent/TCP set maxrto_ $opt(maxrto)
    Agent/TCP set tcpTick_ $opt(tcpTick)
    Agent/TCP set rtxcur_init_ $opt(rtxcurInit)
    Agent/TCP set singledup_ $opt(singledup)
    Agent/TCP set numdupacks_ $opt(numdupacks)
    Agent/TCP set slow_start_restart_ [expr {$opt(slowStartRestart) ? "true" : "false"}]
    Agent/TCP set overhead_ $opt(overhead)
    # ACK size = header (TcpSink::ack sends packetSize_ bytes)
    Agent/TCPSink set packetSize_ $HDR
}

# The estimate TcpAgent::rtt_update makes from a first sample of R ticks
# (at least 1): srtt = R, rttvar = R / 2, so t_rtxcur_ = R + 4 x R / 2 ticks.
proc handshake_rtxcur {} {
    global opt DELAY
    set ticks [expr {max(1, int(4 * $DELAY / $opt(tcpTick)))}]
    return [expr {3 * $ticks * $opt(tcpTick)}]
}

proc sender_class {} {
    global opt
    return [dict get {reno Agent/TCP/Reno newreno Agent/TCP/Newreno sack Agent/TCP/Sack1} $opt(tcp)]
}

proc sink_class {} {
    global opt
    return [expr {$opt(tcp) eq "sack" ? "Agent/TCPSink/Sack1" : "Agent/TCPSink"}]
}

# ---------------------------------------------------------------- topology
# Node ids: client 0, switch 1, server i is node i + 2 (the trace relies on it).
proc build_topology {} {
    global ns opt N RATE DELAY client switch server
    set client [$ns node]
    set switch [$ns node]
    for {set i 0} {$i < $N} {incr i} { set server($i) [$ns node] }
    foreach host [concat [list $client] [lmap i [range $N] {set server($i)}]] {
        $ns duplex-link $host $switch $RATE $DELAY DropTail
        $ns queue-limit $host $switch $opt(hostQlim)
        $ns queue-limit $switch $host $opt(qlim)
    }
}

proc range {n} {
    set out {}
    for {set i 0} {$i < $n} {incr i} { lappend out $i }
    return $out
}

proc build_agents {} {
    global ns N client server tcp sink
    for {set i 0} {$i < $N} {incr i} {
        set tcp($i) [new [sender_class]]
        $tcp($i) set fid_ $i
        $ns attach-agent $server($i) $tcp($i)
        set sink($i) [new [sink_class]]
        $ns attach-agent $client $sink($i)
        $ns connect $tcp($i) $sink($i)
        # TcpAgent::finish runs "$tcp done" when the last packet given to the
        # agent is acknowledged (recv_newack_helper; Sack1TcpAgent::recv)
        $tcp($i) proc done {} "part_done $i"
    }
}

# --lose: an ErrorModel/List (queue/errmodel.cc, ListErrorModel::corrupt
# counts the packets it sees) at the head of server 0's link, ahead of its
# queue; its drops go to the link's drop head (SimpleLink errormodule).
proc build_losses {} {
    global ns opt server switch
    if {$opt(lose) eq ""} { return }
    set em [new ErrorModel/List]
    $em unit pkt
    $em droplist [lsort -integer [split $opt(lose) ,]]
    $ns lossmodel $em $server(0) $switch
}

# ---------------------------------------------------------------- monitors
# QueueMonitor counters on every queue: the bottleneck's drops and arrivals,
# and any drop elsewhere (there should be none).
proc build_monitors {} {
    global ns N client switch server qmon
    set qmon(bottleneck) [$ns monitor-queue $switch $client ""]
    set qmon(clientNic) [$ns monitor-queue $client $switch ""]
    for {set i 0} {$i < $N} {incr i} {
        set qmon(toServer$i) [$ns monitor-queue $switch $server($i) ""]
        set qmon(serverNic$i) [$ns monitor-queue $server($i) $switch ""]
    }
}

proc other_drops {} {
    global qmon
    set total 0
    foreach name [array names qmon] {
        if {$name ne "bottleneck"} { incr total [$qmon($name) set pdrops_] }
    }
    return $total
}

# ---------------------------------------------------------------- workload
# How a block ends and the next begins (README.md): one-way agents carry no
# request, so the client's view is reconstructed from the servers'.  The last
# server's "done" fires when the ACK of the block's last packet reaches it,
# ACK_PATH after the client received that packet (ACKs never queue: the
# client's NIC and the switch's server ports carry only ACKs, far below their
# rate).  At that instant the client sends its ACK and then N requests of
# --request bytes in server order; server i starts one request path later.

set ACK_PATH [expr {2 * ([serialization $HDR] + $DELAY)}]
set PENDING 0
set BLOCK_TIMES {}

# Seconds from the client having sent its ACK (or, for the first block, from
# time 0 with nothing before the requests) until server i has its request:
# the client's NIC serializes requests 0..i, then the request crosses the
# switch's idle port towards server i.
proc request_arrival {i} {
    global opt DELAY
    return [expr {($i + 2) * [serialization $opt(request)] + 2 * $DELAY}]
}

proc think_time {} {
    global opt thinkRng
    if {$opt(thinkTime) == 0} { return 0 }
    return [$thinkRng uniform 0 $opt(thinkTime)]
}

# Each server i starts sending its SRU `offset(i)` seconds from now.
proc schedule_block {offset_of_server} {
    global ns N tcp NPKTS PENDING
    set PENDING $N
    set now [$ns now]
    for {set i 0} {$i < $N} {incr i} {
        set at [expr {$now + [{*}$offset_of_server $i] + [think_time]}]
        $ns at $at "$tcp($i) advanceby $NPKTS"
    }
}

proc first_offset {i} { return [request_arrival $i] }

# done of the block's last server: now = client completion + ACK_PATH; the
# client's ACK left its NIC one ACK serialization after completion.
proc next_offset {i} {
    global ACK_PATH HDR
    return [expr {[serialization $HDR] + [request_arrival $i] - $ACK_PATH}]
}

proc part_done {i} {
    global ns PENDING BLOCK_TIMES ACK_PATH
    incr PENDING -1
    if {$PENDING > 0} { return }
    lappend BLOCK_TIMES [expr {[$ns now] - $ACK_PATH}]
    schedule_block next_offset
}

# ---------------------------------------------------------------- measurement
# Packets in order at the client ACK_PATH ago, from its server's highest
# cumulative ACK (ack_ = highest_ack_, a packet count).  The sink's byte count
# would say it directly but is a C int (TcpSink::bytes_): it wraps after 2 GB,
# 17 s of one 1 Gbps flow.
proc packets_acked {i} {
    global tcp
    return [expr {[$tcp($i) set ack_] + 1}]
}

# Application payload in `pkts` in-order packets: whole SRUs, plus the part
# of the current SRU (its last packet is padded to packetSize by ns-2).
proc payload_of {pkts} {
    global NPKTS P opt
    set whole [expr {$pkts / $NPKTS}]
    set part [expr {min(($pkts % $NPKTS) * $P, $opt(sru))}]
    return [expr {wide($whole) * $opt(sru) + $part}]
}

proc agent_sum {var} {
    global N tcp
    set total 0
    for {set i 0} {$i < $N} {incr i} { incr total [$tcp($i) set $var] }
    return $total
}

# The payload the client held at simTime, read when the servers know it.
proc snapshot_payload {} {
    global N SNAP
    set payload 0
    for {set i 0} {$i < $N} {incr i} { incr payload [payload_of [packets_acked $i]] }
    set SNAP(payload) $payload
}

# The senders' and queues' counters up to simTime, read at simTime.
proc snapshot {} {
    global N SNAP qmon
    # nrexmit_: RTO expirations with data outstanding (TcpAgent::timeout)
    set SNAP(timeouts) [agent_sum nrexmit_]
    set SNAP(retransmits) [agent_sum nrexmitpack_]
    set SNAP(data_pkts) [agent_sum ndatapack_]
    # slowdown() calls from expirations with nothing outstanding: ncwndcuts_
    # counts every call, ncwndcuts1_ all but those (TcpAgent::slowdown)
    set SNAP(idle_expiries) [expr {[agent_sum ncwndcuts_] - [agent_sum ncwndcuts1_]}]
    set SNAP(drops) [$qmon(bottleneck) set pdrops_]
    set SNAP(bottleneck_pkts) [$qmon(bottleneck) set parrivals_]
    set SNAP(other_drops) [other_drops]
}

proc blocks_by {t} {
    global BLOCK_TIMES
    set n 0
    foreach b $BLOCK_TIMES { if {$b <= $t + 1e-12} { incr n } }
    return $n
}

set CSV_FIELDS {N sru qlim packet_size tcp singledup minrto sim_seconds blocks_completed goodput_mbps
    tcp_timeouts drops_at_bottleneck wall_seconds numdupacks window window_init tcp_tick rate_bps
    delay_s header slow_start_restart overhead think_time seed bottleneck_pkts other_drops retransmits
    data_pkts idle_expiries rtxcur_init maxrto}

proc result_row {} {
    global opt SNAP N P HDR RATE DELAY WALL_START
    set t $opt(simTime)
    return [list $N $opt(sru) $opt(qlim) $P $opt(tcp) $opt(singledup) $opt(minrto) \
        [format %.6f $t] [blocks_by $t] [format %.3f [expr {$SNAP(payload) * 8.0 / $t / 1e6}]] \
        $SNAP(timeouts) $SNAP(drops) [format %.3f [expr {([clock milliseconds] - $WALL_START) / 1000.0}]] \
        $opt(numdupacks) $opt(window) $opt(windowInit) $opt(tcpTick) [format %.0f $RATE] [format %.9g $DELAY] \
        $HDR $opt(slowStartRestart) $opt(overhead) $opt(thinkTime) $opt(seed) \
        $SNAP(bottleneck_pkts) $SNAP(other_drops) $SNAP(retransmits) $SNAP(data_pkts) \
        $SNAP(idle_expiries) [format %.9g $opt(rtxcurInit)] $opt(maxrto)]
}

proc finish {} {
    global opt CSV_FIELDS TRACE_CHAN
    if {$TRACE_CHAN ne ""} {
        close $TRACE_CHAN
        convert_trace "$opt(trace).raw" $opt(trace)
        file delete "$opt(trace).raw"
    }
    if {$opt(csvHeader)} { puts [join $CSV_FIELDS ,] }
    puts [join [result_row] ,]
    exit 0
}

# ---------------------------------------------------------------- trace
# Raw ns-2 traces (tagged format: full-precision times, trace/trace.cc
# Trace::format with pt_->tagged()) of the servers' NICs (tx/rtx), the links
# into the servers (ACKs), the bottleneck (enq/deq/drop) and each sender's
# cwnd_, ssthresh_ and RTO state variables (Agent::trace with nam_tracevar_),
# all on one channel so their order is the order of events.
set TRACE_CHAN ""

proc open_trace {} {
    global ns opt N client switch server tcp TRACE_CHAN
    if {[catch {open "$opt(trace).raw" w} TRACE_CHAN]} { fail "--trace: cannot write $opt(trace).raw" }
    fconfigure $TRACE_CHAN -buffering full -buffersize 1048576
    $ns use-taggedtrace
    $ns trace-queue $switch $client $TRACE_CHAN
    for {set i 0} {$i < $N} {incr i} {
        $ns trace-queue $server($i) $switch $TRACE_CHAN
        $ns trace-queue $switch $server($i) $TRACE_CHAN
        $tcp($i) set nam_tracevar_ true
        $tcp($i) attach $TRACE_CHAN
        foreach v {cwnd_ ssthresh_ srtt_ rttvar_ backoff_} { $tcp($i) trace $v }
    }
}

# The RTO TcpAgent::rtt_timeout would set (rfc2988_ true): RTOmin clamps the
# estimate before the backoff, maxrto_ caps it, 2 ticks is the floor.
proc rto_of {rtxcur backoff} {
    global opt
    set base [expr {$rtxcur < $opt(minrto) ? $opt(minrto) : $rtxcur}]
    set rto [expr {min($base * $backoff, $opt(maxrto))}]
    return [expr {max($rto, 2.0 * $opt(tcpTick))}]
}

# t_rtxcur_ as TcpAgent::rtt_update sets it from t_srtt_ (3 fraction bits)
# and t_rttvar_ (2 fraction bits) with rttvar_exp_ 2, in ticks x tcpTick.
proc rtxcur_of {srtt rttvar} {
    global opt
    return [expr {((($rttvar << 3) + $srtt) >> 3) * $opt(tcpTick)}]
}

proc convert_trace {raw out} {
    global N P opt
    set in [open $raw r]
    set tr [open $out w]
    fconfigure $tr -buffering full -buffersize 1048576
    # per flow: highest packet sent; RTO state; the bottleneck's length
    for {set f 0} {$f < $N} {incr f} {
        set maxsent($f) -1
        set srtt($f) 0; set rttvar($f) 0; set backoff($f) 1
        set rtxcur($f) $opt(rtxcurInit)
        set rto($f) [rto_of $rtxcur($f) 1]
        set touched($f) 0; set backed($f) 0
    }
    set qlen 0
    set held ""
    set group_time ""
    while {[gets $in line] >= 0} {
        set kind [string index $line 0]
        if {$kind eq "f"} {
            # f -t TIME -s NODE -d NODE -n VAR -a NAME -v VALUE [-o OLD] -T v
            set t [format %.12f [lindex $line 2]]
            set f [expr {[lindex $line 4] - 2}]
            set var [lindex $line 8]
            set v [lindex $line 12]
        } else {
            # K TIME -s FROM -d TO -p TYPE -e SIZE -c FID -i UID -a FID -x {SRC DST SEQ FLAGS NAME}
            set t [format %.12f [lindex $line 1]]
            set from [lindex $line 3]; set to [lindex $line 5]
            set type [lindex $line 7]; set f [lindex $line 11]; set uid [lindex $line 13]
            set seq [lindex [lindex $line 17] 2]
        }
        if {$t ne $group_time} {
            flush_rto $tr $group_time
            set group_time $t
        }
        # a "+" at the bottleneck is an enqueue unless the next line drops it
        if {$held ne ""} {
            lassign $held ht hf hseq huid
            if {$kind eq "d" && $uid == $huid} {
                puts $tr "$ht,drop,$hf,[expr {$hseq * $P + 1}],$P,$qlen"
                set held ""
                continue
            }
            incr qlen
            puts $tr "$ht,enq,$hf,[expr {$hseq * $P + 1}],$P,$qlen"
            set held ""
        }
        switch -- $kind {
            f {
                switch -- $var {
                    cwnd_ { puts $tr "$t,cwnd,$f,[expr {round($v * $P)}],0" }
                    ssthresh_ { puts $tr "$t,ssth,$f,[expr {$v * $P}],0" }
                    srtt_ { set srtt($f) $v; set touched($f) 1 }
                    rttvar_ { set rttvar($f) $v; set touched($f) 1 }
                    backoff_ {
                        if {$v > $backoff($f)} { set backed($f) 1 }
                        set backoff($f) $v; set touched($f) 1
                    }
                }
            }
            + {
                if {$type ne "tcp"} { continue }
                if {$to == 1 && $from >= 2} {
                    set what [expr {$seq <= $maxsent($f) ? "rtx" : "tx"}]
                    if {$seq > $maxsent($f)} { set maxsent($f) $seq }
                    puts $tr "$t,$what,$f,[expr {$seq * $P + 1}],$P"
                } elseif {$from == 1 && $to == 0} {
                    set held [list $t $f $seq $uid]
                }
            }
            - {
                if {$type eq "tcp" && $from == 1 && $to == 0} {
                    incr qlen -1
                    puts $tr "$t,deq,$f,[expr {$seq * $P + 1}],$P,$qlen"
                }
            }
            d {
                # a drop not right after its own "+" (none expected: DropTail drops on arrival)
                if {$type eq "tcp" && $from == 1 && $to == 0} {
                    puts $tr "$t,drop,$f,[expr {$seq * $P + 1}],$P,$qlen"
                }
            }
            r {
                # the sink ACKs with the highest in-order seqno: next byte expected after it
                if {$type eq "ack" && $from == 1 && $to >= 2} {
                    puts $tr "$t,ack,$f,[expr {($seq + 1) * $P + 1}],0"
                }
            }
        }
    }
    if {$held ne ""} {
        lassign $held ht hf hseq huid
        incr qlen
        puts $tr "$ht,enq,$hf,[expr {$hseq * $P + 1}],$P,$qlen"
    }
    flush_rto $tr $group_time
    close $in
    close $tr
}

# After all of one instant's variable changes: a new RTT sample (srtt/rttvar
# changed, no backoff) recomputes t_rtxcur_; a timeout doubles t_backoff_ and,
# past 8, clobbers srtt into rttvar without recomputing it (rtt_backoff).
proc flush_rto {tr t} {
    upvar 1 touched touched backed backed srtt srtt rttvar rttvar backoff backoff rtxcur rtxcur rto rto
    foreach f [array names touched] {
        if {!$touched($f)} { continue }
        if {!$backed($f) && $srtt($f) > 0} { set rtxcur($f) [rtxcur_of $srtt($f) $rttvar($f)] }
        set new [rto_of $rtxcur($f) $backoff($f)]
        if {$new != $rto($f)} {
            puts $tr "$t,rto,$f,[expr {round($rto($f) * 1e6)}],[expr {round($new * 1e6)}]"
            set rto($f) $new
        }
        set touched($f) 0; set backed($f) 0
    }
}

# ---------------------------------------------------------------- run
configure_tcp
build_topology
build_agents
build_monitors
build_losses
set thinkRng [new RNG]
$thinkRng seed $opt(seed)
# Random::uniform (overhead_) draws from ns-2's default RNG
$defaultRNG seed $opt(seed)
if {$opt(trace) ne ""} { open_trace }

$ns at 0 "schedule_block first_offset"
$ns at $opt(simTime) "snapshot"
# what reached the client by simTime (a block's last packet, any packet) is
# known to its server ACK_PATH later
$ns at [expr {$opt(simTime) + $ACK_PATH}] "snapshot_payload"
$ns at [expr {$opt(simTime) + 2 * $ACK_PATH}] "finish"
$ns run
