//! Attach the bucket program to an interface and read finished buckets.

use std::os::fd::{AsRawFd, OwnedFd};

use super::insn::{bucket_program, VALUE_SIZE};
use super::sys;
use crate::clock::now_ns;
use crate::sampler::Intervals;

/// Default bucket width: 100 us, Millisampler's finest.
pub const BUCKET_NS: u64 = 100_000;
/// Narrowest bucket accepted: finer ones cost the reader one map lookup per bucket per
/// direction (200k syscalls/s at 10 us) for resolution TCP at these rates does not need.
pub const MIN_BUCKET_NS: u64 = 50_000;
/// The ring of buckets covers at least this long, so a reader that drains once a second
/// has slack before a slot is reused.
const RING_SPAN_NS: u64 = 4_000_000_000;

/// Buckets per direction: a power of two covering [`RING_SPAN_NS`].
pub fn ring_size(bucket_ns: u64) -> u32 {
    (RING_SPAN_NS / bucket_ns).next_power_of_two().max(1 << 10) as u32
}
/// A bucket is read only once it is this many buckets old: a program that took its
/// timestamp just before a boundary may still be adding to the previous bucket.
const SETTLE: u64 = 2;

/// The attached programs, their map, and the next bucket to read.
pub struct KernelBins {
    map: OwnedFd,
    _progs: Vec<OwnedFd>,
    _links: Vec<OwnedFd>,
    ncpus: usize,
    next: u64,
    bucket_ns: u64,
    ring: u32,
    iface: std::ffi::CString,
    ifindex: u32,
}

/// Number of possible CPUs (the per-CPU map holds one value for each).
fn possible_cpus() -> Result<usize, String> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").map_err(|e| e.to_string())?;
    parse_cpu_list(text.trim()).ok_or_else(|| format!("cannot parse the possible CPU list {text:?}"))
}

/// Count of CPUs in a list such as `0-3,8-11` or `0`.
pub fn parse_cpu_list(text: &str) -> Option<usize> {
    let mut n = 0;
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => n += b.parse::<usize>().ok()?.checked_sub(a.parse::<usize>().ok()?)? + 1,
            None => {
                part.parse::<usize>().ok()?;
                n += 1
            }
        }
    }
    Some(n)
}

