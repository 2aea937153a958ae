//! What happens at an instant, grouped by the part of the world that handles it: the
//! fabric's events (packets reaching switches and hosts, links becoming free, PAUSE and PFC
//! frames), the connections' (timers, a delayed packet entering its NIC) and the
//! applications' timers.
//!
//! Every event packs into one word: its tag (the enum's discriminant) in the low byte, up to
//! three byte-sized operands above it, and one 32-bit operand in the high half. The queue
//! stores that word ([`crate::event`]): three plain words per pending event, built and
//! stored in registers. The enum, its tags, its families and its packing are all generated
//! from the one declaration below ([`events!`]), so a new event is one line there and one
//! arm in its family's handler; the tests round-trip every variant.

use crate::event::{FlowId, PktId, PortId};

/// Which part of the world handles an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `net::fabric`: ports, links, switches, PAUSE and PFC.
    Net,
    /// `host`: the connections' timers and NIC entries.
    Conn,
    /// `app`: the applications' timers.
    App,
}

/// An operand of an event: a byte in the low half's next free byte, or the one 32-bit word
/// in the high half (see the module's doc).
trait Operand: Sized {
    /// Write `self`: a byte at `byte` of `low` (then the next byte is free), the word in `word`.
    fn put(self, low: &mut u32, word: &mut u32, byte: &mut u32);
    /// Read the operand `put` wrote: `bytes` are the low half's bytes above the tag.
    fn get(bytes: [u8; 3], word: u32, byte: &mut u32) -> Self;
    /// The largest value, for the round-trip tests.
    #[cfg(test)]
    const MAX: Self;
}

impl Operand for u8 {
    #[inline(always)]
    fn put(self, low: &mut u32, _: &mut u32, byte: &mut u32) {
        debug_assert!(*byte < 4, "at most three byte operands");
        *low |= (self as u32) << (8 * *byte);
        *byte += 1;
    }
    #[inline(always)]
    fn get(bytes: [u8; 3], _: u32, byte: &mut u32) -> Self {
        let x = bytes[*byte as usize - 1];
        *byte += 1;
        x
    }
    #[cfg(test)]
    const MAX: Self = u8::MAX;
}

impl Operand for u32 {
    #[inline(always)]
    fn put(self, _: &mut u32, word: &mut u32, _: &mut u32) {
        *word = self;
    }
    #[inline(always)]
    fn get(_: [u8; 3], word: u32, _: &mut u32) -> Self {
        word
    }
    #[cfg(test)]
    const MAX: Self = u32::MAX;
}

