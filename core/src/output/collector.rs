//! One session's output: sanitizers per stream, the aggregated head+tail text, the pending text each
//! poll drains, and the raw spool.

use std::path::PathBuf;

use super::sanitize::{CursorKeyMode, Sanitizer};
use super::spool::RawSpool;
use super::text::{HeadTailText, TailText};
use super::Stream;

/// Length of the `tail` field, as OpenClaw keeps it.
pub const TAIL_UNITS: usize = 2000;

/// Output caps, in UTF-16 units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Aggregated text kept per session (head and tail).
    pub max_output_chars: usize,
    /// Text kept per stream between two polls (newest kept).
    pub pending_max_output_chars: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            max_output_chars: 200_000,
            pending_max_output_chars: 30_000,
        }
    }
}

/// The text one chunk produced, and whether the terminal asked where its cursor is.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ingested {
    pub text: String,
    pub cursor_queries: u32,
}

pub struct OutputCollector {
    sanitizers: [Sanitizer; 2],
    aggregate: HeadTailText,
    pending: [TailText; 2],
    pending_truncated: bool,
    spool: RawSpool,
    cursor_key_mode: CursorKeyMode,
    /// The program asked for bracketed paste (`ESC[?2004h`) and has not turned it off.
    bracketed_paste: bool,
    /// Keep the raw bytes in a log file once the text passes this many units, even when the text
    /// itself is not cut (a caller that shows less than it keeps still has a file to point to).
    spill_above: Option<usize>,
    /// PTY sessions: what the terminal shows (see [`super::screen`]).
    screen: Option<super::screen::Screen>,
}

impl OutputCollector {
    pub fn new(limits: OutputLimits, log_dir: PathBuf, is_pty: bool) -> Self {
        // The pending cap never exceeds the aggregate cap (OpenClaw's effective pending cap).
        let pending_cap = limits.pending_max_output_chars.min(limits.max_output_chars);
        OutputCollector {
            sanitizers: [Sanitizer::new(), Sanitizer::new()],
            aggregate: HeadTailText::new(limits.max_output_chars),
            pending: [TailText::new(pending_cap), TailText::new(pending_cap)],
            pending_truncated: false,
            spool: RawSpool::new(log_dir),
            cursor_key_mode: if is_pty {
                CursorKeyMode::Unknown
            } else {
                CursorKeyMode::Normal
            },
            bracketed_paste: false,
            spill_above: None,
            screen: None,
        }
    }

    pub fn ingest(&mut self, stream: Stream, bytes: &[u8]) -> Ingested {
        self.spool.push(bytes);
        let out = self.sanitizers[stream.index()].feed(bytes);
        if let Some(screen) = self.screen.as_mut() {
            screen.feed(bytes, out.alternate_screen);
        }
        if let Some(on) = out.bracketed_paste {
            self.bracketed_paste = on;
        }
        if let Some(mode) = out.cursor_key_mode {
            self.cursor_key_mode = mode;
        } else if self.cursor_key_mode == CursorKeyMode::Unknown && !bytes.is_empty() {
            // The program has started and drawn without asking for application cursor keys: like a
            // terminal, assume normal mode (bash and Python prompts never announce one).
            self.cursor_key_mode = CursorKeyMode::Normal;
        }
        self.append_text(stream, &out.text);
        Ingested {
            text: out.text,
            cursor_queries: out.cursor_queries,
        }
    }

    /// The stream reached its end: flush what its sanitizer held back.
    pub fn finish_stream(&mut self, stream: Stream) -> String {
        let out = self.sanitizers[stream.index()].finish();
        self.append_text(stream, &out.text);
        out.text
    }

    fn append_text(&mut self, stream: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        let pending = &mut self.pending[stream.index()];
        pending.push(text);
        if pending.dropped() > 0 {
            self.pending_truncated = true;
        }
        let was_truncated = self.aggregate.truncated();
        self.aggregate.push(text);
        let past_threshold = self
            .spill_above
            .is_some_and(|n| self.aggregate.total_units() > n);
        if (!was_truncated && self.aggregate.truncated()) || past_threshold {
            self.spool.spill();
        }
    }

    /// The run is over: flush the log file.
    pub fn finish(&mut self) {
        self.spool.finish();
    }

