//! OpenClaw B's key language for `sendKeys`: named keys, `C-`/`M-`/`S-` modifiers, `^X`, hex bytes,
//! literal text, xterm modifier codes, keypad, F1 to F12, and the cursor key mode of the application.

use crate::output::sanitize::CursorKeyMode;

/// What to send and what could not be understood.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Encoded {
    pub data: Vec<u8>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Mods {
    ctrl: bool,
    alt: bool,
    shift: bool,
}

impl Mods {
    fn any(self) -> bool {
        self.ctrl || self.alt || self.shift
    }

    /// xterm's modifier parameter: 1 + shift + 2*alt + 4*ctrl.
    fn xterm(self) -> u8 {
        1 + self.shift as u8 + 2 * self.alt as u8 + 4 * self.ctrl as u8
    }
}

/// Keys whose sequences take an xterm modifier parameter.
const MODIFIABLE: [&str; 17] = [
    "up", "down", "left", "right", "home", "end", "pageup", "pgup", "ppage", "pagedown", "pgdn",
    "npage", "insert", "ic", "delete", "del", "dc",
];

/// Keys that use SS3 (`ESC O x`) instead of CSI when the application enabled cursor key mode.
const CURSOR_KEYS: [&str; 6] = ["up", "down", "left", "right", "home", "end"];

fn named(name: &str) -> Option<&'static str> {
    Some(match name {
        "enter" | "return" => "\r",
        "tab" => "\t",
        "escape" | "esc" => "\x1b",
        "space" => " ",
        "bspace" | "backspace" => "\x7f",
        "up" => "\x1b[A",
        "down" => "\x1b[B",
        "right" => "\x1b[C",
        "left" => "\x1b[D",
        "home" => "\x1b[1~",
        "end" => "\x1b[4~",
        "pageup" | "pgup" | "ppage" => "\x1b[5~",
        "pagedown" | "pgdn" | "npage" => "\x1b[6~",
        "insert" | "ic" => "\x1b[2~",
        "delete" | "del" | "dc" => "\x1b[3~",
        "btab" => "\x1b[Z",
        "f1" => "\x1bOP",
        "f2" => "\x1bOQ",
        "f3" => "\x1bOR",
        "f4" => "\x1bOS",
        "f5" => "\x1b[15~",
        "f6" => "\x1b[17~",
        "f7" => "\x1b[18~",
        "f8" => "\x1b[19~",
        "f9" => "\x1b[20~",
        "f10" => "\x1b[21~",
        "f11" => "\x1b[23~",
        "f12" => "\x1b[24~",
        "kp/" => "\x1bOo",
        "kp*" => "\x1bOj",
        "kp-" => "\x1bOm",
        "kp+" => "\x1bOk",
        "kp7" => "\x1bOw",
        "kp8" => "\x1bOx",
        "kp9" => "\x1bOy",
        "kp4" => "\x1bOt",
        "kp5" => "\x1bOu",
        "kp6" => "\x1bOv",
        "kp1" => "\x1bOq",
        "kp2" => "\x1bOr",
        "kp3" => "\x1bOs",
        "kp0" => "\x1bOp",
        "kp." => "\x1bOn",
        "kpenter" => "\x1bOM",
        _ => return None,
    })
}

fn ss3(name: &str) -> Option<&'static str> {
    Some(match name {
        "up" => "\x1bOA",
        "down" => "\x1bOB",
        "right" => "\x1bOC",
        "left" => "\x1bOD",
        "home" => "\x1bOH",
        "end" => "\x1bOF",
        _ => return None,
    })
}

/// Control character for `c`, as `^c` and `C-c` mean it.
fn ctrl_char(c: char) -> Option<u8> {
    let up = c.to_ascii_uppercase();
    if up == '?' {
        return Some(0x7f);
    }
    let code = up as u32;
    (64..=95).contains(&code).then_some((code & 0x1f) as u8)
}

