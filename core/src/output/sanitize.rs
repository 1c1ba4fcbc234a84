//! Turns a raw byte stream into clean text, one parser per stream.
//!
//! `vte` is the state machine terminals use, so escape sequences split across reads are recognised
//! whole (no `[31m` residue) and invalid UTF-8 becomes U+FFFD. A multi-byte character split across
//! reads is joined here, not by vte: the sanitizer holds back an incomplete trailing character and
//! feeds it with the next read, so vte only ever sees whole characters. (vte 0.15's own carry-over
//! drops the character that follows a completed one when the same read ends inside another
//! character: `advance_partial_utf8` returns the length of every valid character it copied, not of
//! the one it printed.) What the parser reports besides text matters to PTY sessions: cursor position
//! queries (`ESC[6n`, `ESC[?6n`) that must be answered, and the cursor key mode toggles (`ESC[?1h` /
//! `ESC[?1l`, smkx / rmkx) that decide how arrow keys are encoded.
//!
//! Line endings: CRLF becomes LF. A bare CR (a progress redraw) is kept as `\r` in the text so the
//! buffers can collapse the line it rewrites; a CR at the very end of a chunk waits for the next chunk
//! to know whether an LF follows. A backspace is kept as `\x08` for the buffers to apply, so the text is
//! the same however the stream was cut into reads.

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
    /// The last bracketed paste mode toggle in the chunk (`ESC[?2004h` on, `ESC[?2004l` off), if any.
    pub bracketed_paste: Option<bool>,
    /// The last alternate screen switch in the chunk (`ESC[?1049h`, `?1047h`, `?47h` on; `l` off).
    pub alternate_screen: Option<bool>,
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
            // Backspace overstrike (`man`, some progress bars) goes to the text buffers, which erase
            // the character before it: applied here, only when that character was in the same read,
            // the text they get (and where the head/tail split falls) would depend on the reads. After a
            // CR the cursor is at the line's start, where a backspace does nothing.
            0x08 if !self.pending_cr => self.out.text.push('\x08'),
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
            'h' | 'l' if private => {
                if params.iter().any(|p| p.first() == Some(&1)) {
                    self.out.cursor_key_mode = Some(if action == 'h' {
                        CursorKeyMode::Application
                    } else {
                        CursorKeyMode::Normal
                    });
                }
                if params.iter().any(|p| p.first() == Some(&2004)) {
                    self.out.bracketed_paste = Some(action == 'h');
                }
                if params
                    .iter()
                    .any(|p| matches!(p.first(), Some(&1049) | Some(&1047) | Some(&47)))
                {
                    self.out.alternate_screen = Some(action == 'h');
                }
            }
            _ => {}
        }
    }
}

/// A streaming sanitizer for one output stream.
pub struct Sanitizer {
    parser: Parser,
    sink: Sink,
    /// The parser is known to be in its ground state, so plain text can bypass it.
    ground: bool,
    /// The start of a character the last read ended inside (at most 3 bytes), fed with the next read.
    carry: Vec<u8>,
}

/// Printable ASCII, newline, carriage return and tab: text that needs no terminal parsing at all.
fn is_plain(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t' || b == b'\r')
}

