//! Where single-threaded encoding spends its time, without Python: the scanner alone, the
//! whole `encode_ordinary` (scanner + chunk cache + output) warm, and a first pass on a fresh
//! encoder (empty chunk cache, so every distinct chunk is merged), in ns per chunk; and the
//! merge step alone, on each distinct chunk once.
//! A tool for profiling the Rust core (run it under `perf record`); the peer comparison is
//! `bench_encode.py`.
//!
//! ```text
//! zcat python/tokenmill/data/o200k_base.tiktoken.gz > /tmp/o200k_base.tiktoken
//! cargo run --release --example profile_encode -- /tmp/o200k_base.tiktoken o200k \
//!     ../shared/data/holmes.txt [rounds] [encode]
//! ```
//!
//! With `encode` after the rounds it times only the warm encode, with `scan` only the scanner,
//! with `first` only the first passes, for `perf record`.
//!
//! It also prints how much of the process's memory is on transparent huge pages (the chunk
//! cache asks for them; see `src/runtime/pages.rs`).

use std::io::Write;
use std::time::Instant;
use tokenmill::{Encoder, Splitter, Vocab};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err(
            "usage: profile_encode RANK_FILE PATTERN TEXT_FILE [ROUNDS] [encode|scan|first|docs:CHARS]"
                .into(),
        );
    }
    let tokens = tokenmill::vocab::parse_rank_file(&std::fs::read(&args[1])?)?;
    let splitter = Splitter::new(&args[2])?;
    let text = std::fs::read_to_string(&args[3])?;
    let rounds: usize = args.get(4).map_or(Ok(20), |s| s.parse())?;
    let specials = [("<|endoftext|>".to_string(), tokens.len() as u32)];
    let enc = Encoder::new(Vocab::new(&tokens)?, splitter.clone(), &specials)?;
    let mut out = Vec::with_capacity(text.len());
    if args.get(5).is_some_and(|a| a == "first") {
        // Only first passes, each on a fresh encoder (for `perf record`).
        let vocab = Vocab::new(&tokens)?;
        let mut best = f64::MAX;
        for _ in 0..rounds {
            let fresh = Encoder::new(vocab.clone(), splitter.clone(), &[])?;
            out.clear();
            let t = Instant::now();
            fresh.encode_ordinary(&text, &mut out)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mbs = text.len() as f64 / 1e6 / best;
        writeln!(std::io::stdout(), "first pass {mbs:.0} MB/s")?;
        return Ok(());
    }
    if let Some(chars) = args.get(5).and_then(|a| a.strip_prefix("docs:")) {
        // Many short documents, one call each (a batch of titles or chat lines): the cost a
        // call has whatever its length.
        let chars: usize = chars.parse()?;
        let all: Vec<char> = text.chars().collect();
        let docs: Vec<String> = all.chunks(chars).map(|c| c.iter().collect()).collect();
        let time = |f: &mut dyn FnMut(&str)| {
            (0..rounds)
                .map(|_| {
                    let t = Instant::now();
                    docs.iter().for_each(|d| f(d));
                    t.elapsed().as_secs_f64() / docs.len() as f64 * 1e9
                })
                .fold(f64::MAX, f64::min)
        };
        let scan = time(&mut |d| {
            std::hint::black_box(splitter.count(d).ok());
        });
        let encode = time(&mut |d| {
            out.clear();
            std::hint::black_box(enc.encode_ordinary(d, &mut out).ok());
        });
        let (none, all) = (
            tokenmill::specials::Allowed::None,
            tokenmill::specials::Allowed::All,
        );
        let checked = time(&mut |d| {
            out.clear();
            std::hint::black_box(enc.encode(d, none, all, &mut out).ok());
        });
        writeln!(
            std::io::stdout(),
            "{} documents of {chars} characters, ns a document: scan {scan:.1}; encode \
             {encode:.1}; with the special-token check {checked:.1}",
            docs.len()
        )?;
        return Ok(());
    }
    enc.encode_ordinary(&text, &mut out)?; // warms the chunk cache
    let n_ids = out.len();
    let n_chunks = splitter.count(&text)?;
    let best = |f: &mut dyn FnMut()| {
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    let scan = best(&mut || {
        std::hint::black_box(splitter.count(&text).ok());
    });
    if args.get(5).is_some_and(|a| a == "scan") {
        // Only the scanner (for `perf record`).
        writeln!(
            std::io::stdout(),
            "scan {:.0} MB/s",
            text.len() as f64 / 1e6 / scan
        )?;
        return Ok(());
    }
    let encode = best(&mut || {
        out.clear();
        std::hint::black_box(enc.encode_ordinary(&text, &mut out).ok());
    });
    if args.get(5).is_some_and(|a| a == "encode") {
        // Only the warm encode (for `perf record`).
        writeln!(
            std::io::stdout(),
            "encode {:.0} MB/s",
            text.len() as f64 / 1e6 / encode
        )?;
        return Ok(());
    }
    // tiktoken's `encode` default: every special token disallowed, so the text is searched
    // for them first.
    let checked = best(&mut || {
        out.clear();
        let all = tokenmill::specials::Allowed::All;
        let none = tokenmill::specials::Allowed::None;
        std::hint::black_box(enc.encode(&text, none, all, &mut out).ok());
    });
    // The merge step alone: every distinct chunk encoded once, without the cache.
    let mut distinct: Vec<&str> = splitter.chunks(&text)?;
    distinct.sort_unstable();
    distinct.dedup();
    let merge = best(&mut || {
        out.clear();
        for c in &distinct {
            enc.encode_chunk(c.as_bytes(), &mut out);
        }
        std::hint::black_box(&out);
    });
    let vocab = Vocab::new(&tokens)?;
    let first = best(&mut || {
        let fresh = Encoder::new(vocab.clone(), splitter.clone(), &[]).ok();
        out.clear();
        std::hint::black_box(fresh.map(|e| e.encode_ordinary(&text, &mut out)));
    });
    let mb = text.len() as f64 / 1e6;
    let per_chunk = |t: f64| t / n_chunks as f64 * 1e9;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} chunks, {} ids; scan {:.0} MB/s ({:.2} ns/chunk); encode {:.0} MB/s ({:.2} ns/chunk); \
         with the special-token check {:.0} MB/s; first pass {:.0} MB/s ({:.2} ns/chunk); \
         merging each of {} distinct chunks: {:.0} ns/chunk",
        n_chunks,
        n_ids,
        mb / scan,
        per_chunk(scan),
        mb / encode,
        per_chunk(encode),
        mb / checked,
        mb / first,
        per_chunk(first),
        distinct.len(),
        merge / distinct.len() as f64 * 1e9
    )?;
    if let Ok(s) = std::fs::read_to_string("/proc/self/smaps_rollup") {
        for line in s.lines().filter(|l| l.starts_with("AnonHugePages")) {
            writeln!(
                stdout,
                "{}",
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            )?;
        }
    }
    Ok(())
}
