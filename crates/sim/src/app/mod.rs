//! Applications: the synchronized-read client of FAST'08 §3.1.

pub mod schedule;
pub mod sync_read;

pub use sync_read::SyncReadClient;
