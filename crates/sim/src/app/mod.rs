//! Applications: the synchronized-read client of FAST'08 §3.1, the Riak-style gets of
//! Fritchie's blog, and the connection-serialization schedules of Osada et al. with the
//! model that sizes them.

pub mod latency;
pub mod riak;
pub mod schedule;
pub mod serialization_model;
pub mod sync_read;

pub use sync_read::SyncReadClient;