    /// Aggregated text: head and tail with the omitted marker when cut.
    pub fn aggregated(&self) -> String {
        self.aggregate.render()
    }

    /// The newest 2000 units of the aggregated text.
    pub fn tail(&self) -> String {
        self.aggregate.last_units(TAIL_UNITS)
    }

    /// Whether the aggregated text lost its middle.
    pub fn truncated(&self) -> bool {
        self.aggregate.truncated()
    }

    /// Whether a pending buffer dropped text because nobody polled in time.
    pub fn pending_truncated(&self) -> bool {
        self.pending_truncated
    }

    pub fn total_chars(&self) -> usize {
        self.aggregate.total_units()
    }

    pub fn total_bytes(&self) -> u64 {
        self.spool.total_bytes()
    }

    pub fn omitted_chars(&self) -> usize {
        self.aggregate.omitted_units()
    }

    /// Takes the text not yet drained, per stream, and how many units the pending buffers dropped
    /// since the last drain (older text that nobody polled in time).
    pub fn drain_pending(&mut self) -> (String, String, usize) {
        let (out, dropped_out) = self.pending[0].take();
        let (err, dropped_err) = self.pending[1].take();
        (out, err, dropped_out + dropped_err)
    }

    pub fn has_pending(&self) -> bool {
        self.pending.iter().any(|p| p.units() > 0)
    }

    pub fn output_file(&self) -> Option<PathBuf> {
        self.spool.path().map(|p| p.to_path_buf())
    }

    pub fn log_failure(&self) -> Option<&str> {
        self.spool.failure()
    }

    /// Whether the log file reached its size cap.
    pub fn log_capped(&self) -> bool {
        self.spool.capped()
    }

    /// Keep a terminal screen of `rows` x `cols` (PTY sessions).
    pub fn enable_screen(&mut self, rows: u16, cols: u16) {
        self.screen = Some(super::screen::Screen::new(rows, cols));
    }

    pub fn resize_screen(&mut self, rows: u16, cols: u16) {
        if let Some(screen) = self.screen.as_mut() {
            screen.resize(rows, cols);
        }
    }

    /// A full-screen program holds the PTY's alternate screen.
    pub fn alternate_screen(&self) -> bool {
        self.screen
            .as_ref()
            .is_some_and(super::screen::Screen::alternate)
    }

    pub fn screen_view(&self) -> Option<super::screen::ScreenView> {
        self.screen.as_ref().map(super::screen::Screen::view)
    }

    /// Write the log file once the text passes `units`; with 0 the file is made at once, so a run
    /// handed to the background can name it before its first byte.
    pub fn set_spill_above(&mut self, units: Option<usize>) {
        self.spill_above = units;
        if units == Some(0) {
            self.spool.spill();
        }
    }

    pub fn set_max_log_bytes(&mut self, max: u64) {
        self.spool.set_max_file_bytes(max);
    }

    /// The log is kept after the host is gone (`keepLogs`), so its name does not tie it to the host.
    pub fn set_log_kept(&mut self, kept: bool) {
        self.spool.set_kept(kept);
    }

    pub fn cursor_key_mode(&self) -> CursorKeyMode {
        self.cursor_key_mode
    }

    /// Whether the program has bracketed paste mode on.
    pub fn bracketed_paste(&self) -> bool {
        self.bracketed_paste
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, pending: usize) -> OutputLimits {
        OutputLimits {
            max_output_chars: max,
            pending_max_output_chars: pending,
        }
    }

