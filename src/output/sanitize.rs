//! Turns a raw byte stream into clean text, one parser per stream.
//!
//! `vte` is the state machine terminals use, so escape sequences split across reads are recognised
//! whole (no `[31m` residue), invalid UTF-8 becomes U+FFFD, and a multi-byte character split across
//! reads is joined. What the parser reports besides text matters to PTY sessions: cursor position
//! queries (`ESC[6n`, `ESC[?6n`) that must be answered, and the cursor key mode toggles (`ESC[?1h` /
//! `ESC[?1l`, smkx / rmkx) that decide how arrow keys are encoded.
//!
//! Line endings: CRLF becomes LF. A bare CR (a progress redraw) is kept as `\r` in the text so the
//! buffers can collapse the line it rewrites; a CR at the very end of a chunk waits for the next chunk
//! to know whether an LF follows.

use vte::{Params, Parser, Perform};

/// Cursor key mode of a terminal application, as OpenClaw B tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorKeyMode {
    Unknown,
    Normal,
    Application,
}

impl CursorKeyMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CursorKeyMode::Unknown => "unknown",
            CursorKeyMode::Normal => "normal",
            CursorKeyMode::Application => "application",
        }
    }
}

/// What one chunk produced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sanitized {
    pub text: String,
    /// Number of cursor position queries seen; each wants one `ESC[1;1R` reply on a PTY.
    pub cursor_queries: u32,
    /// The last cursor key mode toggle in the chunk, if any.
    pub cursor_key_mode: Option<CursorKeyMode>,
}

#[derive(Default)]
struct Sink {
    out: Sanitized,
    pending_cr: bool,
}

impl Sink {
    fn flush_cr(&mut self) {
        if self.pending_cr {
            self.out.text.push('\r');
            self.pending_cr = false;
        }
    }
}

impl Perform for Sink {
    fn print(&mut self, c: char) {
        self.flush_cr();
        // C1 controls decoded from UTF-8 are terminal commands, not text.
        if ('\u{80}'..='\u{9f}').contains(&c) {
            return;
        }
        self.out.text.push(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                // CRLF (or CR CR LF) is a plain line end.
                self.pending_cr = false;
                self.out.text.push('\n');
            }
            b'\r' => self.pending_cr = true,
            b'\t' => {
                self.flush_cr();
                self.out.text.push('\t');
            }
            // Backspace overstrike (`man`, some progress bars): remove the previous character of the line.
            0x08 if !self.pending_cr
                && self.out.text.ends_with(|c: char| c != '\n' && c != '\r') =>
            {
                self.out.text.pop();
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        let first = params.iter().next().and_then(|p| p.first().copied());
        let private = intermediates.first() == Some(&b'?');
        match action {
            'n' if first == Some(6) => self.out.cursor_queries += 1,
            'h' | 'l' if private && params.iter().any(|p| p.first() == Some(&1)) => {
                self.out.cursor_key_mode = Some(if action == 'h' {
                    CursorKeyMode::Application
                } else {
                    CursorKeyMode::Normal
                });
            }
            _ => {}
        }
    }
}

/// A streaming sanitizer for one output stream.
pub struct Sanitizer {
    parser: Parser,
    sink: Sink,
}

impl Default for Sanitizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Sanitizer {
    pub fn new() -> Self {
        Sanitizer {
            parser: Parser::new(),
            sink: Sink::default(),
        }
    }

    /// Feed one chunk of raw bytes.
    pub fn feed(&mut self, bytes: &[u8]) -> Sanitized {
        self.parser.advance(&mut self.sink, bytes);
        std::mem::take(&mut self.sink.out)
    }

    /// End of stream: a trailing CR has nothing left to rewrite and is dropped.
    pub fn finish(&mut self) -> Sanitized {
        self.sink.pending_cr = false;
        std::mem::take(&mut self.sink.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> String {
        let mut s = Sanitizer::new();
        let mut out = String::new();
        for c in chunks {
            out.push_str(&s.feed(c).text);
        }
        out.push_str(&s.finish().text);
        out
    }

    #[test]
    fn strips_colors_split_across_chunks() {
        assert_eq!(all(&[b"a\x1b[3", b"1mred\x1b", b"[0m b"]), "ared b");
    }

    #[test]
    fn strips_osc_titles_and_private_modes() {
        assert_eq!(all(&[b"\x1b]0;title\x07x\x1b[?25ly"]), "xy");
    }

    #[test]
    fn crlf_becomes_lf_even_when_split() {
        assert_eq!(all(&[b"a\r", b"\nb\r\n"]), "a\nb\n");
    }

    #[test]
    fn bare_cr_is_kept_for_collapse_and_trailing_cr_dropped() {
        assert_eq!(all(&[b"10%\r20%\r", b"done\r"]), "10%\r20%\rdone");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_split_chars_joined() {
        assert_eq!(all(&[b"\xff\xfeok"]), "\u{fffd}\u{fffd}ok");
        let euro = "€".as_bytes();
        assert_eq!(all(&[&euro[..1], &euro[1..]]), "€");
    }

    #[test]
    fn drops_other_controls_and_applies_backspace() {
        assert_eq!(all(&[b"a\x07b\x00c_\x08d"]), "abcd");
    }

    #[test]
    fn reports_cursor_queries_and_key_mode() {
        let mut s = Sanitizer::new();
        let r = s.feed(b"\x1b[6nhi\x1b[?6n\x1b[?1h");
        assert_eq!(r.text, "hi");
        assert_eq!(r.cursor_queries, 2);
        assert_eq!(r.cursor_key_mode, Some(CursorKeyMode::Application));
        let r = s.feed(b"\x1b[?1h\x1b[?1l");
        assert_eq!(r.cursor_key_mode, Some(CursorKeyMode::Normal));
    }
}