/// Split `C-M-x` into modifiers and the base `x`. The common spellings are accepted too: `ctrl-`,
/// `ctrl+`, `control-`, `alt-`, `meta-`, `shift-` (any case, `-` or `+`), and `C+x`.
fn split_mods(token: &str) -> (Mods, &str) {
    let mut mods = Mods::default();
    let mut rest = token;
    loop {
        let lower = rest.to_ascii_lowercase();
        let long = [
            ("control", 0),
            ("ctrl", 0),
            ("meta", 1),
            ("alt", 1),
            ("shift", 2),
        ]
        .iter()
        .find_map(|(word, which)| {
            let after = lower.strip_prefix(word)?;
            let sep = after.chars().next()?;
            (matches!(sep, '-' | '+') && after.len() > 1).then_some((word.len() + 1, *which))
        });
        let (skip, which) = match long {
            Some(found) => found,
            None if rest.len() > 2 && matches!(rest.as_bytes()[1], b'-' | b'+') => {
                match rest.as_bytes()[0].to_ascii_lowercase() {
                    b'c' => (2, 0),
                    b'm' => (2, 1),
                    b's' => (2, 2),
                    _ => break,
                }
            }
            None => break,
        };
        match which {
            0 => mods.ctrl = true,
            1 => mods.alt = true,
            _ => mods.shift = true,
        }
        rest = &rest[skip..];
    }
    (mods, rest)
}

/// A token that is written like a key but names none: a modifier with no key (`M-`, `ctrl-`), or
/// a function or keypad key that does not exist (`f99`, `kpx`).
fn looks_like_a_key(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    let dangling = [
        "c-", "m-", "s-", "c+", "m+", "s+", "ctrl-", "ctrl+", "control-", "alt-", "alt+", "meta-",
        "shift-", "shift+",
    ];
    if dangling
        .iter()
        .any(|d| lower == *d || lower.ends_with(&format!("-{d}")))
    {
        return true;
    }
    let function = lower
        .strip_prefix('f')
        .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit()));
    function || (lower.starts_with("kp") && lower.len() <= 8 && !lower.contains(' '))
}

/// The accepted spellings, for the refusal of an unknown one.
pub const KEY_HELP: &str = "Accepted: enter, tab, escape, space, backspace, up, down, left, right, home, end, pageup, pagedown, insert, delete, btab, f1-f12, kp0-kp9, kp/, kp*, kp-, kp+, kp., kpenter; a single character; ^X; and modifiers C- (also ctrl-, Ctrl+), M- (alt-, meta-), S- (shift-) before any of these, e.g. C-c, ctrl-c, M-x, S-tab. Other text without modifiers is typed as is; use literal for text.";

/// Whether a token is an unmodified cursor key, whose encoding depends on the cursor key mode.
pub fn is_bare_cursor_key(token: &str) -> bool {
    let (mods, base) = split_mods(token.trim());
    !mods.any() && CURSOR_KEYS.contains(&base.to_ascii_lowercase().as_str())
}

fn encode_token(token: &str, mode: CursorKeyMode) -> Result<Vec<u8>, String> {
    encode_known(token, mode).ok_or_else(|| format!("Unknown key \"{}\". {KEY_HELP}", token.trim()))
}

