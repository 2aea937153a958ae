//! The native half of `incastlab monitor`: a high-resolution polling loop over an
//! interface's byte and packet counters, with wrap- and reset-safe deltas and an honest
//! account of the sampling interval it actually achieved.
//!
//! Why: the operator in `003_a133663d5dbcfa75.txt` ("An Illustration Using Riak") could
//! only poll every 2-4 ms from Erlang and saw the peak/average ratio grow as the interval
//! shrank; microbursts live below 1 ms, so the loop must run at ~100 us and say so when
//! it cannot.
//!
//! Modules, one job each:
//! - [`counter`]: the difference of two readings of a monotonic counter that may wrap
//!   (32 or 64 bit) or reset, never negative;
//! - [`source`]: reading `/sys/class/net/IF/statistics/{rx,tx}_{bytes,packets}`;
//! - [`clock`]: monotonic time and absolute sleeps with minimal timer slack;
//! - [`sampler`]: the polling thread and the buffer Python drains once a second;
//! - [`timing`]: median, p99 and jitter of the intervals achieved;
//! - [`netns`]: reading a `/proc/net` file inside a named network namespace;
//! - [`ebpf`]: the preferred source where allowed: 100 us buckets counted in the kernel;
//! - [`tcp_sockets`]: the TCP connections of this namespace and what each received, live and
//!   closed (sock_diag netlink), for the fan-in count;
//! - [`route`]: the interface a peer is reached through (rtnetlink);
//! - [`netlink`]: one netlink request and its replies.

pub mod clock;
pub mod counter;
pub mod ebpf;
pub mod netlink;
pub mod netns;
pub mod route;
pub mod sampler;
pub mod source;
pub mod tcp_sockets;
pub mod timing;

pub use counter::{delta, CounterEvent, Delta};
pub use sampler::{Intervals, Sampler, SamplerError};
pub use timing::IntervalStats;
