//! The third level of the chunk cache, for the few chunks longer than `LONG_KEY`: a megabyte of
//! one letter, a long run of base64 or of letters without a space. Each costs a search of the
//! long path or a heap merge, against a hash and a compare, orders of magnitude faster
//! (docs/performance.md, 'Chunk cache'), so the most recent ones are kept: encoding the same
//! text again (`count`, then `encode`; a truncation, then the encode) does not search them again.

/// Bytes of chunks and ids the third level keeps (the oldest chunks go first).
pub(super) const HUGE_BYTES: usize = 16 << 20;
/// Chunks the third level keeps: a lookup compares the hash of each.
pub(super) const HUGE_ENTRIES: usize = 64;

/// The third level: the most recent huge chunks, oldest first.
#[derive(Default)]
pub(super) struct HugeCache {
    /// Oldest first.
    entries: std::collections::VecDeque<HugeEntry>,
    /// Bytes of chunks plus bytes of ids held.
    bytes: usize,
}

/// A chunk's hash, its bytes and its ids.
type HugeEntry = (u64, Box<[u8]>, Box<[u32]>);

impl HugeCache {
    pub fn lookup(&self, chunk: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
        match self
            .entries
            .iter()
            .find(|(h, c, _)| *h == hash && **c == *chunk)
        {
            Some((_, _, ids)) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    pub fn insert(&mut self, chunk: &[u8], hash: u64, ids: &[u32]) {
        let size = chunk.len() + 4 * ids.len();
        if size > HUGE_BYTES {
            return;
        }
        while self.bytes + size > HUGE_BYTES || self.entries.len() >= HUGE_ENTRIES {
            let Some((_, c, i)) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= c.len() + 4 * i.len();
        }
        self.entries.push_back((hash, chunk.into(), ids.into()));
        self.bytes += size;
    }
}
