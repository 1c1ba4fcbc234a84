//! Human session ids in OpenClaw's slug form (`calm-harbor`), with its word lists and collision rules.

const ADJECTIVES: [&str; 42] = [
    "amber", "briny", "brisk", "calm", "clear", "cool", "crisp", "dawn", "delta", "ember", "faint",
    "fast", "fresh", "gentle", "glow", "good", "grand", "keen", "kind", "lucky", "marine",
    "mellow", "mild", "neat", "nimble", "nova", "oceanic", "plaid", "quick", "quiet", "rapid",
    "salty", "sharp", "swift", "tender", "tidal", "tidy", "tide", "vivid", "warm", "wild", "young",
];

const NOUNS: [&str; 54] = [
    "atlas",
    "basil",
    "bison",
    "bloom",
    "breeze",
    "canyon",
    "cedar",
    "claw",
    "cloud",
    "comet",
    "coral",
    "cove",
    "crest",
    "crustacean",
    "daisy",
    "dune",
    "ember",
    "falcon",
    "fjord",
    "forest",
    "glade",
    "gulf",
    "harbor",
    "haven",
    "kelp",
    "lagoon",
    "lobster",
    "meadow",
    "mist",
    "nudibranch",
    "nexus",
    "ocean",
    "orbit",
    "otter",
    "pine",
    "prairie",
    "reef",
    "ridge",
    "river",
    "rook",
    "sable",
    "sage",
    "seaslug",
    "shell",
    "shoal",
    "shore",
    "slug",
    "summit",
    "tidepool",
    "trail",
    "valley",
    "wharf",
    "willow",
    "zephyr",
];

fn pick(words: &[&'static str]) -> &'static str {
    words[crate::util::random_below(words.len())]
}

fn with_suffixes(base: String, taken: &dyn Fn(&str) -> bool) -> Option<String> {
    if !taken(&base) {
        return Some(base);
    }
    (2..=12)
        .map(|i| format!("{base}-{i}"))
        .find(|candidate| !taken(candidate))
}

/// A slug not in use: `adj-noun`, then `adj-noun-N`, then three words, then a random suffix.
pub fn new_session_id(taken: &dyn Fn(&str) -> bool) -> String {
    for _ in 0..12 {
        if let Some(id) = with_suffixes(format!("{}-{}", pick(&ADJECTIVES), pick(&NOUNS)), taken) {
            return id;
        }
    }
    for _ in 0..12 {
        let base = format!("{}-{}-{}", pick(&ADJECTIVES), pick(&NOUNS), pick(&NOUNS));
        if let Some(id) = with_suffixes(base, taken) {
            return id;
        }
    }
    const BASE36: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let tag: String = (0..3)
        .map(|_| BASE36[crate::util::random_below(36)] as char)
        .collect();
    let id = format!(
        "{}-{}-{}-{tag}",
        pick(&ADJECTIVES),
        pick(&NOUNS),
        pick(&NOUNS)
    );
    if !taken(&id) {
        return id;
    }
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{id}-{}", to_base36(millis))
}

fn to_base36(mut n: u128) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_adjective_noun_slugs() {
        let id = new_session_id(&|_| false);
        let (adj, noun) = id.split_once('-').unwrap();
        assert!(ADJECTIVES.contains(&adj), "{id}");
        assert!(NOUNS.contains(&noun), "{id}");
    }

    #[test]
    fn collisions_get_suffixes_then_longer_forms() {
        let mut seen = HashSet::new();
        for _ in 0..5000 {
            let id = new_session_id(&|c| seen.contains(c));
            assert!(seen.insert(id));
        }
        assert!(seen.iter().any(|id| id.ends_with("-2")));
        // Everything taken: still unique, through the fallback forms.
        let id = new_session_id(&|c| c.split('-').count() <= 4);
        assert!(id.split('-').count() >= 4, "{id}");
    }

    #[test]
    fn base36() {
        assert_eq!(to_base36(0), "0");
        assert_eq!(to_base36(36 * 36 + 35), "10z");
    }
}
