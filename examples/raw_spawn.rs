//! The floor for `exec` latency: a plain Rust loop that spawns `<shell> -c true` with piped output and
//! waits. `raw_spawn [runs] [shell]`; prints one JSON object: {"runs": N, "medianMs": .., "p99Ms": ..}.

use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let shell = std::env::args().nth(2).unwrap_or_else(|| "sh".to_string());
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let out = Command::new(&shell)
            .args(["-c", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("spawn sh");
        assert!(out.status.success());
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{{\"runs\": {runs}, \"medianMs\": {:.4}, \"p99Ms\": {:.4}}}",
        pick(0.5),
        pick(0.99)
    );
}
