//! The mirror-port capture as a pcap file (nanosecond timestamps, Ethernet link type).
//!
//! Simulated time 0 is the Unix epoch in the file. Frames appear in capture order: the
//! synthetic handshakes first (all at time 0), then every packet the core captured.

use std::io::Write;
use std::time::Duration;

use incast_sim::trace::Records;
use incast_sim::Scenario;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::frame::{self, Wired};
use crate::wire::Wire;

/// Bytes of each frame kept by default: every header (at most 94 B) plus the start of
/// the payload, so a 5-million-packet capture stays a few hundred MB.
pub const DEFAULT_SNAPLEN: u32 = 128;

/// Snap length in the file header (tcpdump's default; larger than any frame we write).
const FILE_SNAPLEN: u32 = 262_144;

/// How to write the capture.
#[derive(Clone, Debug)]
pub struct PcapOptions {
    /// Bytes of each frame kept (the rest is stated in the original length).
    pub snaplen: u32,
    /// Also write data packets the switch dropped (what a mirror port sees); false writes
    /// only what reached the client.
    pub include_dropped: bool,
}

impl Default for PcapOptions {
    fn default() -> PcapOptions {
        PcapOptions { snaplen: DEFAULT_SNAPLEN, include_dropped: true }
    }
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcapSummary {
    /// Frames in the file, handshakes included.
    pub frames: u64,
    /// Of which synthetic handshake frames (3 per flow).
    pub handshake_frames: u64,
    /// Data frames the switch dropped (written only with `include_dropped`).
    pub dropped_frames: u64,
}

/// Write `records.capture` of a run of `sc` to `out` as a pcap file.
pub fn write_pcap<W: Write>(
    sc: &Scenario,
    records: &Records,
    opts: &PcapOptions,
    out: W,
) -> Result<PcapSummary, Box<dyn std::error::Error + Send + Sync>> {
    let mut wire = Wire::new(sc, &records.ends)?;
    let snaplen = opts.snaplen.max(frame::MAX_HEADERS as u32);
    let header = PcapHeader {
        // The file header states tcpdump's default snap length, not `snaplen`: some
        // readers (pcap-file among them) refuse a frame whose original length exceeds
        // the header's; the per-frame captured length is what says a frame was cut.
        snaplen: FILE_SNAPLEN.max(snaplen),
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(out, header)?;
    let mut buf = Vec::with_capacity(snaplen as usize);
    let mut summary = PcapSummary::default();
    let mut put = |w: &mut PcapWriter<W>, ts: Duration, wired: &Wired| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let orig = frame::encode_wired(wired, snaplen as usize, &mut buf)?;
        w.write_packet(&PcapPacket::new(ts, orig, &buf))?;
        Ok(())
    };
    // flows start established unless the run simulates handshakes: make them up (not for
    // the victim's, the last flow, which never crosses the client's port)
    if !sc.spec.handshake {
        for f in 0..wire.flows().saturating_sub(sc.spec.victim as u32) {
            for seg in wire.handshake(f) {
                put(&mut w, Duration::ZERO, &Wired::Tcp(seg))?;
                summary.handshake_frames += 1;
            }
        }
    }
    summary.frames = summary.handshake_frames;
    for c in &records.capture {
        if c.dropped {
            if !opts.include_dropped {
                continue;
            }
            summary.dropped_frames += 1;
        }
        debug_assert!(!c.dropped || c.packet.kind.to_client());
        let seg = wire.segment(&c.packet);
        // picoseconds rounded down to the file's nanoseconds: order is kept
        put(&mut w, Duration::from_nanos(c.time.0 / 1_000), &seg)?;
        summary.frames += 1;
    }
    w.into_writer().flush()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address;
    use incast_sim::packet::Kind;
    use incast_sim::trace::RecordOptions;
    use incast_sim::ScenarioSpec;
    use pcap_file::pcap::PcapReader;

    fn run() -> (Scenario, Records) {
        let spec = ScenarioSpec { servers: 8, blocks: Some(3), duration_ps: None, ..ScenarioSpec::default() };
        let sc = spec.validate().unwrap();
        let (_, rec) = incast_sim::simulate_recording(&sc, &RecordOptions { capture_limit: 1 << 20, ..Default::default() });
        (sc, rec)
    }

    #[test]
    fn file_reads_back_with_one_frame_per_captured_packet_plus_handshakes() {
        let (sc, rec) = run();
        let mut bytes = Vec::new();
        let s = write_pcap(&sc, &rec, &PcapOptions::default(), &mut bytes).unwrap();
        assert_eq!(s.handshake_frames, 3 * 8);
        assert_eq!(s.frames, rec.capture.len() as u64 + 24);
        assert!(s.dropped_frames > 0, "the scenario must drop something");
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
        let mut n = 0u64;
        let mut last = Duration::ZERO;
        let mut orig_total = 0u64;
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            assert!(p.timestamp >= last, "frames in time order");
            last = p.timestamp;
            assert!(p.data.len() <= DEFAULT_SNAPLEN as usize);
            orig_total += p.orig_len as u64;
            n += 1;
        }
        assert_eq!(n, s.frames);
        // every data frame states its full size: 14 B Ethernet + the core's wire bytes
        let data_wire: u64 = rec.capture.iter().filter(|c| c.packet.kind == Kind::Data).map(|c| 14 + c.packet.wire_bytes as u64).sum();
        assert!(orig_total > data_wire);
    }