impl KernelBins {
    /// Load the programs and attach them to `iface` (ingress = rx, egress = tx). Needs
    /// CAP_BPF and CAP_NET_ADMIN and a kernel with TCX (Linux >= 6.6).
    pub fn attach(iface: &str, bucket_ns: u64) -> Result<KernelBins, String> {
        if bucket_ns < MIN_BUCKET_NS || bucket_ns > i32::MAX as u64 {
            return Err(format!("in-kernel buckets must be {} us to 2 s wide", MIN_BUCKET_NS / 1000));
        }
        let ring = ring_size(bucket_ns);
        let cname = std::ffi::CString::new(iface).map_err(|_| format!("bad interface name {iface:?}"))?;
        // SAFETY: a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(format!("no interface {iface:?} in this network namespace"));
        }
        let ncpus = possible_cpus()?;
        let map = sys::create_percpu_array(VALUE_SIZE, 2 * ring).map_err(|e| format!("bpf map: {e}"))?;
        let mut progs = Vec::new();
        let mut links = Vec::new();
        for (base, attach, name) in [(0, sys::BPF_TCX_INGRESS, "ilmon_rx"), (ring, sys::BPF_TCX_EGRESS, "ilmon_tx")] {
            let insns = bucket_program(map.as_raw_fd(), bucket_ns as i32, (ring - 1) as i32, base as i32);
            let prog = sys::load_sched_cls(&insns, name).map_err(|e| format!("loading the bpf program: {e}"))?;
            let link = sys::tcx_attach(prog.as_raw_fd(), ifindex, attach)
                .map_err(|e| format!("attaching to {iface} (tcx): {e}"))?;
            progs.push(prog);
            links.push(link);
        }
        // include the bucket in progress: packets after the attach in it are ours
        let next = now_ns() / bucket_ns;
        Ok(KernelBins { map, _progs: progs, _links: links, ncpus, next, bucket_ns, ring, iface: cname, ifindex })
    }

    /// Sum of this bucket's `{bytes, packets, ce}` over CPUs (copies of other epochs are
    /// stale slots: 0).
    fn bucket(&self, slot: u32, epoch: u64, buf: &mut [u8]) -> Result<[u64; 3], String> {
        sys::lookup(self.map.as_raw_fd(), slot, buf).map_err(|e| format!("reading the bpf map: {e}"))?;
        let mut out = [0u64; 3];
        for cpu in 0..self.ncpus {
            let v = &buf[cpu * VALUE_SIZE as usize..(cpu + 1) * VALUE_SIZE as usize];
            let word = |i: usize| u64::from_ne_bytes(v[i * 8..i * 8 + 8].try_into().unwrap());
            if word(0) == epoch {
                for (k, total) in out.iter_mut().enumerate() {
                    *total += word(k + 1);
                }
            }
        }
        Ok(out)
    }

    /// Every finished bucket since the last call, as 100 us intervals (ECN CE marks in
    /// `rx_ce`/`tx_ce`). Buckets older than the ring (reader stalled > 3 s) are counted
    /// in `missed` and skipped.
    pub fn drain(&mut self) -> Result<(Intervals, Vec<u64>, Vec<u64>), String> {
        // a deleted interface silently detaches the programs: say so instead of reporting zeros
        // SAFETY: a valid NUL-terminated string.
        if unsafe { libc::if_nametoindex(self.iface.as_ptr()) } != self.ifindex {
            return Err(format!("{}: the interface disappeared", self.iface.to_string_lossy()));
        }
        let (bucket_ns, ring) = (self.bucket_ns, self.ring as u64);
        let last = now_ns() / bucket_ns - SETTLE;
        let mut out = Intervals::default();
        let (mut rx_ce, mut tx_ce) = (Vec::new(), Vec::new());
        if last + 1 > self.next + ring - 2 * SETTLE {
            let first = last + 1 - (ring - 2 * SETTLE);
            out.missed = first - self.next;
            self.next = first;
        }
        let mut buf = vec![0u8; self.ncpus * VALUE_SIZE as usize];
        for b in self.next..=last {
            let slot = (b % ring) as u32;
            let rx = self.bucket(slot, b, &mut buf)?;
            let tx = self.bucket(slot + self.ring, b, &mut buf)?;
            out.t_end_ns.push((b + 1) * bucket_ns);
            out.dt_ns.push(bucket_ns);
            out.rx_bytes.push(rx[0]);
            out.rx_packets.push(rx[1]);
            out.tx_bytes.push(tx[0]);
            out.tx_packets.push(tx[1]);
            rx_ce.push(rx[2]);
            tx_ce.push(tx[2]);
        }
        self.next = self.next.max(last + 1);
        Ok((out, rx_ce, tx_ce))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_covers_at_least_four_seconds() {
        assert_eq!(ring_size(100_000), 1 << 16);
        assert!(ring_size(1_000_000) as u64 * 1_000_000 >= RING_SPAN_NS);
        assert!(KernelBins::attach("lo", 10_000).is_err()); // narrower than MIN_BUCKET_NS
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(parse_cpu_list("0-1"), Some(2));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-3,8-11"), Some(8));
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn program_loads_and_counts_loopback_traffic_when_privileged() {
        // Needs CAP_BPF/CAP_NET_ADMIN; CI runs as root. Unprivileged, attaching must fail
        // with a message, never crash.
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        match KernelBins::attach("lo", BUCKET_NS) {
            Err(e) => assert!(!root && !e.is_empty(), "as root, attaching must work here: {e}"),
            Ok(mut k) => {
                let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                let addr = s.local_addr().unwrap();
                for _ in 0..20 {
                    s.send_to(&[0u8; 1000], addr).unwrap();
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
                let (iv, _, _) = k.drain().unwrap();
                let pkts: u64 = iv.tx_packets.iter().sum();
                let bytes: u64 = iv.tx_bytes.iter().sum();
                // other loopback traffic may add to these; ours is at least 20 x (1000 + headers)
                assert!(pkts >= 20, "{pkts}");
                assert!(bytes >= 20 * 1042, "{bytes}");
                assert!(iv.dt_ns.iter().all(|&d| d == BUCKET_NS));
            }
        }
    }
}
