//! Byte-level BPE training (see DESIGN.md §2). Filled in by the trainer issue.
