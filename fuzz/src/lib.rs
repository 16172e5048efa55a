//! tokenmill's fuzz targets: one module per target, each a `run(data)` that libFuzzer calls
//! (`fuzz_targets/<name>.rs`) and that `cargo test` calls on every file of
//! `corpus/<name>/` (the seeds and the inputs of past findings), so the seeds are regression
//! tests on stable Rust without cargo-fuzz.
//!
//! Each target holds a fast path to a plain oracle on the same input, or checks that a parser
//! answers arbitrary bytes with an error, never a panic:
//!
//! - [`scanners`]: the named patterns' scanners, on every instruction set the CPU has and by
//!   their per-character path alone, against fancy-regex running tiktoken's pattern strings;
//!   and the cut rule of `pretokenize::cut`.
//! - [`custom_pattern`]: the splitter on custom patterns (a grammar of GPT-style shapes, or any
//!   bytes) against fancy-regex's matches directly.
//! - [`encode`]: encoding on small random vocabularies against the literal merge rule
//!   (DESIGN.md §2), every merge algorithm alone, special tokens, the parallel encode, and
//!   decode(encode(x)) == x.
//! - [`rank_file`]: tiktoken rank files of arbitrary bytes, through to a working encoder.
//! - [`train`]: the trainer against DESIGN.md §2's training rule, implemented plainly here.
//!
//! The Python targets (the stream decoder, the file loaders, the playground API, the CLI's
//! input parsing) are atheris scripts in `python/`; `scripts/fuzz.sh` runs either kind.

pub mod custom_pattern;
pub mod encode;
mod input;
mod oracle;
pub mod rank_file;
pub mod scanners;
pub mod train;

#[cfg(test)]
mod replay {
    use std::path::Path;

    /// Run `target` on every file of its corpus folder.
    fn replay(name: &str, target: fn(&[u8])) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{} has no seeds", dir.display());
        for path in files {
            let data = std::fs::read(&path).unwrap();
            eprintln!("{}", path.display());
            target(&data);
        }
    }

    #[test]
    fn scanners() {
        replay("scanners", super::scanners::run);
    }

    #[test]
    fn custom_pattern() {
        replay("custom_pattern", super::custom_pattern::run);
    }

    #[test]
    fn encode() {
        replay("encode", super::encode::run);
    }

    #[test]
    fn rank_file() {
        replay("rank_file", super::rank_file::run);
    }

    #[test]
    fn train() {
        replay("train", super::train::run);
    }
}
