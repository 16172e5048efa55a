//! tiktoken's rank files: one token a line, `<base64 of its bytes> <rank>`.

use crate::error::Error;

/// Parse a tiktoken rank file (`<base64 token> <rank>` per line) into tokens by rank, an
/// empty one for each rank no line gives and for an empty token (a gap, see
/// [`crate::vocab`]).
///
/// Strict: bad base64, a missing rank field or a repeated rank is an error naming the
/// 1-based line. A repeated token is `Vocab::new`'s to refuse.
pub fn parse_rank_file(data: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let bad = |line: usize, message: String| Error::VocabFile { line, message };
    // (rank, token, line) for each line first: a rank sizes the table, so it must be checked
    // against how many tokens there are before the table is made.
    let mut given: Vec<(usize, Vec<u8>, usize)> = Vec::new();
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
        // Padding alone is base64 of nothing, an empty token: tiktoken takes one (Whisper's
        // multilingual.tiktoken ends with `= 50256`) and no text encodes to it, so it is a gap.
        let token = if tok.iter().all(|&c| c == b'=') {
            Vec::new()
        } else {
            decode_base64(tok).ok_or_else(|| {
                bad(
                    line,
                    format!("bad base64 {:?}", String::from_utf8_lossy(tok)),
                )
            })?
        };
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
        given.push((rank, token, line));
    }
    let tokens_given = given.iter().filter(|g| !g.1.is_empty()).count();
    if tokens_given == 0 {
        return Err(bad(1, "the file has no tokens".into()));
    }
    // `Vocab::new` takes at most as many gaps as tokens: a larger rank is a mistake (a rank in
    // the billions would ask for gigabytes), refused before it sizes anything.
    let most = 2 * tokens_given;
    if let Some((rank, _, line)) = given.iter().find(|g| g.0 >= most) {
        return Err(bad(
            *line,
            format!(
                "rank {rank} is far past the file's {tokens_given} tokens: ranks must be \
                 below {most}, twice as many"
            ),
        ));
    }
    let top = given.iter().map(|g| g.0).max().unwrap_or(0);
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); top + 1];
    let mut line_of: Vec<usize> = vec![0; top + 1];
    for (rank, token, line) in given {
        if line_of[rank] > 0 {
            return Err(bad(
                line,
                format!("rank {rank} was already given on line {}", line_of[rank]),
            ));
        }
        tokens[rank] = token;
        line_of[rank] = line;
    }
    Ok(tokens)
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
        // A rank no line gives is a gap: an empty token.
        assert_eq!(
            parse_rank_file(b"YQ== 0\nYg== 2\n").unwrap(),
            [b"a".to_vec(), Vec::new(), b"b".to_vec()]
        );
        assert!(line(b"YQ== x\n").1.contains("not a non-negative integer"));
        assert!(line(b"").1.contains("no tokens"));
        assert!(line(b"YQ== 0\n!!!! 1\n").1.contains("bad base64"));
        // Padding alone is an empty token, a gap.
        assert_eq!(
            parse_rank_file(b"YQ== 0\n= 1\nYg== 2\n").unwrap(),
            [b"a".to_vec(), Vec::new(), b"b".to_vec()]
        );
        assert!(line(b"= 0\n").1.contains("no tokens"));
        // A rank no file of its length can reach is refused before it sizes a table (a
        // rank of a billion would ask for 24 GB).
        let (l, m) = line(b"YQ== 0\nYg== 1000000000\n");
        assert_eq!(l, 2);
        assert!(
            m.contains("rank 1000000000 is far past the file's 2 tokens"),
            "{m}"
        );
    }
}
