//! When the client opens each connection of a block, and what window it advertises:
//! the connection-serialization schemes of Osada et al. (`004_f48ce568b38e0ea9.txt` §4).
//!
//! The scheduler only decides; the world carries its actions out. "Open" means: send a
//! SYN (when connections are made per block) or the request (persistent connections).
//! Numbers such as S - T1 V come from the paper's model (Python
//! `incastlab.model.serialization`) through the scenario.

use std::collections::VecDeque;

use crate::event::FlowId;
use crate::scenario::Mitigation;

/// Something the client must do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Open this connection (or send its request).
    Open(FlowId),
    /// Advertise this receive window (bytes) to this connection from now on.
    Window(FlowId, u64),
}

/// Scheduling state of one block.
#[derive(Clone, Debug, Default)]
pub struct Scheduler {
    scheme: Mitigation,
    /// Not yet opened (CCS, NCCS) or not yet granted a window (OCS), in order.
    waiting: VecDeque<FlowId>,
    /// Opened (or granted) and not done.
    open: Vec<FlowId>,
    /// NCCS: the newest connection; OCS: the flows of the newest granted set.
    newest: Vec<FlowId>,
    /// The newest connection or set reached its start-next threshold.
    newest_triggered: bool,
    /// Starts earned by condition-I but held back by the cap (NCCS K, OCS two sets).
    tokens: u32,
    /// OCS: the sets not yet finished, each as its flows.
    sets_open: Vec<Vec<FlowId>>,
    /// OCS: remaining windows have been widened for the tail.
    tail_widened: bool,
    /// Bytes server i returns per block (what a connection has left when it opens).
    part: Vec<u64>,
}

impl Scheduler {
    /// `part[i]`: the bytes server i returns per block.
    pub fn new(scheme: Mitigation, part: Vec<u64>) -> Self {
        Scheduler { scheme, part, ..Default::default() }
    }

    /// A block starts with these active flows, in this order.
    pub fn start_block(&mut self, active: &[FlowId], out: &mut Vec<Action>) {
        let (scheme, part) = (self.scheme.clone(), std::mem::take(&mut self.part));
        *self = Scheduler::new(scheme, part);
        match self.scheme {
            Mitigation::None | Mitigation::Ictcp => out.extend(active.iter().map(|&f| Action::Open(f))),
            Mitigation::Ccs | Mitigation::Nccs { .. } => {
                self.waiting.extend(active);
                self.open_next(out);
                self.release(out);
            }
            Mitigation::Ocs { set_size, window_bytes, .. } => {
                // all handshakes up front with zero windows but for the first set (Fig. 8)
                let first: Vec<FlowId> = active.iter().copied().take(set_size as usize).collect();
                for &f in active {
                    let w = if first.contains(&f) { window_bytes } else { 0 };
                    out.push(Action::Window(f, w));
                    out.push(Action::Open(f));
                }
                self.waiting.extend(active.iter().skip(set_size as usize));
                self.open.extend(&first);
                self.sets_open.push(first.clone());
                self.set_newest(first);
                self.release(out);
                self.widen_tail_if_needed(out);
            }
        }
    }

    /// Whether progress is counted in bytes the servers have sent (else in bytes the
    /// client has received): the world reports it from that side.
    pub fn counts_sent(&self) -> bool {
        matches!(self.scheme, Mitigation::Nccs { count_sent: true, .. } | Mitigation::Ocs { count_sent: true, .. })
    }

    /// Whether [`Scheduler::on_progress`] wants to hear of the bytes the client receives
    /// (NCCS and OCS counting delivered bytes): the other schemes act only when a flow is
    /// done, so the world skips the call on every other segment.
    pub fn follows_delivery(&self) -> bool {
        matches!(self.scheme, Mitigation::Nccs { count_sent: false, .. } | Mitigation::Ocs { count_sent: false, .. })
    }

    /// Flow `flow` has `remaining` bytes of this block still to send or deliver (see
    /// [`Scheduler::counts_sent`]); `remaining_of` tells the same of any flow.
    pub fn on_progress(&mut self, flow: FlowId, remaining: u64, remaining_of: impl Fn(FlowId) -> u64, out: &mut Vec<Action>) {
        if self.newest_triggered || !self.newest.contains(&flow) {
            return;
        }
        let (left, threshold) = match self.scheme {
            Mitigation::Nccs { start_next_at_remaining, .. } => (remaining, start_next_at_remaining),
            Mitigation::Ocs { start_next_at_remaining, .. } => {
                // a flow not yet asked for its part counts as u64::MAX: saturate
                (self.newest.iter().map(|&f| remaining_of(f)).fold(0, u64::saturating_add), start_next_at_remaining)
            }
            _ => return,
        };
        if left <= threshold {
            self.newest_triggered = true;
            self.tokens += 1;
            self.release(out);
        }
    }

