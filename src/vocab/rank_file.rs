//! tiktoken's rank files: one token a line, `<base64 of its bytes> <rank>`.

use crate::error::Error;

/// Parse a tiktoken rank file (`<base64 token> <rank>` per line) into tokens by rank.
///
/// Strict: bad base64, a missing rank, a repeated rank, or a gap in the ranks is an error
/// naming the 1-based line (for a gap, the rank that is missing). A repeated token is
/// `Vocab::new`'s to refuse.
pub fn parse_rank_file(data: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let bad = |line: usize, message: String| Error::VocabFile { line, message };
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    let mut line_of: Vec<usize> = Vec::new();
    let mut n = 0usize;
    // Ranks are 0..n without gaps, one a line, so none can reach the number of lines: a
    // larger one means a gap, and is kept out of the table it would size.
    let lines = memchr::memchr_iter(b'\n', data).count() + 1;
    let mut beyond: Option<(usize, usize)> = None;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.is_empty() {
            continue;
        }
        let mut fields = raw.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let (Some(tok), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(
                line,
                "expected '<base64 token> <rank>'; the line is truncated or malformed".into(),
            ));
        };
        let token = decode_base64(tok).ok_or_else(|| {
            bad(
                line,
                format!("bad base64 {:?}", String::from_utf8_lossy(tok)),
            )
        })?;
        if token.is_empty() {
            return Err(bad(line, "the token is empty".into()));
        }
        let rank: usize = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse().ok())
            .filter(|&r: &usize| r < u32::MAX as usize / 2)
            .ok_or_else(|| {
                bad(
                    line,
                    format!(
                        "rank {:?} is not a non-negative integer",
                        String::from_utf8_lossy(rank)
                    ),
                )
            })?;
        if rank >= lines {
            beyond = beyond.or(Some((line, rank)));
            n += 1;
            continue;
        }
        if rank >= tokens.len() {
            tokens.resize(rank + 1, None);
            line_of.resize(rank + 1, 0);
        }
        if tokens[rank].is_some() {
            return Err(bad(
                line,
                format!("rank {rank} was already given on line {}", line_of[rank]),
            ));
        }
        tokens[rank] = Some(token);
        line_of[rank] = line;
        n += 1;
    }
    if n == 0 {
        return Err(bad(1, "the file has no tokens".into()));
    }
    if let Some((line, rank)) = beyond {
        let missing = tokens
            .iter()
            .position(Option::is_none)
            .unwrap_or(tokens.len());
        return Err(bad(
            line,
            format!(
                "rank {missing} is missing: ranks must be 0..{} without gaps, and this line \
                 has rank {rank}",
                n - 1
            ),
        ));
    }
    if let Some(missing) = tokens.iter().position(Option::is_none) {
        return Err(bad(
            line_of[missing + 1..]
                .iter()
                .copied()
                .find(|&l| l > 0)
                .unwrap_or(0),
            format!(
                "rank {missing} is missing: ranks must be 0..{} without gaps",
                tokens.len() - 1
            ),
        ));
    }
    Ok(tokens.into_iter().flatten().collect())
}

/// Strict standard base64 (with padding), as tiktoken writes it.
fn decode_base64(s: &[u8]) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let quads = s.len() / 4;
    for (q, chunk) in s.chunks_exact(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && q + 1 != quads) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | val(c)?;
        }
        acc <<= 6 * pad as u32;
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_files_parse_strictly() {
        assert_eq!(
            parse_rank_file(b"YQ== 1\nYg== 0\n").unwrap(),
            [b"b".to_vec(), b"a".to_vec()]
        );
        assert_eq!(
            parse_rank_file(b"IGhlbGxv 0").unwrap(),
            [b" hello".to_vec()]
        );
        let line = |d: &[u8]| match parse_rank_file(d) {
            Err(Error::VocabFile { line, message }) => (line, message),
            other => panic!("expected a file error, got {other:?}"),
        };
        assert_eq!(line(b"YQ== 0\nYg==\n").0, 2);
        assert!(line(b"YQ== 0\nY!== 1\n").1.contains("bad base64"));
        assert!(line(b"YQ== 0\nYg== 0\n")
            .1
            .contains("already given on line 1"));
        let (l, m) = line(b"YQ== 0\nYg== 2\n");
        assert!(m.contains("rank 1 is missing"), "{m}");
        assert_eq!(l, 2);
        assert!(line(b"YQ== x\n").1.contains("not a non-negative integer"));
        assert!(line(b"").1.contains("no tokens"));
        // A rank no file of its length can reach is refused before it sizes a table (a
        // rank of a billion would ask for 24 GB).
        let (l, m) = line(b"YQ== 0\nYg== 1000000000\n");
        assert_eq!(l, 2);
        assert!(m.contains("rank 1 is missing"), "{m}");
        assert!(m.contains("this line has rank 1000000000"), "{m}");
    }
}
