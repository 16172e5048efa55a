//! One long text encoded on several threads: cut at places no chunk of a named pattern
//! crosses (`pretokenize::cut`), the pieces encoded at once on the current rayon pool (piece k
//! on worker k mod threads, unless another worker is done with its own first:
//! `work_sharing::Claims`), their ids put back in order (`runtime::join`).

use super::Encoder;
use crate::error::Error;
use crate::pretokenize::cut;
use crate::runtime::buffers::Ids;
use crate::runtime::join::{concat_into, in_order, Span};
use crate::runtime::work_sharing::{self, Claims};
use crate::specials::Allowed;

/// Whether a text segment of `len` bytes is cut into pieces of about `piece_bytes` (a text
/// shorter than that is encoded whole, so threads cannot help it).
pub fn long_enough_to_cut(len: usize, piece_bytes: usize) -> bool {
    len >= 2 * piece_bytes.max(1)
}

/// Work for one thread: a piece of text, or a special token's id.
enum Part<'t> {
    Text(&'t str),
    Special(u32),
}

impl Encoder {
    /// Like [`Encoder::encode`], on the threads of the current rayon pool
    /// ([`threads_here`](work_sharing::threads_here)): text segments of at least
    /// `2 * piece_bytes` are cut into pieces of about `piece_bytes` or more (a few per
    /// thread), which are encoded in parallel. The ids are those of `encode`. Texts of a
    /// pattern on the regex engine are not cut (no cut rule is proved for them), nor are short
    /// ones.
    pub fn encode_parallel(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        piece_bytes: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        if self.specials.has_late() {
            // A cut could fall inside a late special, which is looked for only once the text
            // is normalized.
            return self.encode(text, allowed, disallowed, out);
        }
        let piece_bytes = piece_bytes.max(1);
        let cuttable = self.splitter.is_scanner();
        let threads = work_sharing::threads_here();
        let pieces_per_segment = 4 * threads;
        let parts = std::cell::RefCell::new(Vec::new());
        self.specials.walk(
            text,
            allowed,
            disallowed,
            |t| {
                let b = t.as_bytes();
                let mut parts = parts.borrow_mut();
                if !cuttable || !long_enough_to_cut(b.len(), piece_bytes) {
                    parts.push(Part::Text(t));
                    return Ok(());
                }
                let step = (b.len() / pieces_per_segment).max(piece_bytes);
                let mut start = 0;
                while let Some(cut) =
                    cut::next_cut(b, start + step).filter(|&c| c + step / 2 < b.len())
                {
                    // A cut is ASCII on both sides: a character boundary, so `get` succeeds.
                    parts.extend(t.get(start..cut).map(Part::Text));
                    start = cut;
                }
                parts.extend(t.get(start..).map(Part::Text));
                Ok(())
            },
            |id| parts.borrow_mut().push(Part::Special(id)),
        )?;
        let parts = parts.into_inner();
        let cost = |k: usize| match parts[k] {
            Part::Text(t) => t.len(),
            Part::Special(_) => 1,
        };
        let claims = Claims::new(parts.len());
        let total: usize = (0..parts.len()).map(cost).sum();
        let done: Vec<WorkerIds> = work_sharing::on_each_thread(threads, |me| {
            let own: usize = (me..parts.len()).step_by(threads).map(cost).sum();
            // Room for the parts taken from others too, so the buffer never grows: no part has
            // more ids than bytes.
            let spare = total / (2 * threads);
            let mut ids = super::room::for_text(own + spare);
            let mut spans = Vec::new();
            let result = claims.run(me, threads, spare, cost, |k| {
                let start = ids.len();
                match parts[k] {
                    Part::Text(t) => self.encode_ordinary(t, &mut ids)?,
                    Part::Special(id) => ids.push(id),
                }
                spans.push((k, start..ids.len()));
                Ok(())
            });
            (ids, result.map(|()| spans))
        });
        // The first error in text order, as one thread would have met it (see `Claims::run`).
        let failed = done
            .iter()
            .filter_map(|(_, result)| result.as_ref().err())
            .min_by_key(|(k, _)| *k);
        if let Some((_, e)) = failed {
            return Err(e.clone());
        }
        let shares = done
            .iter()
            .filter_map(|(ids, spans)| Some((ids, spans.as_deref().ok()?)));
        concat_into(&in_order(parts.len(), shares), out);
        Ok(())
    }
}

/// A worker's buffer, and where its parts are in it, or its first failed part and the error.
type WorkerIds = (Ids, Result<Vec<Span>, (usize, Error)>);
