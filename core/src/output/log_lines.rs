//! Lines of a run's whole output, read back from its raw log file: when the in-memory text lost its
//! middle, paging (`readLog` with an offset) must still see every line. The file is streamed through a
//! fresh sanitizer with the same line edits the text buffers apply (`\r` rewrites the line, a backspace
//! erases a character), and only the requested window is kept, so memory stays bounded whatever the
//! file's size.

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;

use super::sanitize::Sanitizer;

/// Which lines to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Lines `start..end` (0-based; `end` may exceed the count).
    Range { start: usize, end: usize },
    /// The last `n` lines.
    Last(usize),
}

/// The kept lines and the number of lines in the whole file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lines {
    pub lines: Vec<String>,
    pub total: usize,
}

struct Collect {
    window: Window,
    current: String,
    index: usize,
    kept: VecDeque<String>,
}

impl Collect {
    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.current);
        match self.window {
            Window::Range { start, end } => {
                if (start..end).contains(&self.index) {
                    self.kept.push_back(line);
                }
            }
            Window::Last(n) => {
                if n > 0 {
                    if self.kept.len() == n {
                        self.kept.pop_front();
                    }
                    self.kept.push_back(line);
                }
            }
        }
        self.index += 1;
    }

    fn push(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '\n' => self.finish_line(),
                '\r' => self.current.clear(),
                '\x08' => {
                    self.current.pop();
                }
                c => self.current.push(c),
            }
        }
    }
}

/// Read `window` of the lines in the log file at `path`.
pub fn read(path: &Path, window: Window) -> std::io::Result<Lines> {
    let mut file = std::fs::File::open(path)?;
    let mut sanitizer = Sanitizer::new();
    let mut collect = Collect {
        window,
        current: String::new(),
        index: 0,
        kept: VecDeque::new(),
    };
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        collect.push(&sanitizer.feed(&buf[..n]).text);
    }
    collect.push(&sanitizer.finish().text);
    if !collect.current.is_empty() {
        collect.finish_line();
    }
    Ok(Lines {
        total: collect.index,
        lines: collect.kept.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f
    }

    #[test]
    fn ranges_and_tails_of_the_whole_file() {
        let body: String = (1..=300_000).map(|i| format!("{i}\n")).collect();
        let f = file_with(body.as_bytes());
        let mid = read(
            f.path(),
            Window::Range {
                start: 150_000,
                end: 150_003,
            },
        )
        .unwrap();
        assert_eq!(mid.total, 300_000);
        assert_eq!(mid.lines, ["150001", "150002", "150003"]);
        let last = read(f.path(), Window::Last(2)).unwrap();
        assert_eq!(last.lines, ["299999", "300000"]);
        let past = read(
            f.path(),
            Window::Range {
                start: 400_000,
                end: 400_010,
            },
        )
        .unwrap();
        assert!(past.lines.is_empty());
    }

    #[test]
    fn escapes_and_line_edits_are_applied_as_in_the_text() {
        let f = file_with(b"\x1b[31mred\x1b[0m\r\n10%\r100%\nab_\x08c\nlast");
        let all = read(f.path(), Window::Range { start: 0, end: 10 }).unwrap();
        assert_eq!(all.lines, ["red", "100%", "abc", "last"]);
        assert_eq!(all.total, 4);
    }
}
