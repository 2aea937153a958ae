//! A lazy one-shot timer. TCP re-arms its retransmission timer on almost every ACK;
//! scheduling an event each time would flood the event queue. Instead the timer keeps
//! its deadline and at most one useful pending event: when that event fires early
//! (the deadline moved later) it is scheduled again at the new deadline; when the
//! deadline moved earlier, a new event is scheduled and the old one is recognised as
//! stale when it fires.

use crate::time::Time;

/// Linux's timer wheel (kernel/time/timer.c): the wheel has 9 levels of 64 buckets; level
/// l's buckets are 8^l jiffies wide and it takes timers due 63 x 8^(l-1) to 63 x 8^l
/// jiffies after the base clock (`calc_wheel_index`'s LVL_START).
const LVL_CLK_SHIFT: u32 = 3;
const LVL_DEPTH: u32 = 9;
const LVL_SIZE_MINUS_ONE: u64 = 63;

/// When a Linux `timer_list` armed at `now` for `dur` fires, on jiffies of `tick` counted
/// from time 0 (`timer_wheel`): the duration in whole jiffies rounded up
/// (`usecs_to_jiffies`), added to the current jiffy (`expires = jiffies + when`, as
/// `sk_reset_timer` is given it); `calc_wheel_index` picks the level from the distance to the
/// base clock, taken as the next jiffy to process (a running tick: jiffies + 1), and
/// `calc_index` rounds the expiry up to the next bucket boundary of that level ("expire late
/// rather than early"). So a timer of n jiffies, n <= 63, fires n + 1 ticks after the tick
/// it was armed in, and one of 64 to 504 up to 8 ticks after its expiry. Where the 8-jiffy
/// boundaries fall depends on the jiffies count, which here starts at 0 with time.
pub fn wheel_expiry(now: Time, dur: Time, tick: Time) -> Time {
    let t = tick.0.max(1);
    let jiffies = now.0 / t;
    let expires = jiffies + dur.0.div_ceil(t);
    let clk = jiffies + 1;
    let bucket = if expires < clk {
        clk // a timer already due: the next tick (calc_wheel_index's negative delta)
    } else {
        let delta = expires - clk;
        let mut lvl = 0;
        while lvl + 1 < LVL_DEPTH && delta >= LVL_SIZE_MINUS_ONE << (LVL_CLK_SHIFT * lvl) {
            lvl += 1;
        }
        let shift = LVL_CLK_SHIFT * lvl;
        ((expires >> shift) + 1) << shift
    };
    Time(bucket * t)
}

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

    const JIFFY: Time = Time(4_000_000_000); // HZ = 250

    fn ms(x: f64) -> Time {
        Time((x * 1e9).round() as u64)
    }

    #[test]
    fn a_wheel_timer_of_n_jiffies_fires_n_plus_one_ticks_after_the_tick_it_was_armed_in() {
        // armed at the tick (t = 400 ms, jiffy 100) for 51 jiffies: bucket 152, 208 ms later
        assert_eq!(wheel_expiry(ms(400.0), ms(200.7), JIFFY), ms(608.0));
        // armed 3.9 ms into the jiffy: the same tick, 204.1 ms later
        assert_eq!(wheel_expiry(ms(403.9), ms(200.7), JIFFY), ms(608.0));
        // the delayed ACK's 40 ms (10 jiffies) fires 40 to 44 ms after the segment
        assert_eq!(wheel_expiry(ms(400.0), ms(40.0), JIFFY), ms(444.0));
        assert_eq!(wheel_expiry(ms(403.99), ms(40.0), JIFFY), ms(444.0));
        // nothing left (tcp_rearm_rto's max(delta, 1 us) is one jiffy): two ticks at most
        assert_eq!(wheel_expiry(ms(401.0), Time(1), JIFFY), ms(408.0));
        assert_eq!(wheel_expiry(ms(401.0), Time::ZERO, JIFFY), ms(404.0));
    }

    #[test]
    fn from_64_jiffies_the_wheel_rounds_up_to_8_jiffies() {
        // 63 jiffies from jiffy 100: delta 62 from the base clock, level 0: 164
        assert_eq!(wheel_expiry(ms(400.0), ms(252.0), JIFFY), ms(656.0));
        // 64 jiffies: level 1, expiry 164 rounded up past the next multiple of 8: 168
        assert_eq!(wheel_expiry(ms(400.0), ms(256.0), JIFFY), ms(672.0));
        // 104 jiffies (416 ms, a backed-off 208 ms): expiry 204, fires at 208
        assert_eq!(wheel_expiry(ms(400.0), ms(416.0), JIFFY), ms(832.0));
        // a multiple of 8 is still rounded up by a whole bucket: expiry 200 fires at 208
        assert_eq!(wheel_expiry(ms(400.0), ms(400.0), JIFFY), ms(832.0));
        // 505 jiffies and more: level 2, buckets of 64 jiffies (expiry 605 -> 640)
        assert_eq!(wheel_expiry(ms(400.0), ms(2020.0), JIFFY), ms(2560.0));
    }

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
