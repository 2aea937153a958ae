//! Packets: small plain structs in a pool, recycled through a free list, so the hot
//! path allocates nothing per packet (DESIGN.md, "Packets").

use crate::event::{FlowId, PktId};
use crate::time::Time;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Server -> client: `len` payload bytes starting at sequence number `seq`.
    Data,
    /// Client -> server: cumulative acknowledgment `ack` (next byte expected).
    Ack,
    /// Client -> server: "send me `seq` more bytes" (the synchronized-read request).
    Request,
    /// Client -> server: open a connection.
    Syn,
    /// Server -> client: accept it.
    SynAck,
    /// Server -> client: background UDP datagram (discarded by the client).
    Udp,
    /// Sender -> receiver: a data packet a trimming switch cut to its header (`net::trim`;
    /// NDP, SIGCOMM 2017, §3.1): `seq` and `len` still name the payload it carried.
    Header,
    /// Receiver -> sender: NDP's negative acknowledgment of the trimmed packet `seq`
    /// (receiver-driven transports, `host::ndp`).
    Nack,
    /// Receiver -> sender: a pull (NDP) or a credit (receiver credit): the sender may send
    /// up to pull number `wnd` (cumulative, so a lost pull is made up by the next).
    Pull,
    /// Switch -> sender: a header a full header queue turned back to its sender
    /// (return-to-sender, NDP §3.1).
    Bounced,
}

impl Kind {
    /// Travels towards the client (through the shallow port).
    pub fn to_client(self) -> bool {
        matches!(self, Kind::Data | Kind::SynAck | Kind::Udp | Kind::Header)
    }
}

/// One packet on the wire. Sequence numbers count bytes; the first data byte is 1
/// (the SYN took sequence number 0, RFC 9293 §3.4).
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: FlowId,
    pub kind: Kind,
    /// Bytes on the wire, headers included (what queues and links account).
    pub wire_bytes: u32,
    /// Payload bytes (goodput counts these only).
    pub len: u32,
    /// Data: first sequence number; Request: bytes asked for; Ack: its send time in
    /// picoseconds (RFC 7323 TSval, which the server's data echo: `ack`).
    pub seq: u64,
    /// Ack: cumulative acknowledgment number. TCP data: the TSecr, the TSval of the last
    /// ACK or request its server received, in picoseconds (Linux's receiver RTT,
    /// `tcp::linux_rcv`). (Data of a receiver-driven transport: the flow's length in
    /// bytes, so its receiver knows when it has it all.)
    pub ack: u64,
    /// Ack: SACK blocks (RFC 2018) as (start, end) offsets above `ack`, the first
    /// `nsack` valid; 32 bits suffice (a window is under 4 GiB) and keep packets small.
    sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub nsack: u8,
    /// Data: this is the retransmission a timeout triggered.
    pub after_timeout: bool,
    /// ECN bits (RFC 3168 §5, §6.1): [`ECT`] and [`CE`] from the IP header, [`ECE`] from
    /// the TCP header; and NDP's [`PULL`]. One byte in what was padding, so packets stay 72
    /// bytes.
    pub ecn: u8,
    /// Which connection of the flow it belongs to (a new one per block with handshakes);
    /// packets of an older connection are discarded on arrival.
    pub conn: u32,
    /// Client -> server: the advertised receive window, bytes (saturating at 4 GiB). (A
    /// receiver-driven transport's ACK, NACK or pull: the pull number.)
    pub wnd: u32,
    /// RFC 7323 timestamp: data carries its send time (TSval), ACKs echo one (TSecr).
    pub ts: Time,
}

/// ECN-Capable Transport: the sender's congestion control reacts to marks (RFC 3168 §5).
pub const ECT: u8 = 1;
/// Congestion Experienced: a switch marked the packet instead of dropping it (RFC 3168 §5).
pub const CE: u8 = 2;
/// ECN-Echo on an ACK: the receiver saw CE (RFC 3168 §6.1.3; RFC 8257 §3.2 for DCTCP).
pub const ECE: u8 = 4;
/// NDP's pull bit on an ACK or a NACK (a transport header flag beside ECE, in the same
/// byte): the receiver's pacer let this very packet carry the pull numbered `wnd`.
pub const PULL: u8 = 8;

/// SACK blocks per ACK: three fit beside the timestamp option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

impl Packet {
    /// A packet with no SACK blocks and no flags.
    pub fn new(flow: FlowId, kind: Kind, wire_bytes: u32, len: u32, seq: u64, ack: u64) -> Packet {
        Packet { flow, kind, wire_bytes, len, seq, ack, sack: [(0, 0); MAX_SACK_BLOCKS], nsack: 0, after_timeout: false, ecn: 0, conn: 0, wnd: 0, ts: Time::ZERO }
    }

