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

/// Keeps the newest `cap` units of a text stream.
///
/// The buffer may hold up to twice `cap` before it drops the oldest text: trimming on every chunk would
/// move the whole tail for each 4 KiB a PTY delivers. Readers only ever see the newest `cap` units.
#[derive(Debug, Clone)]
pub struct TailText {
    cap: usize,
    text: String,
    /// Units in `text` (the visible part is the newest `cap` of them).
    units: usize,
    /// Units removed from `text` so far.
    removed: usize,
}

impl TailText {
    pub fn new(cap: usize) -> Self {
        TailText {
            cap,
            text: String::new(),
            units: 0,
            removed: 0,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        for (i, piece) in chunk.split('\r').enumerate() {
            if i > 0 {
                self.erase_current_line();
            }
            self.text.push_str(piece);
            self.units += utf16_len(piece);
        }
        if self.units > self.cap.saturating_mul(2).max(self.cap + 65536) {
            self.drop_front(self.units - self.cap);
        }
    }

    fn erase_current_line(&mut self) {
        let keep = self.text.rfind('\n').map_or(0, |i| i + 1);
        self.units -= utf16_len(&self.text[keep..]);
        self.text.truncate(keep);
    }

    /// Byte offset where the first `units` units end (never inside a character).
    fn offset_of(&self, units: usize) -> usize {
        let bytes = self.text.as_bytes();
        if units <= bytes.len() && bytes[..units].is_ascii() {
            return units;
        }
        let mut seen = 0;
        for (i, c) in self.text.char_indices() {
            if seen >= units {
                return i;
            }
            seen += c.len_utf16();
        }
        self.text.len()
    }

    fn drop_front(&mut self, excess: usize) {
        let cut = self.offset_of(excess);
        let gone = utf16_len(&self.text[..cut]);
        self.text.drain(..cut);
        self.units -= gone;
        self.removed += gone;
    }

    /// The newest `cap` units.
    pub fn as_str(&self) -> &str {
        if self.units <= self.cap {
            return &self.text;
        }
        &self.text[self.offset_of(self.units - self.cap)..]
    }

    /// Units currently visible.
    pub fn units(&self) -> usize {
        self.units.min(self.cap)
    }

    /// Units dropped from the front so far.
    pub fn dropped(&self) -> usize {
        self.removed + self.units.saturating_sub(self.cap)
    }

    /// Takes the visible text and resets the buffer (the `dropped` count too).
    pub fn take(&mut self) -> (String, usize) {
        let dropped = self.dropped();
        let visible = self.as_str().to_string();
        self.text = String::new();
        self.units = 0;
        self.removed = 0;
        (visible, dropped)
    }
}

/// Keeps the first `head` units and the newest `cap - head` units, counting what fell in between.
#[derive(Debug, Clone)]
pub struct HeadTailText {
    cap: usize,
    head_cap: usize,
    head: String,
    head_units: usize,
    tail: TailText,
    total_units: usize,
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
            total_units: 0,
            truncated: false,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        if self.truncated {
            self.total_units += utf16_len(chunk);
            self.tail.push(chunk);
            return;
        }
        for (i, piece) in chunk.split('\r').enumerate() {
            if i > 0 {
                let keep = self.head.rfind('\n').map_or(0, |i| i + 1);
                let gone = utf16_len(&self.head[keep..]);
                self.head_units -= gone;
                self.total_units -= gone;
                self.head.truncate(keep);
            }
            let units = utf16_len(piece);
            self.head.push_str(piece);
            self.head_units += units;
            self.total_units += units;
        }
        if self.head_units > self.cap {
            self.split_head();
        }
    }

    /// First overflow: everything past the head budget moves to the tail, which keeps its newest part.
    fn split_head(&mut self) {
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
        // The rest holds no bare `\r` any more: collapses were applied as it arrived.
        self.tail.push(&rest);
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Units the text would have had with nothing cut.
    pub fn total_units(&self) -> usize {
        self.total_units
    }

    /// Units dropped from the middle.
    pub fn omitted_units(&self) -> usize {
        if self.truncated {
            self.total_units - self.head_units - self.tail.units()
        } else {
            0
        }
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