/// Declares [`Event`] and generates its tags, its [`Family`], its packing into one word
/// and a list of every variant (for the tests). Each variant is `Name(operand)` or
/// `Name { byte operands..., word operand }`, its tag, and its family.
macro_rules! events {
    (
        $(
            $(#[$doc:meta])*
            $name:ident $( ( $x:ty ) )? $( { $( $f:ident : $ft:ty ),+ $(,)? } )? = $tag:literal in $family:ident
        ),+ $(,)?
    ) => {
        /// Something that happens at an instant. The discriminants are the tags
        /// [`Event::pack`] writes, so a popped entry becomes an event without a translation
        /// table before the dispatch.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Event {
            $( $(#[$doc])* $name $( ( $x ) )? $( { $( $f : $ft ),+ } )? = $tag, )+
        }

        impl Event {
            /// The part of the world that handles it.
            pub fn family(self) -> Family {
                match self {
                    $( Event::$name { .. } => Family::$family, )+
                }
            }

            /// The event as one word (see the module's doc): the tag and the byte operands in
            /// the low half, the word operand in the high half. (The form LLVM turns into the
            /// enum's own bytes: no jump table on the queue's hot path.)
            #[inline(always)]
            pub(crate) fn pack(self) -> u64 {
                let (low, word): (u32, u32) = match self {
                    $(
                        events!(@pattern $name $( (x: $x) )? $( { $( $f ),+ } )?) => {
                            #[allow(unused_mut)]
                            let (mut low, mut word, mut byte) = ($tag as u32, 0u32, 1u32);
                            $( Operand::put(x, &mut low, &mut word, &mut byte); let _: $x; )?
                            $( $( Operand::put($f, &mut low, &mut word, &mut byte); )+ )?
                            (low, word)
                        }
                    )+
                };
                low as u64 | (word as u64) << 32
            }

            /// The event [`Event::pack`] made `w` of.
            #[inline(always)]
            pub(crate) fn unpack(w: u64) -> Event {
                // the operands are read once, before the match, where every arm may use them:
                // read in the arms, LLVM zeroed the byte each arm leaves unused (a mask per
                // tag on every pop); read here, one mask serves every event
                let (low, word) = (w as u32, (w >> 32) as u32);
                let bytes = [(low >> 8) as u8, (low >> 16) as u8, (low >> 24) as u8];
                match low as u8 {
                    $(
                        $tag => {
                            #[allow(unused_mut, unused_variables)]
                            let mut byte = 1u32;
                            events!(@build bytes word byte $name $( ($x) )? $( { $( $f : $ft ),+ } )?)
                        }
                    )+
                    t => unreachable!("no event has tag {t}"),
                }
            }

            /// One of each variant, every operand at its largest (for the tests).
            #[cfg(test)]
            pub(crate) fn every_variant() -> Vec<Event> {
                vec![ $( events!(@max $name $( ($x) )? $( { $( $f : $ft ),+ } )?), )+ ]
            }
        }
    };
    (@pattern $name:ident ($v:ident : $x:ty)) => { Event::$name($v) };
    (@pattern $name:ident { $( $f:ident ),+ }) => { Event::$name { $( $f ),+ } };
    (@build $low:ident $word:ident $byte:ident $name:ident ($x:ty)) => {
        Event::$name(<$x as Operand>::get($low, $word, &mut $byte))
    };
    (@build $low:ident $word:ident $byte:ident $name:ident { $( $f:ident : $ft:ty ),+ }) => {
        // (fields are evaluated in the order written: the order `pack` put them in)
        Event::$name { $( $f: <$ft as Operand>::get($low, $word, &mut $byte) ),+ }
    };
    (@max $name:ident ($x:ty)) => { Event::$name(<$x as Operand>::MAX) };
    (@max $name:ident { $( $f:ident : $ft:ty ),+ }) => { Event::$name { $( $f: <$ft as Operand>::MAX ),+ } };
}

events! {
    /// A packet's last bit reaches a switch.
    ArriveSwitch(PktId) = 0 in Net,
    /// A packet's last bit reaches the host at the far end of its link.
    ArriveHost(PktId) = 1 in Net,
    /// A port's link finished a transmission and packets wait: start the next one.
    LinkFree(PortId) = 2 in Net,
    /// An 802.3x PAUSE frame (XOFF) reaches the upstream end of a port: it stops.
    PauseOn(PortId) = 3 in Net,
    /// A PAUSE frame of zero quanta (XON) reaches a port: it resumes.
    PauseOff(PortId) = 4 in Net,
    /// A port's pause time may have run out (lazy: a refreshed pause ends later).
    PauseEnd(PortId) = 5 in Net,
    /// An 802.1Qbb PFC frame pausing one class reaches the upstream end of a port.
    PfcOn { class: u8, port: PortId } = 6 in Net,
    /// A PFC frame of zero time for one class reaches a port: that class resumes.
    PfcOff { class: u8, port: PortId } = 7 in Net,
    /// A packet a host delayed enters its NIC: a jittered data packet (`send_jitter`), or a
    /// dropped request sent again.
    NicEnter(PktId) = 8 in Conn,
    /// The retransmission timer of a flow may expire (lazy timer: see `tcp::timer`).
    RtoTimer(FlowId) = 9 in Conn,
    /// The delayed-ACK timer of a flow's receiver may expire.
    DelAckTimer(FlowId) = 10 in Conn,
    /// The SYN retransmission timer of a flow may expire.
    SynTimer(FlowId) = 11 in Conn,
    /// A receiving host's pull pacer may send its next pull or credit (`host::pacer`).
    PullTimer(u32) = 13 in Conn,
    /// A Swift sender below one packet may send its next paced packet (`tcp::congestion::swift`).
    PaceTimer(FlowId) = 14 in Conn,
    /// A timer of an application: `timer` names the application and the timer's kind
    /// ([`AppTimer`]); `arg` is the application's own operand (a flow, a node).
    App { timer: u8, arg: u32 } = 12 in App,
}

/// Which application's timer of which kind, in one byte: the application's index in the
/// world's list in the high nibble, its own kind in the low one. (One byte operand, as PFC's
/// class: events whose byte operands all sit in the same byte unpack without masking.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppTimer {
    pub app: u8,
    pub kind: u8,
}

impl AppTimer {
    /// Applications, and timer kinds of one application, that fit.
    pub const MAX: u8 = 16;

    #[inline]
    pub fn byte(self) -> u8 {
        debug_assert!(self.app < Self::MAX && self.kind < Self::MAX);
        self.app << 4 | self.kind
    }

    #[inline]
    pub fn of(byte: u8) -> AppTimer {
        AppTimer { app: byte >> 4, kind: byte & 0xF }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_its_packing_with_every_operand_at_its_largest() {
        let all = Event::every_variant();
        for e in &all {
            assert_eq!(Event::unpack(e.pack()), *e);
        }
        // and at its smallest, with the byte operands apart from one another
        let some = [Event::PfcOn { class: 0, port: 0 }, Event::App { timer: 0x12, arg: 3 }, Event::ArriveHost(0)];
        for e in some {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    fn a_packed_events_low_byte_is_its_discriminant() {
        for e in Event::every_variant() {
            // SAFETY: `Event` is `repr(u8)`, so its first byte is its discriminant
            let discriminant = unsafe { *(&e as *const Event as *const u8) };
            assert_eq!(e.pack() as u8, discriminant, "{e:?}");
        }
    }

    #[test]
    fn an_app_timer_byte_names_its_application_and_kind() {
        for (app, kind) in [(0, 0), (1, 2), (15, 15), (2, 0)] {
            let t = AppTimer { app, kind };
            assert_eq!(AppTimer::of(t.byte()), t);
        }
    }

    #[test]
    fn each_family_has_its_events() {
        assert_eq!(Event::LinkFree(1).family(), Family::Net);
        assert_eq!(Event::RtoTimer(1).family(), Family::Conn);
        assert_eq!(Event::App { timer: 0, arg: 0 }.family(), Family::App);
        let families: std::collections::BTreeSet<_> =
            Event::every_variant().into_iter().map(|e| format!("{:?}", e.family())).collect();
        assert_eq!(families.len(), 3);
    }
}