    /// The SACK blocks, as absolute [start, end) sequence numbers.
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        for (b, &(s, e)) in blocks.iter_mut().zip(&self.sack[..self.nsack as usize]) {
            *b = (self.ack + s as u64, self.ack + e as u64);
        }
        SackBlocks { blocks, n: self.nsack as usize }
    }

    /// Carry these SACK blocks (at most three; each above `ack`). Set `ack` first.
    pub fn set_sack(&mut self, blocks: &[(u64, u64)]) {
        let n = blocks.len().min(MAX_SACK_BLOCKS);
        for (slot, &(s, e)) in self.sack.iter_mut().zip(&blocks[..n]) {
            debug_assert!(s >= self.ack && e - self.ack <= u32::MAX as u64, "SACK block outside the window");
            *slot = ((s - self.ack) as u32, (e - self.ack) as u32);
        }
        self.nsack = n as u8;
    }

    /// An ECN bit ([`ECT`], [`CE`], [`ECE`]) is set.
    #[inline]
    pub fn has(&self, bit: u8) -> bool {
        self.ecn & bit != 0
    }

    /// Set the advertised window (saturating at 4 GiB).
    pub fn set_window(&mut self, bytes: u64) {
        self.wnd = bytes.min(u32::MAX as u64) as u32;
    }
}

/// Up to three SACK blocks, readable as a slice of absolute (start, end) pairs.
#[derive(Clone, Copy, Debug)]
pub struct SackBlocks {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    n: usize,
}

impl std::ops::Deref for SackBlocks {
    type Target = [(u64, u64)];
    fn deref(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n]
    }
}

/// Owner of every live packet.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    /// Which slots hold a packet, for the checks of debug builds only: release builds know
    /// it from `free` when asked ([`PacketPool::live_packets`]), not on every packet.
    #[cfg(debug_assertions)]
    live: Vec<bool>,
    free: Vec<PktId>,
}

impl PacketPool {
    /// Store `p`; return its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        let id = if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        };
        #[cfg(debug_assertions)]
        {
            self.live.resize(self.slots.len(), false);
            self.live[id as usize] = true;
        }
        id
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        #[cfg(debug_assertions)]
        assert!(self.live[id as usize], "use of a released packet");
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        #[cfg(debug_assertions)]
        assert!(self.live[id as usize], "use of a released packet");
        &mut self.slots[id as usize]
    }

    /// Return `id` to the pool; its contents are copied out first.
    #[inline]
    pub fn release(&mut self, id: PktId) -> Packet {
        #[cfg(debug_assertions)]
        {
            assert!(self.live[id as usize], "double release of packet {id}");
            self.live[id as usize] = false;
        }
        self.free.push(id);
        self.slots[id as usize]
    }

    /// Every packet still alive (in a queue or on a link).
    pub fn live_packets(&self) -> impl Iterator<Item = &Packet> {
        let mut live = vec![true; self.slots.len()];
        for &id in &self.free {
            live[id as usize] = false;
        }
        self.slots.iter().zip(live).filter(|&(_, l)| l).map(|(p, _)| p)
    }

    /// Slots ever allocated: the pool's high-water mark.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(flow: FlowId) -> Packet {
        Packet::new(flow, Kind::Ack, 40, 0, 0, 1)
    }

    #[test]
    fn sack_blocks_round_trip_through_offsets() {
        let mut p = Packet::new(1, Kind::Ack, 40, 0, 0, 5_000_000_000);
        p.set_sack(&[(5_000_001_460, 5_000_002_920), (5_000_004_380, 5_000_005_840)]);
        assert_eq!(&*p.sack_blocks(), &[(5_000_001_460, 5_000_002_920), (5_000_004_380, 5_000_005_840)]);
    }

    #[test]
    fn packets_stay_small() {
        assert!(std::mem::size_of::<Packet>() <= 72, "{}", std::mem::size_of::<Packet>());
    }

    #[test]
    fn released_slots_are_reused() {
        let mut pool = PacketPool::default();
        let a = pool.alloc(ack(1));
        let _b = pool.alloc(ack(2));
        pool.release(a);
        let c = pool.alloc(ack(3));
        assert_eq!(c, a);
        assert_eq!(pool.capacity(), 2);
        assert_eq!(pool.get(c).flow, 3);
        assert_eq!(pool.live_packets().count(), 2);
    }
}
