//! Bounded text buffers. Caps count UTF-16 code units, as OpenClaw's caps (JS `.length`) do.
//!
//! Text from the sanitizer may contain a bare `\r`, meaning "the rest of this line is rewritten": the
//! buffers collapse it to the final version of the line, so a progress bar leaves one line, not a
//! thousand.

use super::utf16_len;

/// Marker placed where [`HeadTailText`] dropped the middle.
pub fn omitted_marker(units: usize) -> String {
    format!("[... {units} chars omitted ...]")
}

/// Extra units of the line being written that [`TailText`] keeps beyond its cap, so backspaces that
/// reach back past the visible part still find the characters they erase.
const LINE_SLACK: usize = 65536;

/// Keeps the newest `cap` units of a text stream, with `\r` and backspace edits applied.
///
/// A `\r` erases the line being written and a backspace its last character, so what becomes visible
/// after an edit is older text: the buffer keeps the newest `cap` units of the complete lines however
/// long the current line grew, and the current line's newest `cap + LINE_SLACK` units. What it shows is
/// therefore the same however the stream was cut into chunks. It may hold about twice that before it
/// trims: trimming on every chunk would move the whole tail for each 4 KiB a PTY delivers.
#[derive(Debug, Clone)]
pub struct TailText {
    cap: usize,
    text: String,
    /// Units in `text` (the visible part is the newest `cap` of them).
    units: usize,
    /// Byte offset in `text` where the line being written (no `\n` yet) begins.
    line_start: usize,
    /// Units trimmed from the front of the complete lines since the last `take`.
    removed: usize,
    /// Units trimmed from the front of the current line (forgotten when a `\r` erases the line).
    line_removed: usize,
}

impl TailText {
    pub fn new(cap: usize) -> Self {
        TailText {
            cap,
            text: String::new(),
            units: 0,
            line_start: 0,
            removed: 0,
            line_removed: 0,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        for (i, piece) in chunk.split('\r').enumerate() {
            if i > 0 {
                self.erase_line();
            }
            for (j, run) in piece.split('\x08').enumerate() {
                if j > 0 {
                    self.backspace();
                }
                self.append(run);
            }
        }
        if self.units > 2 * (self.cap + LINE_SLACK) {
            self.trim();
        }
    }

    fn append(&mut self, run: &str) {
        if run.is_empty() {
            return;
        }
        let base = self.text.len();
        self.text.push_str(run);
        self.units += utf16_len(run);
        if let Some(nl) = run.rfind('\n') {
            self.line_start = base + nl + 1;
            self.removed += std::mem::take(&mut self.line_removed);
        }
    }

    fn erase_line(&mut self) {
        self.units -= utf16_len(&self.text[self.line_start..]);
        self.text.truncate(self.line_start);
        self.line_removed = 0;
    }

    fn backspace(&mut self) {
        if self.text.len() > self.line_start {
            let c = self.text.pop().expect("the current line is not empty");
            self.units -= c.len_utf16();
        } else {
            // Past what was kept of a line over `cap + LINE_SLACK` units: count it, the text is gone.
            self.line_removed = self.line_removed.saturating_sub(1);
        }
    }

    /// Drops what can never become visible again: complete lines beyond the newest `cap` units, and
    /// the current line beyond its newest `cap + LINE_SLACK`.
    fn trim(&mut self) {
        let line = &self.text[self.line_start..];
        let line_units = utf16_len(line);
        if line_units > self.cap + LINE_SLACK {
            let cut = self.line_start + offset_of(line, line_units - self.cap - LINE_SLACK);
            let gone = utf16_len(&self.text[self.line_start..cut]);
            self.text.drain(self.line_start..cut);
            self.units -= gone;
            self.line_removed += gone;
        }
        let lines_units = utf16_len(&self.text[..self.line_start]);
        if lines_units > self.cap {
            let cut = offset_of(&self.text[..self.line_start], lines_units - self.cap);
            let gone = utf16_len(&self.text[..cut]);
            self.text.drain(..cut);
            self.line_start -= cut;
            self.units -= gone;
            self.removed += gone;
        }
    }

    /// The newest `cap` units.
    pub fn as_str(&self) -> &str {
        if self.units <= self.cap {
            return &self.text;
        }
        &self.text[offset_of(&self.text, self.units - self.cap)..]
    }

    /// Units currently visible.
    pub fn units(&self) -> usize {
        self.units.min(self.cap)
    }

    /// Units of the edited text that are not visible: dropped from the front, or beyond the cap.
    pub fn dropped(&self) -> usize {
        self.removed + self.line_removed + self.units.saturating_sub(self.cap)
    }

    /// Takes the visible text and resets the buffer (the `dropped` count too).
    pub fn take(&mut self) -> (String, usize) {
        let dropped = self.dropped();
        let visible = self.as_str().to_string();
        *self = TailText::new(self.cap);
        (visible, dropped)
    }
}

/// Byte offset in `s` where its first `units` UTF-16 units end (never inside a character).
fn offset_of(s: &str, units: usize) -> usize {
    let bytes = s.as_bytes();
    if units <= bytes.len() && bytes[..units].is_ascii() {
        return units;
    }
    let mut seen = 0;
    for (i, c) in s.char_indices() {
        if seen >= units {
            return i;
        }
        seen += c.len_utf16();
    }
    s.len()
}

/// Keeps the first `head` units and the newest `cap - head` units, counting what fell in between.
///
/// `\r` and backspace edits apply to the head until it overflows; from then on the head is final and
/// edits apply to the tail. The head overflows at the first run of plain text that takes it past the
/// cap, so where it is cut does not depend on how the stream was cut into chunks.
#[derive(Debug, Clone)]
pub struct HeadTailText {
    cap: usize,
    head_cap: usize,
    head: String,
    head_units: usize,
    tail: TailText,
    truncated: bool,
}

impl HeadTailText {
    /// `cap` is the most text ever kept (the marker aside); the head gets half of it.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        HeadTailText {
            cap,
            head_cap,
            head: String::new(),
            head_units: 0,
            tail: TailText::new(cap - head_cap),
            truncated: false,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        let mut rest = chunk;
        while !self.truncated && !rest.is_empty() {
            let edit = rest.find(['\r', '\x08']).unwrap_or(rest.len());
            if edit == 0 {
                if rest.starts_with('\r') {
                    let keep = self.head.rfind('\n').map_or(0, |i| i + 1);
                    self.head_units -= utf16_len(&self.head[keep..]);
                    self.head.truncate(keep);
                } else if !self.head.is_empty() && !self.head.ends_with('\n') {
                    let c = self.head.pop().expect("checked not empty");
                    self.head_units -= c.len_utf16();
                }
                rest = &rest[1..];
                continue;
            }
            let (run, after) = rest.split_at(edit);
            self.head.push_str(run);
            self.head_units += utf16_len(run);
            rest = after;
            if self.head_units > self.cap {
                self.split_head();
            }
        }
        if !rest.is_empty() {
            self.tail.push(rest);
        }
    }

