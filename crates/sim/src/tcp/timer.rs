//! A lazy one-shot timer. TCP re-arms its retransmission timer on almost every ACK;
//! scheduling an event each time would flood the event queue. Instead the timer keeps
//! its deadline and at most one useful pending event: when that event fires early
//! (the deadline moved later) it is scheduled again at the new deadline; when the
//! deadline moved earlier, a new event is scheduled and the old one is recognised as
//! stale when it fires.

use crate::time::Time;

#[derive(Clone, Copy, Debug)]
pub struct LazyTimer {
    deadline: Time,
    /// Time of the newest scheduled event, or NEVER if none is useful.
    scheduled: Time,
}

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer { deadline: Time::NEVER, scheduled: Time::NEVER }
    }
}

/// What to do when a timer event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// The timer expired: run its action.
    Expired,
    /// Not yet: schedule an event at this time.
    Reschedule(Time),
    /// A stale or cancelled event: nothing to do.
    Ignore,
}

impl LazyTimer {
    /// Arm (or re-arm) to expire at `deadline`. Returns a time at which an event must be
    /// scheduled, if the pending one (if any) would come too late.
    #[inline]
    pub fn arm(&mut self, deadline: Time) -> Option<Time> {
        self.deadline = deadline;
        if deadline < self.scheduled {
            self.scheduled = deadline;
            Some(deadline)
        } else {
            None
        }
    }

    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = Time::NEVER;
    }

    pub fn is_armed(&self) -> bool {
        self.deadline != Time::NEVER
    }

    pub fn deadline(&self) -> Time {
        self.deadline
    }

    /// An event scheduled by this timer fired at `now`.
    #[inline]
    pub fn on_event(&mut self, now: Time) -> Fired {
        if now != self.scheduled {
            return Fired::Ignore; // superseded by an earlier event
        }
        self.scheduled = Time::NEVER;
        if self.deadline == Time::NEVER {
            Fired::Ignore
        } else if self.deadline > now {
            self.scheduled = self.deadline;
            Fired::Reschedule(self.deadline)
        } else {
            self.deadline = Time::NEVER;
            Fired::Expired
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_at_its_deadline() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(Time(100)), Some(Time(100)));
        assert_eq!(t.on_event(Time(100)), Fired::Expired);
        assert!(!t.is_armed());
    }

    #[test]
    fn later_rearm_needs_no_new_event_and_reschedules_once() {
        let mut t = LazyTimer::default();
        t.arm(Time(100));
        assert_eq!(t.arm(Time(150)), None);
        assert_eq!(t.arm(Time(180)), None);
        assert_eq!(t.on_event(Time(100)), Fired::Reschedule(Time(180)));
        assert_eq!(t.on_event(Time(180)), Fired::Expired);
    }

    #[test]
    fn earlier_rearm_schedules_and_old_event_is_stale() {
        let mut t = LazyTimer::default();
        t.arm(Time(100));
        assert_eq!(t.arm(Time(50)), Some(Time(50)));
        assert_eq!(t.on_event(Time(50)), Fired::Expired);
        assert_eq!(t.on_event(Time(100)), Fired::Ignore);
    }

    #[test]
    fn cancelled_timer_ignores_its_event() {
        let mut t = LazyTimer::default();
        t.arm(Time(100));
        t.cancel();
        assert_eq!(t.on_event(Time(100)), Fired::Ignore);
        // and can be armed again afterwards
        assert_eq!(t.arm(Time(300)), Some(Time(300)));
        assert_eq!(t.on_event(Time(300)), Fired::Expired);
    }
}
