//! Everything between the bytes a process writes and the text an agent reads.
//!
//! Raw bytes go two ways: to a [`spool::RawSpool`] that keeps them exactly (spilled to a log file when
//! the text had to be cut), and through a per-stream [`sanitize::Sanitizer`] that decodes UTF-8, strips
//! ANSI escapes with parser state kept across chunks, and notices terminal queries. The resulting text
//! feeds the bounded buffers of [`text`]. [`collector::OutputCollector`] ties them together per session.

pub mod collector;
pub mod log_lines;
pub mod sanitize;
pub mod screen;
pub mod spool;
pub mod text;

/// Which output stream a chunk came from. A PTY has only `Stdout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }
    }
}

/// Length of a string in UTF-16 code units: the unit of every cap, as JavaScript's `.length` counts.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}