    /// Flow `flow` has delivered all of its part of the block.
    pub fn on_done(&mut self, flow: FlowId, out: &mut Vec<Action>) {
        self.open.retain(|&f| f != flow);
        match self.scheme {
            Mitigation::Ccs => self.open_next(out),
            Mitigation::Nccs { .. } => self.release(out),
            Mitigation::Ocs { .. } => {
                for set in &mut self.sets_open {
                    set.retain(|&f| f != flow);
                }
                self.sets_open.retain(|s| !s.is_empty());
                self.release(out);
                self.widen_tail_if_needed(out);
            }
            _ => {}
        }
    }

    fn open_next(&mut self, out: &mut Vec<Action>) {
        if let Some(f) = self.waiting.pop_front() {
            self.open.push(f);
            self.set_newest(vec![f]);
            out.push(Action::Open(f));
        }
    }

    /// `flows` are the newest connection (NCCS) or set (OCS). Condition-I compares the
    /// bits they have sent with S - T1 V (§4.3): when S <= T1 V it holds before the first
    /// byte; checked at open, the next start is earned at once (10 Gbps, 512 KB: T1 V is
    /// 828 KB), else at the first progress report.
    fn set_newest(&mut self, flows: Vec<FlowId>) {
        let threshold = match self.scheme {
            Mitigation::Nccs { start_next_at_remaining, check_at_open: true, .. }
            | Mitigation::Ocs { start_next_at_remaining, check_at_open: true, .. } => Some(start_next_at_remaining),
            _ => None,
        };
        self.newest_triggered =
            threshold.is_some_and(|t| flows.iter().map(|&f| self.part[f as usize]).sum::<u64>() <= t);
        self.newest = flows;
        if self.newest_triggered {
            self.tokens += 1;
        }
    }

    /// Spend earned starts while the cap allows.
    fn release(&mut self, out: &mut Vec<Action>) {
        while self.tokens > 0 && !self.waiting.is_empty() {
            match self.scheme {
                Mitigation::Nccs { k, .. } if self.open.len() < k as usize => self.open_next(out),
                Mitigation::Ocs { set_size, window_bytes, .. } if self.sets_open.len() < 2 => {
                    let set: Vec<FlowId> = (0..set_size).filter_map(|_| self.waiting.pop_front()).collect();
                    for &f in &set {
                        out.push(Action::Window(f, window_bytes));
                    }
                    self.open.extend(&set);
                    self.sets_open.push(set.clone());
                    self.set_newest(set);
                }
                _ => return,
            }
            self.tokens -= 1;
        }
    }

