//! Simulate one scenario and write the records asked for, each file whole or not at all.

use std::path::PathBuf;

use incast_sim::trace::RecordOptions;
use incast_sim::scenario::Workload;
use incast_sim::{Scenario, SimResult};

use crate::{events_csv, pcap, trace_csv, write_atomically};

/// Default bound on captured packets (memory: about 100 B each while simulating).
pub const DEFAULT_CAPTURE_LIMIT: usize = 5_000_000;

/// Which files to write.
#[derive(Clone, Debug)]
pub struct FileRequest {
    pub pcap: Option<PathBuf>,
    pub pcap_options: pcap::PcapOptions,
    /// At most this many captured packets (the file gets the first ones).
    pub capture_limit: usize,
    pub trace: Option<PathBuf>,
    /// Flows to trace (each below [`flow_count`]).
    pub trace_flows: Vec<u32>,
    /// The per-event trace of every flow (ns-3 peer format).
    pub events: Option<PathBuf>,
    /// Sample every port at this interval (`incast_sim::port_util`); returned, not written.
    pub port_util_interval: Option<incast_sim::time::Time>,
    /// Record the ground truth of every loss and timeout (`incast_sim::trace::LossRow`);
    /// returned, not written.
    pub losses: bool,
    /// Report how far the run has got here while it runs.
    pub progress: Option<std::sync::Arc<incast_sim::progress::RunProgress>>,
}

impl Default for FileRequest {
    fn default() -> FileRequest {
        FileRequest {
            pcap: None,
            pcap_options: pcap::PcapOptions::default(),
            capture_limit: DEFAULT_CAPTURE_LIMIT,
            trace: None,
            trace_flows: vec![],
            events: None,
            port_util_interval: None,
            losses: false,
            progress: None,
        }
    }
}

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct Written {
    pub pcap: Option<pcap::PcapSummary>,
    pub capture_truncated: bool,
    pub trace_rows: Option<u64>,
    pub event_rows: Option<u64>,
    /// The per-port series, when asked for.
    pub port_util: Option<incast_sim::port_util::PortUtil>,
    /// The ground truth of losses and timeouts, when asked for.
    pub truth: Option<(Vec<incast_sim::trace::LossRow>, Vec<incast_sim::trace::TimeoutRow>)>,
    /// Each flow's (sender host, receiver host), by flow id.
    pub ends: Vec<(u32, u32)>,
}

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A request that cannot be met, in the core's "param: value is not allowed; expected ..." form.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Simulate `sc`, recording what `req` asks for, and write the files.
pub fn simulate_to_files(sc: &Scenario, req: &FileRequest) -> Result<(SimResult, Written), Error> {
    let n = sc.spec.servers;
    let (flows, why) = flow_count(sc);
    if let Some(&f) = req.trace_flows.iter().find(|&&f| f as u64 >= flows) {
        return Err(Box::new(Refused(format!(
            "trace_flows: {f} is not allowed; expected flow numbers from 0 to {} ({why})",
            flows.saturating_sub(1)
        ))));
    }
    if req.pcap.is_some() {
        // every host needs an address (`address::host_ip`): servers, clients, the victim's two
        let hosts = n as u64 + sc.spec.clients as u64 * (sc.spec.workload == Workload::SyncRead) as u64
            + 2 * sc.spec.victim as u64;
        if n > crate::address::MAX_SERVERS || hosts > crate::address::MAX_SERVERS as u64 + 1 {
            return Err(Box::new(Refused(format!(
                "pcap: {n} servers and {} clients is not allowed; expected at most {} hosts \
                 (one address each in 198.18.0.0/15)",
                sc.spec.clients,
                crate::address::MAX_SERVERS + 1
            ))));
        }
        if req.capture_limit == 0 {
            return Err(Box::new(Refused("capture_limit: 0 is not allowed; expected at least 1 packet".into())));
        }
    }
    let opts = RecordOptions {
        capture_limit: if req.pcap.is_some() { req.capture_limit } else { 0 },
        trace_flows: if req.trace.is_some() { req.trace_flows.clone() } else { vec![] },
        events: req.events.is_some(),
        port_util_interval: req.port_util_interval,
        port_util_cap_bytes: None,
        losses: req.losses,
        progress: req.progress.clone(),
    };
    let (result, mut records) = incast_sim::record(sc, &opts)?;
    if incast_sim::cancel_requested() {
        // cut short: write nothing rather than half a run
        return Err(Box::new(Refused("cancelled: no file written".into())));
    }
    let truth = req.losses.then(|| (std::mem::take(&mut records.losses), std::mem::take(&mut records.timeouts)));
    let ends = records.ends.clone();
    let mut written = Written { port_util: records.port_util.take(), truth, ends, ..Written::default() };
    if let Some(path) = &req.pcap {
        let summary = write_atomically(path, |w| {
            pcap::write_pcap(sc, &records, &req.pcap_options, w).map_err(std::io::Error::other)
        })
        .map_err(|e| with_path(e, path))?;
        written.pcap = Some(summary);
        written.capture_truncated = records.capture_truncated;
    }
    if let Some(path) = &req.trace {
        let rows = write_atomically(path, |w| trace_csv::write_trace_csv(&records.trace, w)).map_err(|e| with_path(e, path))?;
        written.trace_rows = Some(rows);
    }
    if let Some(path) = &req.events {
        let rows = write_atomically(path, |w| events_csv::write_events_csv(&records.events, w)).map_err(|e| with_path(e, path))?;
        written.event_rows = Some(rows);
    }
    Ok((result, written))
}

/// How many flows a run of `sc` can have (flow ids run from 0 to this minus 1), and why:
/// client c's flow from server i is flow c * servers + i; the Riak workload opens a flow per
/// (replica, coordinator) pair of nodes as its gets first need it, after the bulk flows (made
/// at the start). The victim's flow and, with the reads, the bulk flows come after the reads'
/// and are not traced ones; a background's flows come after the workload's.
pub fn flow_count(sc: &Scenario) -> (u64, String) {
    let (n, c, bulk) = (sc.spec.servers as u64, sc.spec.clients as u64, sc.spec.bulk_flows as u64);
    match sc.spec.workload {
        Workload::SyncRead => (n * c, format!("servers x clients = {n} x {c}: one flow per server and client")),
        Workload::Riak if bulk > 0 => (
            bulk + n * (n - 1),
            format!("bulk_flows + servers x (servers - 1) = {bulk} + {n} x {}: the bulk flows, then workload \
                     riak's, one per ordered pair of nodes", n - 1),
        ),
        Workload::Riak => (
            n * (n - 1),
            format!("servers x (servers - 1) = {n} x {}: workload riak, one flow per ordered pair of nodes", n - 1),
        ),
        Workload::Incast => {
            let i = sc.spec.incasts as u64;
            (n * i, format!("servers x incasts = {n} x {i}: one flow per sender of each incast"))
        }
        Workload::Shuffle => (n * (n - 1), format!("servers x (servers - 1) = {n} x {}: every host to every other", n - 1)),
        Workload::Permutation => (n, format!("servers = {n}: one flow per host")),
    }
}

fn with_path(e: std::io::Error, path: &std::path::Path) -> Error {
    Box::new(std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
