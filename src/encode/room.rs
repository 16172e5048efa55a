//! Room for a text's ids: how much an output needs so that it never grows while a text is
//! encoded onto it, and buffers with that room. An output that grows is copied and faulted in
//! again; the Python bindings also encode straight into memory that must not move
//! (`py/id_list.rs`).

use super::cache;
use crate::runtime::buffers::{with_room, Ids};
use std::cell::Cell;

/// Room for ids with which an output never grows while a text of `bytes` bytes is encoded onto
/// it (if it starts empty): every id stands for at least one byte of the text (tokens and
/// special-token names are never empty), and the cache's batches ask at most
/// `cache::MOST_RESERVED` beyond what they write.
pub fn room_for(bytes: usize) -> usize {
    bytes.saturating_add(cache::MOST_RESERVED)
}

/// Texts up to this size get room for all the ids they can have ([`for_text`]).
pub const ALL_IDS_UP_TO: usize = 256 << 20;

/// Room for the ids of a text of `bytes` bytes, all of them ([`room_for`]), so the buffer
/// never grows (room never written costs no memory); a buffer sized for English text grows
/// twice on other languages, each time faulted in again (docs/performance.md, 'Memory and
/// pages'). Texts over `ALL_IDS_UP_TO` get room for half their bytes instead, and grow if they
/// need more: an allocation of many times the machine's memory may be refused.
pub fn for_text(bytes: usize) -> Ids {
    with_room(if bytes <= ALL_IDS_UP_TO {
        room_for(bytes)
    } else {
        bytes / 2
    })
}

/// Texts up to this many bytes are encoded into a buffer their thread keeps
/// ([`exact_for_text`]).
#[cfg_attr(not(feature = "python"), allow(dead_code))]
const SCRATCH_TEXT: usize = 64 << 10;

thread_local! {
    /// The buffer of [`exact_for_text`], taken out while in use.
    static SCRATCH: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// The ids `fill` writes for a text of `bytes` bytes (onto an empty buffer with
/// [`for_text`]'s room), in a buffer of their own size if the text is short.
///
/// A short text is encoded into a buffer this thread keeps, and its ids copied out. Room for
/// all the ids a text can have is 8 KiB more than its bytes ([`room_for`]); allocated for each
/// of a batch's many short texts on the worker threads and freed on Python's, that memory went
/// back to the kernel and was faulted in again on every call (docs/performance.md, 'Memory and
/// pages').
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub fn exact_for_text<E>(
    bytes: usize,
    fill: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
) -> Result<Ids, E> {
    if bytes > SCRATCH_TEXT {
        let mut out = for_text(bytes);
        fill(&mut out)?;
        return Ok(out);
    }
    let mut scratch = SCRATCH.try_with(Cell::take).unwrap_or_default();
    scratch.clear();
    scratch.reserve(room_for(bytes));
    let ids = fill(&mut scratch).map(|()| Ids::from(scratch.to_vec()));
    let _ = SCRATCH.try_with(|kept| kept.set(scratch));
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes under 2 MiB of room: larger buffers come from the process-wide list of kept
    /// buffers, which `runtime::buffers`'s tests check alone.
    #[test]
    fn buffers_for_a_text_have_room_for_all_its_ids() {
        for bytes in [0, 1, 1000, 100_000] {
            let v = for_text(bytes);
            assert!(v.is_empty() && v.capacity() > bytes);
        }
    }

    #[test]
    fn exact_buffers_hold_what_was_written_and_errors_pass_through() {
        for bytes in [0, 16, SCRATCH_TEXT, SCRATCH_TEXT + 1] {
            let ids = exact_for_text(bytes, |out: &mut Vec<u32>| -> Result<(), ()> {
                // The room of `for_text`, so the encoder never grows the buffer.
                assert!(out.is_empty() && out.capacity() >= room_for(bytes));
                // Called inside another's fill (as a re-entered encode would be).
                let inner = exact_for_text(3, |o: &mut Vec<u32>| -> Result<(), ()> {
                    o.extend([7, 8, 9]);
                    Ok(())
                });
                assert_eq!(inner.as_deref(), Ok(&vec![7, 8, 9]));
                out.extend(0..bytes as u32 / 4);
                Ok(())
            })
            .expect("no error");
            assert!(ids.iter().copied().eq(0..bytes as u32 / 4));
            if bytes <= SCRATCH_TEXT {
                assert_eq!(ids.capacity(), ids.len(), "a buffer of its own size");
            }
        }
        let failed = exact_for_text(16, |out| {
            out.push(1);
            Err("bad")
        });
        assert_eq!(failed.map(Ids::into_vec), Err("bad"));
        // The thread's buffer is emptied before the next text.
        let next = exact_for_text(16, |_| Ok::<(), ()>(()));
        assert_eq!(next.map(Ids::into_vec), Ok(vec![]));
    }
}
