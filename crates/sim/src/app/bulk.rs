//! A background bulk flow (FAST'08 `000_315d806dde942a9f.txt` §5.2's "other flows" a pause
//! also stops): its sender always has data to send, and it is not part of the blocks. Its
//! bytes and drops are its own, not the measured totals' (`host::Conn::measured`).

use super::{Action, Actions};
use crate::event::FlowId;

/// Bytes its application writes at the start: more than any run sends.
pub const BULK_WRITE_BYTES: u64 = 1 << 50;

/// One background bulk flow.
#[derive(Clone, Debug)]
pub struct Bulk {
    pub flow: FlowId,
    /// Payload bytes delivered in order to its receiver's application.
    pub app_bytes: u64,
}

impl Bulk {
    pub fn new(flow: FlowId) -> Bulk {
        Bulk { flow, app_bytes: 0 }
    }

    pub(crate) fn on_start(&mut self, out: &mut Actions) {
        out.push(Action::Write(self.flow, BULK_WRITE_BYTES));
    }

    pub(crate) fn on_delivered(&mut self, from: u64, to: u64) {
        self.app_bytes += to - from;
    }
}