    /// First overflow: everything past the head budget moves to the tail, which keeps its newest part.
    fn split_head(&mut self) {
        // The head keeps at most `head_cap` units: a surrogate pair that straddles it goes to the tail.
        let mut units = 0;
        let mut at = self.head.len();
        for (i, c) in self.head.char_indices() {
            if units + c.len_utf16() > self.head_cap {
                at = i;
                break;
            }
            units += c.len_utf16();
        }
        let rest = self.head.split_off(at);
        self.head_units = units;
        self.truncated = true;
        // The rest holds no `\r` or backspace: edits were applied as it arrived.
        self.tail.push(&rest);
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Units the edited text has, kept or not.
    pub fn total_units(&self) -> usize {
        self.head_units + self.tail.units() + self.tail.dropped()
    }

    /// Units of the edited text dropped from the middle.
    pub fn omitted_units(&self) -> usize {
        self.tail.dropped()
    }

    /// The kept text, with the omitted marker between head and tail when something was cut.
    pub fn render(&self) -> String {
        if !self.truncated {
            return self.head.clone();
        }
        let marker = omitted_marker(self.omitted_units());
        let mut out =
            String::with_capacity(self.head.len() + marker.len() + self.tail.as_str().len() + 2);
        out.push_str(&self.head);
        if !self.head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker);
        out.push('\n');
        out.push_str(self.tail.as_str());
        out
    }

    /// The newest `max` units of the kept text.
    pub fn last_units(&self, max: usize) -> String {
        let source: &str = if self.truncated {
            self.tail.as_str()
        } else {
            &self.head
        };
        last_units(source, max).to_string()
    }
}

/// The suffix of `s` that is at most `max` UTF-16 units long, never splitting a character.
pub fn last_units(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices().rev() {
        units += c.len_utf16();
        if units > max {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_newest() {
        let mut t = TailText::new(5);
        t.push("abc");
        t.push("defg");
        assert_eq!(t.as_str(), "cdefg");
        assert_eq!(t.dropped(), 2);
        assert_eq!(t.take(), ("cdefg".to_string(), 2));
        assert_eq!(t.units(), 0);
    }

    #[test]
    fn tail_counts_utf16_units_and_keeps_pairs_whole() {
        let mut t = TailText::new(3);
        t.push("a😀b😀");
        // 😀 is two units: the newest 3 units are "b😀".
        assert_eq!(t.as_str(), "b😀");
    }

    #[test]
    fn carriage_return_collapses_the_line() {
        let mut t = TailText::new(100);
        t.push("start\n10%\r20%");
        t.push("\r100%\nend");
        assert_eq!(t.as_str(), "start\n100%\nend");
        let mut h = HeadTailText::new(100);
        h.push("start\n10%\r20%");
        h.push("\r100%\nend");
        assert_eq!(h.render(), "start\n100%\nend");
        assert_eq!(h.total_units(), "start\n100%\nend".len());
    }

    #[test]
    fn head_and_tail_with_marker() {
        let mut h = HeadTailText::new(10);
        h.push("0123456789");
        assert!(!h.truncated());
        h.push("abcdefghij");
        assert!(h.truncated());
        assert_eq!(h.omitted_units(), 10);
        assert_eq!(h.render(), "01234\n[... 10 chars omitted ...]\nfghij");
        h.push("XY");
        assert_eq!(h.render(), "01234\n[... 12 chars omitted ...]\nhijXY");
        assert_eq!(h.last_units(3), "jXY");
        assert_eq!(h.total_units(), 22);
    }

    #[test]
    fn last_units_of_short_text_is_whole() {
        assert_eq!(last_units("abc", 10), "abc");
        assert_eq!(last_units("abc", 2), "bc");
        assert_eq!(last_units("", 2), "");
    }
}
