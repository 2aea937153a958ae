//! In-kernel counting, Millisampler-style: a tiny eBPF program on the interface's tc hook
//! (TCX ingress and egress) adds every packet's length, a packet count and ECN CE marks
//! into 100 us buckets of a per-CPU array map; userspace reads finished buckets.
//!
//! Why: many NIC drivers refresh `/sys/class/net/*/statistics` only periodically, and a
//! userspace poller's timestamps are only as good as its scheduling. Buckets keyed by the
//! kernel's own `ktime` at the packet are exact 100 us bins whatever the poller does.
//!
//! No compiler toolchain: the dozen-or-so instructions are emitted by [`insn`] and loaded
//! with raw `bpf(2)` calls ([`sys`]); attaching through a TCX link needs no tc, netlink or
//! pinning and detaches by itself when the process exits.

pub mod bins;
pub mod insn;
pub mod sys;

pub use bins::{KernelBins, BUCKET_NS};