    /// OCS §4.4: once fewer than `set_size` connections remain, widen their windows so
    /// together they can fill the pipe (BaseBDP).
    fn widen_tail_if_needed(&mut self, out: &mut Vec<Action>) {
        if let Mitigation::Ocs { set_size, window_bytes, bdp_bytes, .. } = self.scheme {
            let n = self.open.len();
            if !self.tail_widened && self.waiting.is_empty() && n > 0 && n < set_size as usize {
                self.tail_widened = true;
                let w = bdp_bytes.div_ceil(n as u64).max(window_bytes);
                out.extend(self.open.iter().map(|&f| Action::Window(f, w)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(actions: &[Action]) -> Vec<FlowId> {
        actions.iter().filter_map(|a| if let Action::Open(f) = a { Some(*f) } else { None }).collect()
    }

    #[test]
    fn plain_tcp_opens_everything_at_once() {
        let mut s = Scheduler::new(Mitigation::None, vec![100; 3]);
        let mut out = vec![];
        s.start_block(&[3, 1, 2], &mut out);
        assert_eq!(opened(&out), vec![3, 1, 2]);
    }

    #[test]
    fn ccs_opens_the_next_connection_only_when_the_current_one_is_done() {
        let mut s = Scheduler::new(Mitigation::Ccs, vec![100; 3]);
        let mut out = vec![];
        s.start_block(&[0, 1, 2], &mut out);
        assert_eq!(opened(&out), vec![0]);
        out.clear();
        s.on_progress(0, 0, |_| 0, &mut out);
        assert!(out.is_empty());
        s.on_done(0, &mut out);
        assert_eq!(opened(&out), vec![1]);
    }

    #[test]
    fn nccs_opens_the_next_at_the_threshold_and_caps_at_k() {
        let scheme = Mitigation::Nccs { k: 2, start_next_at_remaining: 100, count_sent: false, check_at_open: true };
        let mut s = Scheduler::new(scheme, vec![200; 4]);
        let mut out = vec![];
        s.start_block(&[0, 1, 2, 3], &mut out);
        assert_eq!(opened(&out), vec![0]);
        out.clear();
        s.on_progress(0, 150, |_| 0, &mut out);
        assert!(out.is_empty(), "150 bytes left: above S - T1 V");
        s.on_progress(0, 100, |_| 0, &mut out);
        assert_eq!(opened(&out), vec![1], "condition-I opens the next one");
        out.clear();
        s.on_progress(1, 90, |_| 0, &mut out);
        assert!(out.is_empty(), "K = 2 connections are open: wait");
        s.on_done(0, &mut out);
        assert_eq!(opened(&out), vec![2], "a finished connection releases the earned start");
    }

    #[test]
    fn ocs_handshakes_all_with_zero_windows_then_grants_sets() {
        let scheme = Mitigation::Ocs {
            set_size: 2,
            window_bytes: 4000,
            start_next_at_remaining: 500,
            bdp_bytes: 9000,
            count_sent: false,
            check_at_open: true,
        };
        let mut s = Scheduler::new(scheme, vec![1000; 5]);
        let mut out = vec![];
        s.start_block(&[0, 1, 2, 3, 4], &mut out);
        assert_eq!(opened(&out), vec![0, 1, 2, 3, 4], "every handshake up front (Fig. 8)");
        assert!(out.contains(&Action::Window(0, 4000)) && out.contains(&Action::Window(2, 0)));
        out.clear();
        let remaining = |f: FlowId| if f < 2 { 200 } else { 1000 };
        s.on_progress(0, 200, remaining, &mut out);
        assert_eq!(out, vec![Action::Window(2, 4000), Action::Window(3, 4000)]);
        out.clear();
        s.on_done(0, &mut out);
        s.on_done(1, &mut out);
        s.on_progress(2, 100, |_| 100, &mut out);
        assert!(out.contains(&Action::Window(4, 4000)), "third set granted");
        out.clear();
        s.on_done(2, &mut out);
        s.on_done(3, &mut out);
        // one connection left (< set size): its window grows to BaseBDP
        assert_eq!(out, vec![Action::Window(4, 9000)]);
    }

    #[test]
    fn nccs_checked_at_open_starts_k_at_once_when_the_sru_is_below_t1_v() {
        // 10 Gbps, 512 KB: S - T1 V < 0, so condition-I holds when a connection opens
        // and only K limits how many overlap (Osada et al. §4.3, Fig. 13's K = 8)
        let scheme = Mitigation::Nccs { k: 3, start_next_at_remaining: 828_000, count_sent: false, check_at_open: true };
        let mut s = Scheduler::new(scheme, vec![524_288; 5]);
        let mut out = vec![];
        s.start_block(&[4, 3, 2, 1, 0], &mut out);
        assert_eq!(opened(&out), vec![4, 3, 2]);
        out.clear();
        s.on_done(3, &mut out);
        assert_eq!(opened(&out), vec![1], "one finished: the next opens at once");
    }

    #[test]
    fn nccs_not_checked_at_open_waits_for_the_first_progress_report() {
        // the same S < T1 V, checked only as bytes are sent (received): one at a time
        let scheme = Mitigation::Nccs { k: 3, start_next_at_remaining: 828_000, count_sent: true, check_at_open: false };
        let mut s = Scheduler::new(scheme, vec![524_288; 3]);
        let mut out = vec![];
        s.start_block(&[0, 1, 2], &mut out);
        assert_eq!(opened(&out), vec![0]);
        out.clear();
        s.on_progress(0, 524_288 - 1460, |_| 0, &mut out);
        assert_eq!(opened(&out), vec![1], "the first segment meets condition-I");
    }

    #[test]
    fn nccs_above_t1_v_waits_for_progress_as_before() {
        let scheme = Mitigation::Nccs { k: 3, start_next_at_remaining: 100, count_sent: false, check_at_open: true };
        let mut s = Scheduler::new(scheme, vec![101; 3]);
        let mut out = vec![];
        s.start_block(&[0, 1, 2], &mut out);
        assert_eq!(opened(&out), vec![0], "101 bytes to send: condition-I not yet met");
    }
}
