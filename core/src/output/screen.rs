//! The screen of a PTY session: a terminal emulator (`vt100`) fed the same raw bytes as the text, so a
//! full-screen program (an editor, a pager, a TUI test runner) can be read as the rows a person would
//! see, not as thousands of `~` and spaces with no newlines.
//!
//! `vt100` parses with vte, whose carry-over of a character split across reads drops the character
//! after it (see [`super::sanitize`]): the screen is fed whole characters only, holding back an
//! incomplete trailing one until the next read.
//!
//! Emulating every byte would cost most of a PTY's throughput (measured: 100 MiB of `cat` fell from
//! the kernel's rate to less than half of it). So the emulator runs live only while a program holds
//! the alternate screen (an editor, a pager: where the screen is the output); otherwise the screen
//! keeps the last [`TAIL_BYTES`] raw bytes and replays them into a fresh emulator when it is read,
//! which shows line-oriented output exactly.

use super::sanitize::incomplete_tail;

/// What the screen shows now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenView {
    /// Every visible row, trailing spaces removed.
    pub rows: Vec<String>,
    pub cursor_row: u16,
    pub cursor_col: u16,
    /// The program switched to the alternate screen (full-screen mode).
    pub alternate: bool,
    pub cols: u16,
}

impl ScreenView {
    /// The rows as text, without the blank rows at the bottom.
    pub fn text(&self) -> String {
        let last = self
            .rows
            .iter()
            .rposition(|r| !r.is_empty())
            .map_or(0, |i| i + 1);
        self.rows[..last].join("\n")
    }
}

/// Raw bytes kept for a replay while no full-screen program runs.
pub const TAIL_BYTES: usize = 64 * 1024;

pub struct Screen {
    /// The live emulator, while a program holds the alternate screen.
    live: Option<vt100::Parser>,
    /// The newest raw bytes, whole characters only.
    tail: std::collections::VecDeque<u8>,
    carry: Vec<u8>,
    rows: u16,
    cols: u16,
}

fn non_zero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n.max(1)).expect("at least 1")
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Self {
        Screen {
            live: None,
            tail: std::collections::VecDeque::with_capacity(TAIL_BYTES),
            carry: Vec::new(),
            rows,
            cols,
        }
    }

    fn fresh(&self) -> vt100::Parser {
        let mut p = vt100::Parser::new(non_zero(self.rows), non_zero(self.cols), 0);
        let (a, b) = self.tail.as_slices();
        p.process(a);
        p.process(b);
        p
    }

    /// Take a chunk of output. `alternate` is the chunk's alternate screen switch, if any (from the
    /// sanitizer, which parses every byte anyway).
    pub fn feed(&mut self, bytes: &[u8], alternate: Option<bool>) {
        let mut joined;
        let bytes = if self.carry.is_empty() {
            bytes
        } else {
            joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            &joined[..]
        };
        let whole = match incomplete_tail(bytes) {
            Some(at) => {
                self.carry = bytes[at..].to_vec();
                &bytes[..at]
            }
            None => bytes,
        };
        if whole.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&whole[whole.len() - TAIL_BYTES..]);
        } else {
            let excess = (self.tail.len() + whole.len()).saturating_sub(TAIL_BYTES);
            self.tail.drain(..excess);
            self.tail.extend(whole);
        }
        match (&mut self.live, alternate) {
            (Some(parser), _) => {
                parser.process(whole);
                if !parser.screen().alternate_screen() {
                    self.live = None;
                }
            }
            // A program took the alternate screen: from here every byte counts.
            (None, Some(true)) => self.live = Some(self.fresh()),
            (None, _) => {}
        }
    }

    /// A program holds the alternate screen (the emulator runs live).
    pub fn alternate(&self) -> bool {
        self.live.is_some()
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.rows = rows;
        self.cols = cols;
        if let Some(parser) = self.live.as_mut() {
            parser.set_size(non_zero(rows), non_zero(cols));
        }
    }

    pub fn view(&self) -> ScreenView {
        let replayed;
        let parser = match &self.live {
            Some(p) => p,
            None => {
                replayed = self.fresh();
                &replayed
            }
        };
        let screen = parser.screen();
        let (_, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        ScreenView {
            rows: screen
                .rows(0, cols.get())
                .map(|r| r.trim_end().to_string())
                .collect(),
            cursor_row,
            cursor_col,
            alternate: screen.alternate_screen(),
            cols: cols.get(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_screen_program_reads_as_its_rows() {
        let mut s = Screen::new(5, 20);
        // Alternate screen, clear, draw two lines at positions, park the cursor.
        s.feed(
            b"\x1b[?1049h\x1b[2J\x1b[1;1Hfile.txt\x1b[3;5Hhello\x1b[5;1H~",
            Some(true),
        );
        let v = s.view();
        assert!(v.alternate);
        assert_eq!(v.rows, ["file.txt", "", "    hello", "", "~"]);
        assert_eq!((v.cursor_row, v.cursor_col), (4, 1));
        assert_eq!(v.text(), "file.txt\n\n    hello\n\n~");
        s.feed(b"\x1b[?1049l", Some(false));
        assert!(!s.view().alternate);
        assert!(s.live.is_none(), "back to replaying the tail");
    }

    #[test]
    fn characters_split_across_reads_are_kept() {
        let bytes = "A\u{e9}B\u{1F389}C".as_bytes();
        let mut s = Screen::new(2, 20);
        for piece in [&bytes[..2], &bytes[2..5], &bytes[5..7], &bytes[7..]] {
            s.feed(piece, None);
        }
        assert_eq!(s.view().rows[0], "AéB🎉C");
    }

    #[test]
    fn a_long_line_oriented_output_shows_its_last_lines() {
        let mut s = Screen::new(3, 20);
        for i in 1..=50_000 {
            s.feed(format!("line {i}\r\n").as_bytes(), None);
        }
        assert_eq!(s.view().rows, ["line 49999", "line 50000", ""]);
        assert!(s.tail.len() <= TAIL_BYTES);
    }

    #[test]
    fn resize_changes_the_grid() {
        let mut s = Screen::new(2, 10);
        s.resize(4, 30);
        let v = s.view();
        assert_eq!((v.rows.len(), v.cols), (4, 30));
    }
}
