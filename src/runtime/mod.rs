//! What the hot loops run on: memory on 2 MiB pages (`pages`), buffers of ids kept for use
//! again (`buffers`), the process's thread pools ([`threads`]), work shared out among their
//! threads ([`work_sharing`]), and the ids that threads wrote put back in order ([`join`]).

pub(crate) mod buffers;
pub mod join;
pub(crate) mod pages;
pub mod threads;
pub mod work_sharing;
