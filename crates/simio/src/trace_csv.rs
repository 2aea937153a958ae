//! The per-flow sender trace as CSV: one row per event that can change a sender's
//! state (an ACK arrived, the retransmission timer fired, the application wrote).
//!
//! Times are seconds written exactly from the core's picoseconds (12 decimals);
//! `snd_una` / `snd_nxt` are the core's relative byte sequence numbers (first data byte
//! 1), the same numbers Wireshark shows as relative sequence numbers.

use std::io::{self, Write};

use incast_sim::time::{Time, PS_PER_S};
use incast_sim::trace::TraceRow;

/// The header line's columns, in order.
pub const COLUMNS: [&str; 10] =
    ["time_s", "flow", "event", "cwnd_bytes", "ssthresh_bytes", "srtt_s", "rto_s", "snd_una", "snd_nxt", "in_recovery"];

/// Write `rows` (header first); returns the number of rows.
pub fn write_trace_csv<W: Write>(rows: &[TraceRow], mut out: W) -> io::Result<u64> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            Seconds(r.time),
            r.flow,
            r.event.name(),
            r.cwnd,
            r.ssthresh,
            Seconds(r.srtt),
            Seconds(r.rto),
            r.snd_una,
            r.snd_nxt,
            r.in_recovery
        )?;
    }
    out.flush()?;
    Ok(rows.len() as u64)
}

/// Exact decimal seconds of a picosecond time.
pub(crate) struct Seconds(pub(crate) Time);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:012}", self.0 .0 / PS_PER_S, self.0 .0 % PS_PER_S)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use incast_sim::trace::TraceEvent;

    #[test]
    fn rows_are_written_with_exact_seconds_and_named_events() {
        let row = TraceRow {
            time: Time(1_500_000_000_001),
            flow: 3,
            event: TraceEvent::Timeout,
            cwnd: 1460,
            ssthresh: 2920,
            srtt: Time(100_000_000),
            rto: Time(200_000_000_000),
            snd_una: 1,
            snd_nxt: 1461,
            in_recovery: false,
        };
        let mut out = Vec::new();
        assert_eq!(write_trace_csv(&[row], &mut out).unwrap(), 1);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines[0], "time_s,flow,event,cwnd_bytes,ssthresh_bytes,srtt_s,rto_s,snd_una,snd_nxt,in_recovery");
        assert_eq!(lines[1], "1.500000000001,3,timeout,1460,2920,0.000100000000,0.200000000000,1,1461,false");
    }
}
