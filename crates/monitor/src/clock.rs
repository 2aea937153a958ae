//! Monotonic time in nanoseconds and sleeps to absolute deadlines.
//!
//! Absolute deadlines (`TIMER_ABSTIME`) keep the median interval on the request even when
//! each wake-up is late: lateness does not accumulate. The thread's timer slack is set to
//! 1 ns, because Linux's default 50 us slack alone would halve a 100 us resolution.

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until CLOCK_MONOTONIC reaches `deadline_ns` (returns at once if it passed).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Ask for the finest timer slack for the calling thread (best effort).
pub fn minimize_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Ask for real-time (SCHED_FIFO) priority for the calling thread; true if granted.
///
/// The polling thread sleeps almost all the time, so a low real-time priority costs the
/// machine nothing but lets the thread run as soon as its timer fires, even while every
/// core is busy (compilers, the workload itself). Needs CAP_SYS_NICE; without it the
/// thread stays a normal one and its stalls show in p99, max and `missed`.
pub fn try_realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: pid 0 is the calling thread; param is a valid pointer.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_until_returns_no_earlier_than_the_deadline() {
        minimize_timer_slack();
        let deadline = now_ns() + 2_000_000;
        sleep_until(deadline);
        assert!(now_ns() >= deadline);
    }

    #[test]
    fn sleep_until_past_deadline_returns_at_once() {
        let start = now_ns();
        sleep_until(start.saturating_sub(1_000_000));
        // generous bound: this only has to not sleep a scheduler tick or more
        assert!(now_ns() - start < 50_000_000);
    }
}