    #[test]
    fn interleaves_streams_in_arrival_order_and_drains_them_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCollector::new(limits(1000, 1000), dir.path().into(), false);
        c.ingest(Stream::Stdout, b"out1\n");
        c.ingest(Stream::Stderr, b"\x1b[31merr1\x1b[0m\n");
        c.ingest(Stream::Stdout, b"out2\n");
        assert_eq!(c.aggregated(), "out1\nerr1\nout2\n");
        assert_eq!(
            c.drain_pending(),
            ("out1\nout2\n".into(), "err1\n".into(), 0)
        );
        assert_eq!(c.drain_pending(), (String::new(), String::new(), 0));
        assert!(!c.truncated());
        assert!(c.output_file().is_none());
    }

    #[test]
    fn truncation_spills_the_raw_bytes_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCollector::new(limits(20, 8), dir.path().into(), false);
        for i in 0..10 {
            c.ingest(Stream::Stdout, format!("line{i}\n").as_bytes());
        }
        c.finish();
        assert!(c.truncated());
        assert!(c.pending_truncated());
        let text = c.aggregated();
        assert!(
            text.starts_with("line0\nline\n[... 40 chars omitted ...]"),
            "{text}"
        );
        assert!(text.contains("chars omitted"), "{text}");
        assert!(text.ends_with("line9\n"), "{text}");
        let raw = std::fs::read_to_string(c.output_file().unwrap()).unwrap();
        assert_eq!(raw.lines().count(), 10);
        let (out, _, _) = c.drain_pending();
        assert_eq!(out, "8\nline9\n");
    }

    #[test]
    fn a_log_threshold_of_zero_makes_the_file_before_any_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCollector::new(limits(1000, 1000), dir.path().into(), false);
        assert!(c.output_file().is_none());
        c.set_spill_above(Some(0));
        let path = c.output_file().expect("the file is named before output");
        assert!(path.exists());
        c.ingest(Stream::Stdout, b"first\n");
        c.finish();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first\n");
    }

    #[test]
    fn pty_cursor_mode_starts_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCollector::new(limits(100, 100), dir.path().into(), true);
        assert_eq!(c.cursor_key_mode(), CursorKeyMode::Unknown);
        let got = c.ingest(Stream::Stdout, b"\x1b[?1h\x1b[6n>");
        assert_eq!(got.cursor_queries, 1);
        assert_eq!(c.cursor_key_mode(), CursorKeyMode::Application);
        // Startup output without a toggle means normal mode.
        let mut plain = OutputCollector::new(limits(100, 100), dir.path().into(), true);
        plain.ingest(Stream::Stdout, b"$ ");
        assert_eq!(plain.cursor_key_mode(), CursorKeyMode::Normal);
    }

    /// Everything a reader sees of one stream fed in the given chunks.
    fn seen(chunks: &[&[u8]], max: usize, pending: usize) -> (String, String, usize, usize, bool) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = OutputCollector::new(limits(max, pending), dir.path().into(), false);
        for chunk in chunks {
            c.ingest(Stream::Stdout, chunk);
        }
        c.finish_stream(Stream::Stdout);
        let (out, _, _) = c.drain_pending();
        (
            c.aggregated(),
            out,
            c.total_chars(),
            c.omitted_chars(),
            c.truncated(),
        )
    }

    fn stream() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just(b"line of text".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\x08".to_vec()),
            Just(b"\x1b[1;31m".to_vec()),
            Just("é🎉".as_bytes().to_vec()),
            proptest::collection::vec(any::<u8>(), 1..4),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

        /// The aggregated text, the pending text, and the counts do not depend on where reads were cut,
        /// also when the caps cut the text.
        #[test]
        fn what_a_reader_sees_does_not_depend_on_the_reads(
            bytes in stream(),
            cuts in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 0..10),
            max in 8usize..200,
            pending in 4usize..100,
        ) {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            at.dedup();
            let mut chunks = Vec::new();
            let mut from = 0;
            for &to in &at {
                chunks.push(&bytes[from..to]);
                from = to;
            }
            chunks.push(&bytes[from..]);
            proptest::prop_assert_eq!(seen(&chunks, max, pending), seen(&[&bytes], max, pending));
        }
    }

    #[test]
    fn a_carriage_return_after_a_huge_line_shows_the_lines_before_it() {
        // Before, the tail trimmed by chunk timing: the lines before a 200k-char line were gone when a
        // later `\r` erased that line, though one read of the whole showed them.
        let long = "x".repeat(200_000);
        let whole = format!("first\nsecond\n{long}\rdone\n");
        let bytes = whole.as_bytes();
        let split: Vec<&[u8]> = bytes.chunks(4096).collect();
        let one = seen(&[bytes], 1000, 50);
        assert_eq!(one.1, "first\nsecond\ndone\n");
        assert_eq!(seen(&split, 1000, 50), one);
    }
}