/// Where the incomplete character `bytes` ends inside begins, if it does: a lead byte in the last three
/// bytes followed only by the continuation bytes it still expects, with no byte that makes it invalid
/// already (such a sequence is U+FFFD at once, whatever follows).
pub(crate) fn incomplete_tail(bytes: &[u8]) -> Option<usize> {
    let from = bytes.len().saturating_sub(3);
    let lead = (from..bytes.len())
        .rev()
        .find(|&i| bytes[i] & 0xc0 != 0x80)?;
    if bytes[lead] < 0xc0 {
        return None;
    }
    match std::str::from_utf8(&bytes[lead..]) {
        Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => Some(lead),
        _ => None,
    }
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
            carry: Vec::new(),
        }
    }

    /// Feed one chunk of raw bytes. The text returned for any split of a byte stream into chunks,
    /// joined, is the text of the whole stream fed at once.
    pub fn feed(&mut self, bytes: &[u8]) -> Sanitized {
        if self.carry.is_empty() {
            return self.feed_whole_chars(bytes);
        }
        let mut joined = std::mem::take(&mut self.carry);
        joined.extend_from_slice(bytes);
        self.feed_whole_chars(&joined)
    }

    /// Feeds `bytes` up to an incomplete last character, which waits in `carry`.
    fn feed_whole_chars(&mut self, bytes: &[u8]) -> Sanitized {
        let bytes = match incomplete_tail(bytes) {
            Some(at) => {
                self.carry.extend_from_slice(&bytes[at..]);
                &bytes[..at]
            }
            None => bytes,
        };
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
        if !self.ground && !bytes.contains(&0x1b) && self.sink.ground {
            self.ground = true;
        }
        std::mem::take(&mut self.sink.out)
    }

    /// End of stream: a character cut off by the end is invalid, so it becomes U+FFFD (where the
    /// parser is printing text; inside an escape sequence it is part of that sequence), and a trailing
    /// CR has nothing left to rewrite and is dropped.
    pub fn finish(&mut self) -> Sanitized {
        if !self.carry.is_empty() {
            // A byte that cannot continue the character makes vte print U+FFFD for it at once; the
            // stand-in itself (an ASCII SUB, which vte executes and the sink ignores) adds no text.
            let mut cut = std::mem::take(&mut self.carry);
            cut.push(0x1a);
            self.parser.advance(&mut self.sink, &cut);
        }
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
    fn drops_other_controls_and_passes_backspace_on() {
        assert_eq!(all(&[b"a\x07b\x00c_\x08d"]), "abc_\x08d");
        assert_eq!(edited(&[b"a\x07b\x00c_\x08d"]), "abcd");
        // After a CR the cursor is at the line's start: a backspace there does nothing.
        assert_eq!(all(&[b"ab\r\x08c"]), "ab\rc");
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

    /// The text an agent reads: the chunks' text with its `\r` and backspace edits applied, as the
    /// output buffers apply them.
    fn edited(chunks: &[&[u8]]) -> String {
        let mut s = Sanitizer::new();
        let mut text = crate::output::text::TailText::new(usize::MAX / 4);
        for c in chunks {
            text.push(&s.feed(c).text);
        }
        text.push(&s.finish().text);
        text.as_str().to_string()
    }

    /// What one read of the whole stream gives.
    fn whole(bytes: &[u8]) -> String {
        edited(&[bytes])
    }

    /// The stream cut at `cuts` (sorted, deduplicated offsets).
    fn split_at<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut pieces = Vec::new();
        let mut from = 0;
        for &at in cuts {
            pieces.push(&bytes[from..at]);
            from = at;
        }
        pieces.push(&bytes[from..]);
        pieces
    }

    #[test]
    fn a_character_after_a_completed_split_one_is_kept() {
        // The reported case: writes [0,2) [2,5) [5,7) [7,..) of "AéB🎉C\n". vte alone dropped the B.
        let bytes = "A\u{e9}B\u{1F389}C\n".as_bytes();
        assert_eq!(all(&split_at(bytes, &[2, 5, 7])), "AéB🎉C\n");
    }

    #[test]
    fn every_split_of_tricky_streams_matches_one_read() {
        let samples: &[&[u8]] = &[
            "A\u{e9}B\u{1F389}C\n".as_bytes(),
            "é€🎉\x1b[31mé\x1b[0m\r\n€\rx".as_bytes(),
            b"\xf0\x9f\x8e\xc3\xa9\xe2\x82x\xe0\x80\xed\xa0\x80\xc3",
            "\x1b]0;tïtle\x07ok\x1bPq\x1b\\é\x08\t\u{85}z".as_bytes(),
        ];
        for bytes in samples {
            let expected = whole(bytes);
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    for k in j..=bytes.len() {
                        let got = edited(&split_at(bytes, &[i, j, k]));
                        assert_eq!(got, expected, "{bytes:?} cut at {i},{j},{k}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_character_cut_off_by_the_end_is_a_replacement_character() {
        assert_eq!(all(&[b"ok\xe2\x82"]), "ok\u{fffd}");
        assert_eq!(all(&[b"ok\xf0", b"\x9f"]), "ok\u{fffd}");
    }

    /// Bytes that exercise every path: plain text, line endings, escapes, valid and invalid UTF-8.
    fn stream() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just(b"ab".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\t".to_vec()),
            Just(b"\x08".to_vec()),
            Just(b"\x1b[".to_vec()),
            Just(b"31m".to_vec()),
            Just(b"\x1b]0;".to_vec()),
            Just(b"\x07".to_vec()),
            Just(b"\x1bP".to_vec()),
            Just(b"\x1b\\".to_vec()),
            Just("é".as_bytes().to_vec()),
            Just("€".as_bytes().to_vec()),
            Just("🎉".as_bytes().to_vec()),
            Just("\u{85}".as_bytes().to_vec()),
            any::<u8>().prop_map(|b| vec![b]),
            proptest::collection::vec(0x80u8..=0xff, 1..4),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn any_split_decodes_as_one_read(
            bytes in stream(),
            cuts in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 0..8),
        ) {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            at.dedup();
            proptest::prop_assert_eq!(edited(&split_at(&bytes, &at)), whole(&bytes));
        }

        #[test]
        fn byte_by_byte_decodes_as_one_read(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            proptest::prop_assert_eq!(edited(&singles), whole(&bytes));
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
        assert_eq!(s.feed(b"\x1b[?2004h>>> ").bracketed_paste, Some(true));
        assert_eq!(s.feed(b"\x1b[?2004l").bracketed_paste, Some(false));
        assert_eq!(s.feed(b"plain").bracketed_paste, None);
    }
}
