//! The clock, the random ids and the background refills every layer uses, in one place.

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Run `job` off the caller's path unless the previous one is still at work (`running`, cleared once
/// `job` returns): on the async runtime's blocking pool where there is one, else right here. For the
/// stocks of things made ahead of the runs that take them.
pub fn refill_in_background(
    running: &'static std::sync::atomic::AtomicBool,
    job: impl FnOnce() + Send + 'static,
) {
    use std::sync::atomic::Ordering;
    if running.swap(true, Ordering::AcqRel) {
        return;
    }
    let run = move || {
        job();
        running.store(false, Ordering::Release);
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(run)),
        Err(_) => run(),
    }
}

/// `n` random bytes from the operating system's CSPRNG. Ids only need to be distinct, not secret: if
/// the OS refuses, the clock, a counter and the pid stand in.
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if getrandom::fill(&mut b).is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let seed = nanos ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32);
        let fill = seed
            .to_le_bytes()
            .into_iter()
            .chain(u64::from(std::process::id()).to_le_bytes())
            .cycle();
        for (byte, from) in b.iter_mut().zip(fill) {
            *byte = from;
        }
    }
    b
}

/// A random (version 4) UUID, lowercase.
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A uniformly random index below `n` (n > 0).
pub fn random_below(n: usize) -> usize {
    (u64::from_le_bytes(random_bytes()) % n as u64) as usize
}

/// The home directory of the account this process runs as (its passwd entry), read once: it does
/// not change while the process lives, and the lookup reads /etc/passwd (or asks NSS).
#[cfg(unix)]
pub fn account_home() -> Option<std::path::PathBuf> {
    static HOME: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|u| u.dir)
    })
    .clone()
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_version_4_and_distinct() {
        let (a, b) = (super::uuid_v4(), super::uuid_v4());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert!(a
            .chars()
            .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn random_indexes_stay_below_the_bound_and_vary() {
        let seen: std::collections::BTreeSet<usize> =
            (0..200).map(|_| super::random_below(7)).collect();
        assert!(seen.iter().all(|&i| i < 7));
        assert!(seen.len() > 1);
    }
}