/// The bytes of a key token, or `None` for a name that is no key.
fn encode_known(token: &str, mode: CursorKeyMode) -> Option<Vec<u8>> {
    let token = token.trim();
    if token.is_empty() {
        return Some(Vec::new());
    }
    let chars: Vec<char> = token.chars().collect();
    if chars.len() == 2 && chars[0] == '^' {
        if let Some(b) = ctrl_char(chars[1]) {
            return Some(vec![b]);
        }
    }
    let (mods, base) = split_mods(token);
    let lower = base.to_ascii_lowercase();
    if mods.shift && lower == "tab" {
        return Some(b"\x1b[Z".to_vec());
    }
    if let Some(seq) = named(&lower) {
        if MODIFIABLE.contains(&lower.as_str()) {
            if mods.any() {
                let m = mods.xterm();
                let body = &seq[2..];
                return Some(if let Some(num) = body.strip_suffix('~') {
                    format!("\x1b[{num};{m}~").into_bytes()
                } else {
                    format!("\x1b[1;{m}{body}").into_bytes()
                });
            }
            if mode == CursorKeyMode::Application {
                if let Some(s) = ss3(&lower) {
                    return Some(s.as_bytes().to_vec());
                }
            }
            return Some(seq.as_bytes().to_vec());
        }
        let mut out = Vec::new();
        if mods.alt {
            out.push(0x1b);
        }
        out.extend_from_slice(seq.as_bytes());
        return Some(out);
    }
    let base_chars: Vec<char> = base.chars().collect();
    if base_chars.len() == 1 {
        let mut c = base_chars[0];
        if mods.shift && c.is_ascii_lowercase() {
            c = c.to_ascii_uppercase();
        }
        let mut out = Vec::new();
        if mods.alt {
            out.push(0x1b);
        }
        match (mods.ctrl, ctrl_char(c)) {
            (true, Some(b)) => out.push(b),
            _ => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        return Some(out);
    }
    // B types other words as they are; with a modifier, or spelled like a key, it is a mistake.
    if mods.any() || looks_like_a_key(token) {
        return None;
    }
    Some(token.as_bytes().to_vec())
}

fn parse_hex(raw: &str) -> Option<u8> {
    let t = raw.trim().to_ascii_lowercase();
    let digits = t.strip_prefix("0x").unwrap_or(&t);
    if digits.is_empty() || digits.len() > 2 {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// One step of a key sequence, sent in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyItem {
    /// A key token (`enter`, `C-c`, `^X`, a word typed as is).
    Key(String),
    /// Text typed as is.
    Literal(String),
    /// One byte in hex (`1b`, `0x1b`).
    Hex(String),
}

/// OpenClaw's order for its three fields: `literal`, then each `hex` byte, then each key token.
pub fn openclaw_order(keys: &[String], hex: &[String], literal: Option<&str>) -> Vec<KeyItem> {
    literal
        .map(|l| KeyItem::Literal(l.to_string()))
        .into_iter()
        .chain(hex.iter().map(|h| KeyItem::Hex(h.clone())))
        .chain(keys.iter().map(|k| KeyItem::Key(k.clone())))
        .collect()
}

/// Encode the items in order. An unknown key name or a bad hex byte refuses the whole sequence, so
/// nothing half-typed is sent.
pub fn encode_items(items: &[KeyItem], mode: CursorKeyMode) -> Result<Encoded, String> {
    let mut out = Encoded::default();
    for item in items {
        match item {
            KeyItem::Literal(l) => out.data.extend_from_slice(l.as_bytes()),
            KeyItem::Hex(h) => match parse_hex(h) {
                Some(b) => out.data.push(b),
                None => {
                    return Err(format!(
                        "Invalid hex byte \"{h}\": give each byte as one or two hex digits, such as \"1b\" or \"0x1b\"."
                    ))
                }
            },
            KeyItem::Key(k) => out.data.extend(encode_token(k, mode)?),
        }
    }
    Ok(out)
}

/// `literal`, then each `hex` byte, then each key token (OpenClaw's order).
pub fn encode_key_sequence(
    keys: &[String],
    hex: &[String],
    literal: Option<&str>,
    mode: CursorKeyMode,
) -> Result<Encoded, String> {
    encode_items(&openclaw_order(keys, hex, literal), mode)
}

/// `ESC[200~ text ESC[201~` unless `bracketed` is false.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    if bracketed {
        format!("\x1b[200~{text}\x1b[201~").into_bytes()
    } else {
        text.as_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CursorKeyMode::{Application, Normal};

    fn enc(key: &str, mode: CursorKeyMode) -> Vec<u8> {
        let e = encode_key_sequence(&[key.to_string()], &[], None, mode)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(e.warnings.is_empty(), "{key}: {:?}", e.warnings);
        e.data
    }

    #[test]
    fn common_spellings_of_modifiers_are_accepted() {
        for key in [
            "C-c",
            "c-c",
            "ctrl-c",
            "Ctrl+C",
            "CTRL-c",
            "control-c",
            "C+c",
            "^C",
        ] {
            assert_eq!(enc(key, Normal), b"\x03", "{key}");
        }
        assert_eq!(enc("alt-x", Normal), b"\x1bx");
        assert_eq!(enc("Meta+x", Normal), b"\x1bx");
        assert_eq!(enc("shift-tab", Normal), b"\x1b[Z");
        assert_eq!(enc("ctrl-alt-up", Normal), b"\x1b[1;7A");
        // Words that are no key name are typed as B types them.
        assert_eq!(enc("hello", Normal), b"hello");
    }

    #[test]
    fn unknown_names_and_bad_hex_are_refused_before_anything_is_sent() {
        for key in [
            "C-bogus",
            "ctrl-nope",
            "f99",
            "F13",
            "M-",
            "ctrl-",
            "kpx",
            "C-M-",
        ] {
            let e = encode_key_sequence(&["enter".into(), key.into()], &[], Some("typed"), Normal)
                .expect_err(key);
            assert!(
                e.starts_with(&format!("Unknown key \"{key}\". Accepted:")),
                "{e}"
            );
        }
        for hex in ["zz", "0x1ff", "", "123"] {
            let e = encode_key_sequence(&[], &[hex.into()], None, Normal).expect_err(hex);
            assert!(e.starts_with("Invalid hex byte"), "{e}");
        }
    }

    #[test]
    fn every_named_key() {
        let table: &[(&str, &[u8])] = &[
            ("enter", b"\r"),
            ("Return", b"\r"),
            ("tab", b"\t"),
            ("escape", b"\x1b"),
            ("Esc", b"\x1b"),
            ("space", b" "),
            ("bspace", b"\x7f"),
            ("backspace", b"\x7f"),
            ("up", b"\x1b[A"),
            ("down", b"\x1b[B"),
            ("right", b"\x1b[C"),
            ("left", b"\x1b[D"),
            ("home", b"\x1b[1~"),
            ("end", b"\x1b[4~"),
            ("pageup", b"\x1b[5~"),
            ("pgup", b"\x1b[5~"),
            ("ppage", b"\x1b[5~"),
            ("pagedown", b"\x1b[6~"),
            ("pgdn", b"\x1b[6~"),
            ("npage", b"\x1b[6~"),
            ("insert", b"\x1b[2~"),
            ("ic", b"\x1b[2~"),
            ("delete", b"\x1b[3~"),
            ("del", b"\x1b[3~"),
            ("dc", b"\x1b[3~"),
            ("btab", b"\x1b[Z"),
            ("f1", b"\x1bOP"),
            ("f2", b"\x1bOQ"),
            ("f3", b"\x1bOR"),
            ("f4", b"\x1bOS"),
            ("f5", b"\x1b[15~"),
            ("f6", b"\x1b[17~"),
            ("f7", b"\x1b[18~"),
            ("f8", b"\x1b[19~"),
            ("f9", b"\x1b[20~"),
            ("f10", b"\x1b[21~"),
            ("f11", b"\x1b[23~"),
            ("F12", b"\x1b[24~"),
            ("kp/", b"\x1bOo"),
            ("kp*", b"\x1bOj"),
            ("kp-", b"\x1bOm"),
            ("kp+", b"\x1bOk"),
            ("kp7", b"\x1bOw"),
            ("kp8", b"\x1bOx"),
            ("kp9", b"\x1bOy"),
            ("kp4", b"\x1bOt"),
            ("kp5", b"\x1bOu"),
            ("kp6", b"\x1bOv"),
            ("kp1", b"\x1bOq"),
            ("kp2", b"\x1bOr"),
            ("kp3", b"\x1bOs"),
            ("kp0", b"\x1bOp"),
            ("kp.", b"\x1bOn"),
            ("kpenter", b"\x1bOM"),
        ];
        for (key, bytes) in table {
            assert_eq!(enc(key, Normal), *bytes, "{key}");
        }
    }

    #[test]
    fn modifiers_on_modifiable_keys_use_xterm_codes() {
        let table: &[(&str, &[u8])] = &[
            ("C-right", b"\x1b[1;5C"),
            ("M-up", b"\x1b[1;3A"),
            ("S-down", b"\x1b[1;2B"),
            ("C-S-left", b"\x1b[1;6D"),
            ("C-M-S-home", b"\x1b[1;8~"),
            ("S-end", b"\x1b[4;2~"),
            ("C-pageup", b"\x1b[5;5~"),
            ("M-pgdn", b"\x1b[6;3~"),
            ("S-insert", b"\x1b[2;2~"),
            ("C-delete", b"\x1b[3;5~"),
        ];
        for (key, bytes) in table {
            assert_eq!(enc(key, Normal), *bytes, "{key}");
            assert_eq!(
                enc(key, Application),
                *bytes,
                "{key} keeps CSI when modified"
            );
        }
    }

    #[test]
    fn application_mode_uses_ss3_for_bare_cursor_keys() {
        let table: &[(&str, &[u8])] = &[
            ("up", b"\x1bOA"),
            ("down", b"\x1bOB"),
            ("right", b"\x1bOC"),
            ("left", b"\x1bOD"),
            ("home", b"\x1bOH"),
            ("end", b"\x1bOF"),
            ("pageup", b"\x1b[5~"),
        ];
        for (key, bytes) in table {
            assert_eq!(enc(key, Application), *bytes, "{key}");
        }
        assert!(is_bare_cursor_key("Up"));
        assert!(is_bare_cursor_key(" end "));
        assert!(!is_bare_cursor_key("C-up"));
        assert!(!is_bare_cursor_key("pageup"));
    }

    #[test]
    fn characters_carets_and_alt() {
        let table: &[(&str, &[u8])] = &[
            ("C-c", b"\x03"),
            ("c-C", b"\x03"),
            ("^C", b"\x03"),
            ("^c", b"\x03"),
            ("^?", b"\x7f"),
            ("^[", b"\x1b"),
            ("C-@", b"\x00"),
            ("M-x", b"\x1bx"),
            ("M-C-a", b"\x1b\x01"),
            ("S-a", b"A"),
            ("S-Tab", b"\x1b[Z"),
            ("M-enter", b"\x1b\r"),
            ("M-f1", b"\x1b\x1bOP"),
            ("x", b"x"),
            ("é", "é".as_bytes()),
            ("hello", b"hello"),
            ("", b""),
        ];
        for (key, bytes) in table {
            assert_eq!(enc(key, Normal), *bytes, "{key}");
        }
    }

    #[test]
    fn order_is_literal_then_hex_then_keys() {
        let e = encode_key_sequence(
            &["enter".into()],
            &["0x1b".into(), "41".into(), "ff".into()],
            Some("ls"),
            Normal,
        )
        .unwrap();
        assert_eq!(e.data, b"ls\x1bA\xff\r");
        assert!(e.warnings.is_empty());
    }

    #[test]
    fn an_ordered_sequence_is_sent_in_its_order() {
        let items = [
            KeyItem::Key("i".into()),
            KeyItem::Literal("text".into()),
            KeyItem::Hex("1b".into()),
            KeyItem::Key(":wq".into()),
            KeyItem::Key("enter".into()),
        ];
        assert_eq!(
            encode_items(&items, Normal).unwrap().data,
            b"itext\x1b:wq\r"
        );
    }

    #[test]
    fn paste() {
        assert_eq!(encode_paste("hi", true), b"\x1b[200~hi\x1b[201~");
        assert_eq!(encode_paste("hi", false), b"hi");
    }
}