    #[test]
    fn received_only_variant_leaves_out_dropped_packets() {
        let (sc, rec) = run();
        let opts = PcapOptions { include_dropped: false, ..PcapOptions::default() };
        let s = write_pcap(&sc, &rec, &opts, std::io::sink()).unwrap();
        let dropped = rec.capture.iter().filter(|c| c.dropped).count() as u64;
        assert!(dropped > 0);
        assert_eq!(s.frames, rec.capture.len() as u64 - dropped + 24);
        assert_eq!(s.dropped_frames, 0);
    }

    #[test]
    fn several_clients_and_riak_nodes_are_each_addressed_as_their_hosts() {
        use incast_sim::scenario::Workload;
        let ms = incast_sim::time::PS_PER_S / 1000;
        let duration_ps = Some(20 * ms);
        let two_clients = ScenarioSpec { servers: 4, clients: 2, duration_ps, ..ScenarioSpec::default() };
        let riak = ScenarioSpec { servers: 8, workload: Workload::Riak, get_rate: 2000.0, ..two_clients.clone() };
        let riak = ScenarioSpec { clients: 1, ..riak };
        for spec in [two_clients, riak] {
            let sc = spec.validate().unwrap();
            let opts = RecordOptions { capture_limit: 1 << 20, ..Default::default() };
            let (_, rec) = incast_sim::simulate_recording(&sc, &opts);
            let mut bytes = Vec::new();
            let s = write_pcap(&sc, &rec, &PcapOptions::default(), &mut bytes).unwrap();
            assert_eq!(s.handshake_frames, 3 * rec.ends.len() as u64, "a handshake per flow");
            // each SYN comes from its flow's receiving host, to its sending host
            let mut wire = Wire::new(&sc, &rec.ends).unwrap();
            let mut syns = std::collections::BTreeSet::new();
            for f in 0..rec.ends.len() as u32 {
                let syn = wire.handshake(f)[0].clone();
                let (src, dst) = rec.ends[f as usize];
                let n = sc.spec.servers;
                let hosts = (address::host_ip(dst, n).unwrap(), address::host_ip(src, n).unwrap());
                assert_eq!((syn.src.ip, syn.dst.ip), hosts);
                syns.insert((syn.src.ip, syn.dst.ip));
            }
            assert_eq!(syns.len(), rec.ends.len(), "no two flows share a pair of hosts");
            let mut r = PcapReader::new(&bytes[..]).unwrap();
            let mut n = 0u64;
            while let Some(p) = r.next_packet() {
                p.unwrap();
                n += 1;
            }
            assert_eq!(n, s.frames);
        }
    }
}
