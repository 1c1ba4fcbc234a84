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

/// Split `C-M-x` into modifiers and the base `x`.
fn split_mods(token: &str) -> (Mods, &str) {
    let mut mods = Mods::default();
    let mut rest = token;
    while rest.len() > 2 && rest.as_bytes()[1] == b'-' {
        match rest.as_bytes()[0].to_ascii_lowercase() {
            b'c' => mods.ctrl = true,
            b'm' => mods.alt = true,
            b's' => mods.shift = true,
            _ => break,
        }
        rest = &rest[2..];
    }
    (mods, rest)
}

/// Whether a token is an unmodified cursor key, whose encoding depends on the cursor key mode.
pub fn is_bare_cursor_key(token: &str) -> bool {
    let (mods, base) = split_mods(token.trim());
    !mods.any() && CURSOR_KEYS.contains(&base.to_ascii_lowercase().as_str())
}

fn encode_token(token: &str, mode: CursorKeyMode, warnings: &mut Vec<String>) -> Vec<u8> {
    let token = token.trim();
    if token.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = token.chars().collect();
    if chars.len() == 2 && chars[0] == '^' {
        if let Some(b) = ctrl_char(chars[1]) {
            return vec![b];
        }
    }
    let (mods, base) = split_mods(token);
    let lower = base.to_ascii_lowercase();
    if mods.shift && lower == "tab" {
        return b"\x1b[Z".to_vec();
    }
    if let Some(seq) = named(&lower) {
        if MODIFIABLE.contains(&lower.as_str()) {
            if mods.any() {
                let m = mods.xterm();
                let body = &seq[2..];
                return if let Some(num) = body.strip_suffix('~') {
                    format!("\x1b[{num};{m}~").into_bytes()
                } else {
                    format!("\x1b[1;{m}{body}").into_bytes()
                };
            }
            if mode == CursorKeyMode::Application {
                if let Some(s) = ss3(&lower) {
                    return s.as_bytes().to_vec();
                }
            }
            return seq.as_bytes().to_vec();
        }
        let mut out = Vec::new();
        if mods.alt {
            out.push(0x1b);
        }
        out.extend_from_slice(seq.as_bytes());
        return out;
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
        return out;
    }
    if mods.any() {
        warnings.push(format!(
            "Unknown key \"{base}\" for modifiers; sending literal."
        ));
    }
    token.as_bytes().to_vec()
}

fn parse_hex(raw: &str) -> Option<u8> {
    let t = raw.trim().to_ascii_lowercase();
    let digits = t.strip_prefix("0x").unwrap_or(&t);
    if digits.is_empty() || digits.len() > 2 {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// Encode `literal`, then each `hex` byte, then each key token, in that order.
pub fn encode_key_sequence(
    keys: &[String],
    hex: &[String],
    literal: Option<&str>,
    mode: CursorKeyMode,
) -> Encoded {
    let mut out = Encoded::default();
    if let Some(l) = literal {
        out.data.extend_from_slice(l.as_bytes());
    }
    for h in hex {
        match parse_hex(h) {
            Some(b) => out.data.push(b),
            None => out.warnings.push(format!("Invalid hex byte: {h}")),
        }
    }
    for k in keys {
        let bytes = encode_token(k, mode, &mut out.warnings);
        out.data.extend(bytes);
    }
    out
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
        let e = encode_key_sequence(&[key.to_string()], &[], None, mode);
        assert!(e.warnings.is_empty(), "{key}: {:?}", e.warnings);
        e.data
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
    fn unknown_keys_with_modifiers_warn_and_send_literally() {
        let e = encode_key_sequence(&["C-foo".into()], &[], None, Normal);
        assert_eq!(e.data, b"C-foo");
        assert_eq!(
            e.warnings,
            vec!["Unknown key \"foo\" for modifiers; sending literal."]
        );
    }

    #[test]
    fn order_is_literal_then_hex_then_keys() {
        let e = encode_key_sequence(
            &["enter".into()],
            &["0x1b".into(), "41".into(), "zz".into(), "ff".into()],
            Some("ls"),
            Normal,
        );
        assert_eq!(e.data, b"ls\x1bA\xff\r");
        assert_eq!(e.warnings, vec!["Invalid hex byte: zz"]);
    }

    #[test]
    fn paste() {
        assert_eq!(encode_paste("hi", true), b"\x1b[200~hi\x1b[201~");
        assert_eq!(encode_paste("hi", false), b"hi");
    }
}
