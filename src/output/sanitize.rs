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
    /// Set by every callback that only happens in (or returns the parser to) the ground state.
    ground: bool,
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
        self.ground = true;
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

    fn esc_dispatch(&mut self, _intermediates: &[u8], _ignore: bool, _byte: u8) {
        self.ground = true;
    }

    fn osc_dispatch(&mut self, _params: &[&[u8]], _bell_terminated: bool) {
        self.ground = true;
    }

    fn unhook(&mut self) {
        self.ground = true;
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        self.ground = true;
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
    /// The parser is known to be in its ground state with no partial character pending, so plain
    /// text can bypass it.
    ground: bool,
}

/// Printable ASCII, newline, carriage return and tab: text that needs no terminal parsing at all.
fn is_plain(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t' || b == b'\r')
}

/// Whether `bytes` ends inside a multi-byte UTF-8 character.
fn ends_mid_char(bytes: &[u8]) -> bool {
    for (back, &b) in bytes.iter().rev().take(4).enumerate() {
        if b < 0x80 {
            return false;
        }
        if b >= 0xc0 {
            let len = if b >= 0xf0 {
                4
            } else if b >= 0xe0 {
                3
            } else {
                2
            };
            return back + 1 < len;
        }
    }
    false
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
            ground: true,
        }
    }

    /// Feed one chunk of raw bytes.
    pub fn feed(&mut self, bytes: &[u8]) -> Sanitized {
        if self.ground && is_plain(bytes) {
            // The common case (build logs, test output): copy, with the line-ending rules applied.
            // The same line-ending rules as the parser path: CRLF is LF, a bare CR is kept.
            let text = std::str::from_utf8(bytes).expect("plain bytes are ASCII");
            let out = &mut self.sink.out.text;
            out.reserve(text.len() + 1);
            let mut pending = self.sink.pending_cr;
            for (i, piece) in text.split('\r').enumerate() {
                if i > 0 {
                    pending = true;
                }
                if piece.is_empty() {
                    continue;
                }
                if std::mem::take(&mut pending) && !piece.starts_with('\n') {
                    out.push('\r');
                }
                out.push_str(piece);
            }
            self.sink.pending_cr = pending;
            return std::mem::take(&mut self.sink.out);
        }
        // Ground is known again only if something after the last ESC returned the parser to it.
        match bytes.iter().rposition(|&b| b == 0x1b) {
            Some(esc) => {
                self.parser.advance(&mut self.sink, &bytes[..=esc]);
                self.sink.ground = false;
                self.parser.advance(&mut self.sink, &bytes[esc + 1..]);
                self.ground = self.sink.ground;
            }
            None => self.parser.advance(&mut self.sink, bytes),
        }
        if ends_mid_char(bytes) {
            self.ground = false;
        } else if !self.ground && !bytes.contains(&0x1b) && self.sink.ground {
            self.ground = true;
        }
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
    fn fast_path_agrees_with_the_parser() {
        // Plain chunks after partial sequences and split characters must still be parsed correctly.
        assert_eq!(all(&[b"a\x1b[3", b"1mb", b"c\n"]), "abc\n");
        assert_eq!(all(&[b"\x1b]0;ti", b"tle", b"\x07x"]), "x");
        let e = "é".as_bytes();
        assert_eq!(all(&[&[b'a', e[0]], &[e[1], b'b'], b"c"]), "aébc");
        assert_eq!(all(&[b"x\r", b"\ny\r", b"z"]), "x\ny\rz");
        assert_eq!(all(&[b"\x1b[0m", b"plain\tline\n"]), "plain\tline\n");
    }

    #[test]
    fn fast_path_matches_the_slow_path_on_random_input() {
        let mut seed = 7u64;
        let pool: &[&[u8]] = &[
            b"ab",
            b"\n",
            b"\r",
            b"\x1b[",
            b"31m",
            b"\x1b]0;",
            b"\x07",
            b"\t",
            "é".as_bytes(),
            b"\xc3",
            b"\xa9",
            b" x ",
        ];
        for _ in 0..2000 {
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            for _ in 0..6 {
                let mut c = Vec::new();
                for _ in 0..3 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    c.extend_from_slice(pool[(seed % pool.len() as u64) as usize]);
                }
                chunks.push(c);
            }
            let refs: Vec<&[u8]> = chunks.iter().map(|c| c.as_slice()).collect();
            let whole: Vec<u8> = chunks.concat();
            let mut slow = Sanitizer::new();
            slow.ground = false;
            let mut expected = String::new();
            for c in &refs {
                slow.parser.advance(&mut slow.sink, c);
                expected.push_str(&std::mem::take(&mut slow.sink.out).text);
            }
            slow.sink.pending_cr = false;
            assert_eq!(
                all(&refs),
                expected,
                "{:?}",
                String::from_utf8_lossy(&whole)
            );
        }
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
