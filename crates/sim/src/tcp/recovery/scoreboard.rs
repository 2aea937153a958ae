//! The SACK scoreboard (RFC 6675 §3): which bytes above the cumulative ACK the receiver
//! reported holding in its SACK blocks (RFC 2018), and RFC 6675's `IsLost` on them.

/// SACKed ranges above the cumulative ACK.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Disjoint, sorted [start, end) ranges the receiver reported holding.
    ranges: Vec<(u64, u64)>,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// Merge `blocks` and forget everything below `snd_una`. Returns true if the ACK
    /// told something new.
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> bool {
        let before: u64 = self.sacked_bytes();
        for &(s, e) in blocks {
            let (s, e) = (s.max(snd_una), e);
            if s >= e {
                continue;
            }
            let i = self.ranges.partition_point(|&(_, re)| re < s);
            let mut j = i;
            let (mut ns, mut ne) = (s, e);
            while j < self.ranges.len() && self.ranges[j].0 <= ne {
                ns = ns.min(self.ranges[j].0);
                ne = ne.max(self.ranges[j].1);
                j += 1;
            }
            self.ranges.splice(i..j, std::iter::once((ns, ne)));
        }
        let gained = self.sacked_bytes() > before;
        self.ranges.retain(|&(_, e)| e > snd_una);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(snd_una);
        }
        gained
    }

    /// Bytes SACKed above the cumulative ACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// The range starting at or containing `seq`, if SACKed.
    pub fn sacked_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// RFC 6675 IsLost(seq).
    pub fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
        let mut bytes = 0;
        let mut count = 0;
        for &(s, e) in self.ranges.iter().rev() {
            if e <= seq {
                break;
            }
            bytes += e - s.max(seq + 1);
            count += 1;
        }
        count >= dupthresh as usize || bytes > (dupthresh as u64 - 1) * mss
    }

    /// One past the highest SACKed byte.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, e)| e)
    }

    /// The first unSACKed byte at or after `from`, and where the hole ends.
    pub fn hole_at_or_after(&self, from: u64) -> (u64, Option<u64>) {
        let mut seq = from;
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        for &(s, e) in &self.ranges[i..] {
            if s > seq {
                return (seq, Some(s));
            }
            seq = seq.max(e);
        }
        (seq, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::tests::{ack_of, MSS};

    /// [start, end) of segments a..b as SACK block bytes.
    fn blk(a: u64, b: u64) -> (u64, u64) {
        (ack_of(a), ack_of(b))
    }

    #[test]
    fn scoreboard_merges_blocks_and_drops_acknowledged_data() {
        let mut sb = Scoreboard::default();
        assert!(sb.update(ack_of(0), &[blk(2, 3), blk(4, 5)]));
        assert!(sb.update(ack_of(0), &[blk(3, 4)]));
        assert!(!sb.update(ack_of(0), &[blk(2, 5)]), "nothing new");
        assert_eq!(sb.sacked_at(ack_of(3)), Some(blk(2, 5)));
        sb.update(ack_of(3), &[]);
        assert_eq!(sb.sacked_at(ack_of(3)), Some(blk(3, 5)));
    }
    #[test]
    fn is_lost_needs_dupthresh_segments_sacked_above() {
        let mut sb = Scoreboard::default();
        sb.update(ack_of(0), &[blk(1, 3)]);
        assert!(!sb.is_lost(ack_of(0), 3, MSS), "two segments above: not yet");
        sb.update(ack_of(0), &[blk(1, 4)]);
        assert!(sb.is_lost(ack_of(0), 3, MSS), "three segments above");
    }
}
