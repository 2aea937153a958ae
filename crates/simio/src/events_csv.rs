//! The per-event trace as CSV lines in the ns-3 peer's format (`peers/ns3/README.md`,
//! "Trace format"): `time_s,kind,flow,a,b[,c]`, no header line, so one script reads a
//! trace of either simulator (`python -m incastlab.peers.tracediff`).
//!
//! Times are seconds written exactly from the core's picoseconds (12 decimals).

use std::io::{self, Write};

use incast_sim::trace::EventRow;

use crate::trace_csv::Seconds;

/// Write `rows`; returns the number of rows.
pub fn write_events_csv<W: Write>(rows: &[EventRow], mut out: W) -> io::Result<u64> {
    for r in rows {
        write!(out, "{},{},{},{},{}", Seconds(r.time), r.kind.name(), r.flow, r.a, r.b)?;
        match r.c {
            Some(c) => writeln!(out, ",{c}")?,
            None => writeln!(out)?,
        }
    }
    out.flush()?;
    Ok(rows.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use incast_sim::time::Time;
    use incast_sim::trace::EventKind;

    #[test]
    fn rows_are_written_in_the_ns3_peer_format() {
        let rows = [
            EventRow { time: Time(1_000_000), kind: EventKind::Tx, flow: 2, a: 1461, b: 1460, c: None },
            EventRow { time: Time(12_500_000), kind: EventKind::Drop, flow: 2, a: 1461, b: 1460, c: Some(21) },
        ];
        let mut out = Vec::new();
        assert_eq!(write_events_csv(&rows, &mut out).unwrap(), 2);
        assert_eq!(String::from_utf8(out).unwrap(), "0.000001000000,tx,2,1461,1460\n0.000012500000,drop,2,1461,1460,21\n");
    }
}
