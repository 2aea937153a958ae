//! Raw `bpf(2)` calls: create a map, load a program, attach it with a TCX link, look up
//! a map element. `union bpf_attr` is passed as a zeroed 144-byte buffer with the few
//! fields each command reads written at their offsets (checked against linux/bpf.h).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

const ATTR_SIZE: usize = 144;

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_LOOKUP_ELEM: i32 = 1;
const BPF_PROG_LOAD: i32 = 5;
const BPF_LINK_CREATE: i32 = 28;

pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
pub const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
/// `enum bpf_attach_type` (Linux >= 6.6)
pub const BPF_TCX_INGRESS: u32 = 46;
pub const BPF_TCX_EGRESS: u32 = 47;

struct Attr([u8; ATTR_SIZE]);

impl Attr {
    fn new() -> Self {
        Attr([0; ATTR_SIZE])
    }
    fn u32(&mut self, off: usize, v: u32) -> &mut Self {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, off: usize, v: u64) -> &mut Self {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: i32, attr: &mut Attr) -> io::Result<i64> {
    // SAFETY: attr is a valid, writable buffer of ATTR_SIZE bytes that outlives the call;
    // every pointer stored in it points to memory the caller keeps alive.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.0.as_mut_ptr(), ATTR_SIZE as u32) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn fd(rc: i64) -> OwnedFd {
    // SAFETY: the kernel just returned this new file descriptor to us.
    unsafe { OwnedFd::from_raw_fd(rc as RawFd) }
}

/// A per-CPU array map of `entries` values of `value_size` bytes, keyed by u32.
pub fn create_percpu_array(value_size: u32, entries: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new();
    a.u32(0, BPF_MAP_TYPE_PERCPU_ARRAY).u32(4, 4).u32(8, value_size).u32(12, entries);
    bpf(BPF_MAP_CREATE, &mut a).map(fd)
}

/// Load a SCHED_CLS program; on refusal the error carries the verifier's log.
pub fn load_sched_cls(insns: &[super::insn::Insn], name: &str) -> io::Result<OwnedFd> {
    let license = b"GPL\0";
    let mut log = vec![0u8; 64 * 1024];
    let mut pname = [0u8; 16];
    for (i, b) in name.bytes().take(15).enumerate() {
        pname[i] = b;
    }
    let mut a = Attr::new();
    a.u32(0, BPF_PROG_TYPE_SCHED_CLS)
        .u32(4, insns.len() as u32)
        .u64(8, insns.as_ptr() as u64)
        .u64(16, license.as_ptr() as u64)
        .u32(24, 1)
        .u32(28, log.len() as u32)
        .u64(32, log.as_mut_ptr() as u64);
    a.0[48..64].copy_from_slice(&pname);
    bpf(BPF_PROG_LOAD, &mut a).map(fd).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]);
        let tail: Vec<&str> = text.lines().rev().take(6).collect();
        io::Error::new(e.kind(), format!("{e}; verifier: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | ")))
    })
}

/// Attach `prog` to `ifindex` at `attach_type` (TCX ingress/egress) through a BPF link;
/// closing the returned fd detaches it.
pub fn tcx_attach(prog: RawFd, ifindex: u32, attach_type: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new();
    a.u32(0, prog as u32).u32(4, ifindex).u32(8, attach_type);
    bpf(BPF_LINK_CREATE, &mut a).map(fd)
}

/// Copy the value at `key` (all CPUs' copies for a per-CPU map) into `out`.
pub fn lookup(map: RawFd, key: u32, out: &mut [u8]) -> io::Result<()> {
    let mut a = Attr::new();
    a.u32(0, map as u32).u64(8, &key as *const u32 as u64).u64(16, out.as_mut_ptr() as u64);
    bpf(BPF_MAP_LOOKUP_ELEM, &mut a).map(|_| ())
}
