//! The network of a sandboxed run, allowed by domain: a proxy the run reaches as its only way out.
//!
//! It speaks HTTP (absolute-form requests), HTTPS `CONNECT` and SOCKS5 with domain names, and looks
//! into nothing it carries (no TLS interception). For each connection it decides on the host name the
//! command asked for: a `deny` pattern refuses, an `allow` pattern allows, and anything else is put to
//! the host's callback (or refused without one). It then resolves the name itself and refuses an
//! address the name was not allowed to reach: loopback only on the ports `allowLocalhost` names (a
//! name under `localhost` resolves to loopback, RFC 6761), never a private, link-local or otherwise
//! non-global address (a public name that resolves to one is rebinding). Every refusal is recorded in
//! the run's denial log with the host, port and method.
//!
//! The run gets here through its own network namespace, where the proxy's listening socket (made
//! inside it) is the only thing on its loopback: see `sandbox::child`.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::supervisor::{Denial, DenialLog};

/// Largest HTTP request head read before the request is refused.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client has to send its request, and a connection to the destination to be made.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

pub use super::DomainPolicy;

/// The policy's answer for one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny(String),
    /// No pattern decides: the host's callback does, or it is refused.
    Undecided,
}

impl DomainPolicy {
    /// Check the patterns: each is a host name, or `*.` and a domain (its subdomains, not itself).
    pub fn validate(&self) -> Result<(), String> {
        for p in self.allow.iter().chain(&self.deny) {
            let name = p.strip_prefix("*.").unwrap_or(p);
            let ok = !name.is_empty()
                && name.len() <= 253
                && name.split('.').all(|l| {
                    !l.is_empty()
                        && l.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
                });
            if !ok {
                return Err(format!(
                    "sandbox.network has the pattern {p:?}; patterns are host names such as \"example.com\" or \"*.example.com\" (its subdomains), or IP addresses"
                ));
            }
        }
        Ok(())
    }

    pub fn decide(&self, host: &str) -> Verdict {
        let host = normalize(host);
        if let Some(p) = self.deny.iter().find(|p| matches(p, &host)) {
            return Verdict::Deny(format!("{p} is denied"));
        }
        if self.allow.iter().any(|p| matches(p, &host)) {
            return Verdict::Allow;
        }
        Verdict::Undecided
    }
}

/// Bytes each way of a relayed connection per read: 256 KiB, not tokio's default 8 KiB, so a download
/// through the proxy costs a fraction of the wake-ups and system calls (bench/, 20 MiB over loopback:
/// 0.45x of a direct download with 8 KiB, 0.63-0.81x with 256 KiB).
const RELAY_BUFFER: usize = 256 * 1024;

/// Copy both ways between the command's connection and the origin until both ends are done.
async fn relay<A, B>(a: &mut A, b: &mut B) -> std::io::Result<(u64, u64)>
where
    A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + ?Sized,
    B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + ?Sized,
{
    tokio::io::copy_bidirectional_with_sizes(a, b, RELAY_BUFFER, RELAY_BUFFER).await
}

fn normalize(host: &str) -> String {
    host.trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// `pattern` covers `host`: the same name, or for `*.domain` a name under it.
fn matches(pattern: &str, host: &str) -> bool {
    let pattern = normalize(pattern);
    match pattern.strip_prefix("*.") {
        Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
        None => host == pattern,
    }
}

/// The host's answer for a host no pattern decides: `true` allows.
pub type Asker =
    Arc<dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

/// Which sandboxed process opened each connection to the proxy, by the client's port. Every TCP
/// connection of a run is made by its supervisor (see `supervisor::connect_for`), which notes the
/// caller's pid before the caller's `connect` returns: so before the client sends its request, and
/// before any refusal of it is recorded. A port with no note (or a note crowded out) reads as pid 0.
#[derive(Default)]
pub struct Clients(Mutex<HashMap<u16, u32>>);

/// Notes kept at most: a run making more connections than this starts over (the ports of the
/// connections still open are noted again as they are reused).
const MAX_CLIENTS: usize = 4096;

impl Clients {
    pub fn note(&self, port: u16, pid: u32) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_CLIENTS {
            map.clear();
        }
        map.insert(port, pid);
    }

    fn pid(&self, port: u16) -> u32 {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&port).copied().unwrap_or(0)
    }
}

/// One run's proxy: its policy, the host's callback, answers already given, where refusals go, and
/// who opened which connection.
pub struct Proxy {
    policy: DomainPolicy,
    asker: Option<Asker>,
    /// Hosts the callback decided, so one page's hundred requests ask once.
    answered: Mutex<HashMap<String, bool>>,
    log: Arc<DenialLog>,
    clients: Arc<Clients>,
}

impl Proxy {
    pub fn new(
        policy: DomainPolicy,
        asker: Option<Asker>,
        log: Arc<DenialLog>,
        clients: Arc<Clients>,
    ) -> Arc<Proxy> {
        Arc::new(Proxy {
            policy,
            asker,
            answered: Mutex::new(HashMap::new()),
            log,
            clients,
        })
    }

    /// Serve `listener` until it is closed or the task is dropped (the run's end).
    pub async fn serve(self: Arc<Proxy>, listener: TcpListener) {
        loop {
            let conn = match listener.accept().await {
                Ok((conn, _)) => conn,
                // Out of descriptors, or a client gone before it was taken: the next one may do.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EMFILE | libc::ENFILE | libc::ECONNABORTED | libc::EINTR)
                    ) =>
                {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                // Shut down at the run's end (or broken): stop.
                Err(_) => break,
            };
            let proxy = self.clone();
            tokio::spawn(async move {
                let _ = proxy.handle(conn).await;
            });
        }
    }

    async fn handle(&self, mut conn: TcpStream) -> std::io::Result<()> {
        let mut first = [0u8; 1];
        if conn.peek(&mut first).await? == 0 {
            return Ok(());
        }
        let client = conn.peer_addr()?.port();
        if first[0] == 5 {
            self.socks5(conn, client).await
        } else {
            self.http(&mut conn, client).await
        }
    }

    /// Whether `host:port` may be reached, and where: the addresses to connect to, or the refusal.
    async fn admit(
        &self,
        method: &str,
        host: &str,
        port: u16,
        client: u16,
    ) -> Result<Vec<SocketAddr>, String> {
        let name = normalize(host);
        let allowed = match self.policy.decide(&name) {
            Verdict::Allow => Ok(()),
            Verdict::Deny(why) => Err(why),
            Verdict::Undecided => self.ask(&name, port).await,
        };
        let result = match allowed {
            Ok(()) => self.resolve(&name, port).await,
            Err(why) => Err(why),
        };
        if let Err(why) = &result {
            self.log.record(Denial {
                operation: "network".into(),
                path: Some(format!("{name}:{port}")),
                detail: method.into(),
                rule: why.clone(),
                pid: self.clients.pid(client),
                count: 1,
            });
        }
        result
    }

    async fn ask(&self, host: &str, port: u16) -> Result<(), String> {
        let key = format!("{host}:{port}");
        let known = self
            .answered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        let yes = match (known, &self.asker) {
            (Some(answer), _) => answer,
            (None, None) => return Err("not in the allowed domains".into()),
            (None, Some(ask)) => {
                let answer = ask(host.to_string(), port).await;
                self.answered
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key, answer);
                answer
            }
        };
        if yes {
            Ok(())
        } else {
            Err("not in the allowed domains, and the host refused it".into())
        }
    }

    /// The addresses of `host` the run may reach on `port`.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let addrs: Vec<SocketAddr> = if host == "localhost" || host.ends_with(".localhost") {
            vec![SocketAddr::from(([127, 0, 0, 1], port))]
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            vec![SocketAddr::new(ip, port)]
        } else {
            match tokio::time::timeout(STEP_TIMEOUT, tokio::net::lookup_host((host, port))).await {
                Ok(Ok(a)) => a.collect(),
                Ok(Err(e)) => return Err(format!("{host} does not resolve: {e}")),
                Err(_) => return Err(format!("{host} did not resolve in time")),
            }
        };
        if addrs.is_empty() {
            return Err(format!("{host} has no address"));
        }
        for a in &addrs {
            let ip = a.ip();
            if ip.is_loopback() {
                if !self.policy.allow_localhost.contains(&port) {
                    return Err(format!(
                        "{host} is this machine (loopback), and port {port} is not in allowLocalhost"
                    ));
                }
            } else if !is_global(ip) {
                return Err(format!(
                    "{host} resolves to {ip}, an address inside a private network, which no domain rule opens"
                ));
            }
        }
        Ok(addrs)
    }

    async fn connect(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
        let mut last = None;
        for a in addrs {
            match tokio::time::timeout(STEP_TIMEOUT, TcpStream::connect(a)).await {
                Ok(Ok(s)) => return Ok(s),
                Ok(Err(e)) => last = Some(e),
                Err(_) => last = Some(std::io::ErrorKind::TimedOut.into()),
            }
        }
        Err(last.unwrap_or_else(|| std::io::ErrorKind::AddrNotAvailable.into()))
    }

    async fn http(&self, conn: &mut TcpStream, client: u16) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(4096);
        let head_len = loop {
            let mut chunk = [0u8; 4096];
            let n = tokio::time::timeout(STEP_TIMEOUT, conn.read(&mut chunk))
                .await
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            if buf.len() > MAX_HEAD {
                return reply(conn, 431, "the request head is too large").await;
            }
        };
        let mut headers = [httparse::EMPTY_HEADER; 128];
        let mut req = httparse::Request::new(&mut headers);
        if !matches!(
            req.parse(&buf[..head_len]),
            Ok(httparse::Status::Complete(_))
        ) {
            return reply(conn, 400, "not an HTTP proxy request").await;
        }
        let method = req.method.unwrap_or("").to_string();
        let target = req.path.unwrap_or("").to_string();
        if method.eq_ignore_ascii_case("CONNECT") {
            let Some((host, port)) = split_authority(&target, 443) else {
                return reply(conn, 400, "CONNECT needs host:port").await;
            };
            let addrs = match self.admit("CONNECT", &host, port, client).await {
                Ok(a) => a,
                Err(why) => return reply(conn, 403, &format!("{host}:{port}: {why}")).await,
            };
            let mut upstream = match Self::connect(&addrs).await {
                Ok(s) => s,
                Err(e) => return reply(conn, 502, &format!("{host}:{port}: {e}")).await,
            };
            conn.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
            // Bytes the client sent after the head (a TLS hello) go first.
            upstream.write_all(&buf[head_len..]).await?;
            relay(conn, &mut upstream).await?;
            return Ok(());
        }
        // Absolute form: http://host[:port]/path. HTTPS goes through CONNECT.
        let Some(rest) = target.strip_prefix("http://") else {
            return reply(
                conn,
                400,
                "a proxy request names its URL in full (http://host/path), or uses CONNECT",
            )
            .await;
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let Some((host, port)) = split_authority(authority, 80) else {
            return reply(conn, 400, "the URL has no host").await;
        };
        let addrs = match self.admit(&method, &host, port, client).await {
            Ok(a) => a,
            Err(why) => return reply(conn, 403, &format!("{host}:{port}: {why}")).await,
        };
        let mut upstream = match Self::connect(&addrs).await {
            Ok(s) => s,
            Err(e) => return reply(conn, 502, &format!("{host}:{port}: {e}")).await,
        };
        // The request as the origin expects it: origin-form, without the proxy's own headers, and
        // one request per connection: a next request on a kept-alive connection would reach this
        // origin unread (its name unchecked, its URL in proxy form), so the origin closes after it.
        let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        for h in req.headers.iter() {
            let name = h.name.to_ascii_lowercase();
            if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
                continue;
            }
            head.push_str(h.name);
            head.push_str(": ");
            head.push_str(&String::from_utf8_lossy(h.value));
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        upstream.write_all(head.as_bytes()).await?;
        upstream.write_all(&buf[head_len..]).await?;
        relay(conn, &mut upstream).await?;
        Ok(())
    }

    async fn socks5(&self, mut conn: TcpStream, client: u16) -> std::io::Result<()> {
        let mut greeting = [0u8; 2];
        conn.read_exact(&mut greeting).await?;
        let mut methods = vec![0u8; greeting[1] as usize];
        conn.read_exact(&mut methods).await?;
        if !methods.contains(&0) {
            return conn.write_all(&[5, 0xff]).await;
        }
        conn.write_all(&[5, 0]).await?;
        let mut req = [0u8; 4];
        conn.read_exact(&mut req).await?;
        let host = match req[3] {
            1 => {
                let mut a = [0u8; 4];
                conn.read_exact(&mut a).await?;
                IpAddr::from(a).to_string()
            }
            4 => {
                let mut a = [0u8; 16];
                conn.read_exact(&mut a).await?;
                IpAddr::from(a).to_string()
            }
            3 => {
                let mut len = [0u8; 1];
                conn.read_exact(&mut len).await?;
                let mut name = vec![0u8; len[0] as usize];
                conn.read_exact(&mut name).await?;
                String::from_utf8_lossy(&name).into_owned()
            }
            _ => return conn.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0]).await,
        };
        let mut port = [0u8; 2];
        conn.read_exact(&mut port).await?;
        let port = u16::from_be_bytes(port);
        if req[1] != 1 {
            // BIND and UDP ASSOCIATE: only outgoing TCP connections go through.
            let what = if req[1] == 3 {
                "SOCKS5 UDP"
            } else {
                "SOCKS5 BIND"
            };
            self.log.record(Denial {
                operation: "network".into(),
                path: Some(format!("{host}:{port}")),
                detail: what.into(),
                rule: "only TCP connections go through the proxy".into(),
                pid: self.clients.pid(client),
                count: 1,
            });
            return conn.write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0]).await;
        }
        let addrs = match self.admit("SOCKS5 CONNECT", &host, port, client).await {
            Ok(a) => a,
            // "connection not allowed by ruleset"
            Err(_) => return conn.write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]).await,
        };
        let mut upstream = match Self::connect(&addrs).await {
            Ok(s) => s,
            Err(_) => return conn.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]).await,
        };
        conn.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        relay(&mut conn, &mut upstream).await?;
        Ok(())
    }
}

/// `host:port`, `[v6]:port` or a bare host with `default` as its port.
fn split_authority(authority: &str, default: u16) -> Option<(String, u16)> {
    let authority = authority.rsplit('@').next()?;
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, rest) = v6.split_once(']')?;
        let port = match rest.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default,
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), default),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

/// An address on the public internet: not loopback, private, link-local, shared, documentation,
/// unspecified, broadcast or multicast, nor one of the special-purpose ranges. IPv6 is judged the
/// other way round, since its special ranges keep growing and several carry an IPv4 address inside
/// (NAT64, 6to4, Teredo, IPv4-compatible: `64:ff9b::a9fe:a9fe` reaches 169.254.169.254 through a
/// NAT64 gateway): only global unicast (`2000::/3`) outside the special blocks is global, and an
/// IPv4 address is taken out only where its meaning is fixed (mapped, or the well-known NAT64
/// prefix that DNS64 hands IPv6-only hosts) and judged as IPv4.
fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || (o[0] == 198 && (o[1] & 0xfe) == 18)
                // IETF protocol assignments (192.0.0.0/24) and the 6to4 relays (192.88.99.0/24).
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 192 && o[1] == 88 && o[2] == 99)
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_global(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let o = v6.octets();
                return is_global(IpAddr::V4(std::net::Ipv4Addr::new(
                    o[12], o[13], o[14], o[15],
                )));
            }
            // Global unicast, less: the IETF protocol block (Teredo, benchmarking, ORCHID:
            // 2001::/23), documentation (2001:db8::/32, 3fff::/20) and 6to4 (2002::/16).
            (s[0] & 0xe000) == 0x2000
                && !(s[0] == 0x2001 && s[1] < 0x0200)
                && !(s[0] == 0x2001 && s[1] == 0x0db8)
                && s[0] != 0x2002
                && !(s[0] == 0x3fff && s[1] < 0x1000)
        }
    }
}

/// A refusal the client reads: an HTTP status with the reason, then the connection ends.
async fn reply(conn: &mut TcpStream, status: u16, why: &str) -> std::io::Result<()> {
    let text = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let body = format!("agent-exec sandbox: {why}\n");
    let msg = format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(msg.as_bytes()).await?;
    conn.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_and_subdomains_and_deny_wins() {
        let p = DomainPolicy {
            allow: vec!["example.com".into(), "*.github.com".into()],
            deny: vec!["evil.github.com".into()],
            allow_localhost: vec![],
            ..Default::default()
        };
        assert_eq!(p.decide("example.com"), Verdict::Allow);
        assert_eq!(p.decide("EXAMPLE.com."), Verdict::Allow);
        assert_eq!(p.decide("api.github.com"), Verdict::Allow);
        assert_eq!(p.decide("github.com"), Verdict::Undecided);
        assert_eq!(p.decide("sub.example.com"), Verdict::Undecided);
        assert_eq!(p.decide("notgithub.com"), Verdict::Undecided);
        assert!(matches!(p.decide("evil.github.com"), Verdict::Deny(_)));
        assert!(DomainPolicy {
            allow: vec!["*".into()],
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(DomainPolicy {
            allow: vec!["a b.com".into()],
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(p.validate().is_ok());
    }

    #[test]
    fn authorities_and_address_classes() {
        assert_eq!(
            split_authority("a.com:8443", 443),
            Some(("a.com".into(), 8443))
        );
        assert_eq!(split_authority("a.com", 80), Some(("a.com".into(), 80)));
        assert_eq!(split_authority("[::1]:22", 80), Some(("::1".into(), 22)));
        assert_eq!(
            split_authority("u:p@a.com:1", 80),
            Some(("a.com".into(), 1))
        );
        assert_eq!(split_authority(":80", 80), None);
        for ip in [
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.5",
            "169.254.169.254",
            "127.0.0.1",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
            // Outside round, 2026-11-27: IPv4 inside IPv6, and the special ranges.
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::a00:1",
            "64:ff9b:1::a00:1",
            "::a9fe:a9fe",
            "::127.0.0.1",
            "2002:7f00:1::1",
            "2001::1",
            "2001:0:4136:e378::1",
            "2001:2::1",
            "2001:10::1",
            "2001:db8::1",
            "3fff::1",
            "100::1",
            "fec0::1",
            "ff02::1",
            "::",
            "192.0.0.8",
            "192.0.0.170",
            "192.88.99.1",
            "198.18.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!is_global(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "1.1.1.1",
            "140.82.112.3",
            "2606:4700::1111",
            "2a00:1450:4001::1",
            "64:ff9b::8c52:7003",
            "::ffff:1.1.1.1",
            "2001:4860:4860::8888",
        ] {
            assert!(is_global(ip.parse().unwrap()), "{ip}");
        }
    }

    /// A loopback origin server that answers every request with `body` and records the request line.
    async fn origin(body: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let n = c.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).to_string();
                    s.lock()
                        .unwrap()
                        .push(head.lines().next().unwrap_or("").to_string());
                    let msg = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = c.write_all(msg.as_bytes()).await;
                });
            }
        });
        (port, seen)
    }

    async fn proxy_with(policy: DomainPolicy, asker: Option<Asker>) -> (u16, Arc<DenialLog>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let log = Arc::new(DenialLog::default());
        tokio::spawn(Proxy::new(policy, asker, log.clone(), Arc::default()).serve(l));
        (port, log)
    }

    async fn roundtrip(proxy: u16, request: String) -> String {
        let mut c = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        c.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn http_connect_and_socks5_reach_allowed_names_only() {
        let (origin_port, seen) = origin("hello").await;
        let policy = DomainPolicy {
            allow: vec!["app.localhost".into(), "*.test.localhost".into()],
            deny: vec![],
            allow_localhost: vec![origin_port],
            ..Default::default()
        };
        let (proxy, log) = proxy_with(policy, None).await;
        // HTTP absolute form: forwarded in origin form, the proxy's headers dropped.
        let ok = roundtrip(proxy, format!("GET http://app.localhost:{origin_port}/x?y=1 HTTP/1.1\r\nHost: app.localhost\r\nProxy-Connection: keep-alive\r\n\r\n")).await;
        assert!(ok.ends_with("hello"), "{ok}");
        assert_eq!(seen.lock().unwrap().last().unwrap(), "GET /x?y=1 HTTP/1.1");
        // Two requests on one kept-alive connection: the first is answered, and the connection ends
        // (the second never reaches the origin unchecked).
        let both = roundtrip(proxy, format!("GET http://app.localhost:{origin_port}/one HTTP/1.1\r\nConnection: keep-alive\r\n\r\nGET http://evil.localhost:{origin_port}/two HTTP/1.1\r\n\r\n")).await;
        assert!(both.ends_with("hello") && !both.contains("/two"), "{both}");
        assert!(!seen.lock().unwrap().iter().any(|l| l.contains("/two")));
        // A name not allowed: 403 with the reason, recorded.
        let no = roundtrip(
            proxy,
            format!("GET http://other.localhost:{origin_port}/ HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(no.starts_with("HTTP/1.1 403"), "{no}");
        // CONNECT to an allowed name: a tunnel.
        let mut c = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        c.write_all(format!("CONNECT a.test.localhost:{origin_port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut status = [0u8; 39];
        c.read_exact(&mut status).await.unwrap();
        assert_eq!(&status[..], b"HTTP/1.1 200 Connection Established\r\n\r\n");
        c.write_all(b"GET /tunnel HTTP/1.1\r\n\r\n").await.unwrap();
        let mut rest = String::new();
        c.read_to_string(&mut rest).await.unwrap();
        assert!(rest.ends_with("hello"));
        // An allowed name on a loopback port not in allowLocalhost: refused (the rebinding rule).
        let closed = roundtrip(proxy, "CONNECT app.localhost:1 HTTP/1.1\r\n\r\n".into()).await;
        assert!(
            closed.contains("403") && closed.contains("allowLocalhost"),
            "{closed}"
        );
        // SOCKS5 with a domain name.
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        s.write_all(&[5, 1, 0]).await.unwrap();
        let mut m = [0u8; 2];
        s.read_exact(&mut m).await.unwrap();
        assert_eq!(m, [5, 0]);
        let name = b"app.localhost";
        let mut req = vec![5, 1, 0, 3, name.len() as u8];
        req.extend_from_slice(name);
        req.extend_from_slice(&origin_port.to_be_bytes());
        s.write_all(&req).await.unwrap();
        let mut r = [0u8; 10];
        s.read_exact(&mut r).await.unwrap();
        assert_eq!(r[1], 0, "SOCKS5 connect refused");
        // SOCKS5 UDP is refused and recorded.
        let mut u = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        u.write_all(&[5, 1, 0]).await.unwrap();
        u.read_exact(&mut m).await.unwrap();
        u.write_all(&[5, 3, 0, 1, 127, 0, 0, 1, 0, 53])
            .await
            .unwrap();
        u.read_exact(&mut r).await.unwrap();
        assert_eq!(r[1], 7);
        let (denials, _) = log.snapshot();
        let rules: Vec<String> = denials
            .iter()
            .map(|d| {
                format!(
                    "{} {} {}",
                    d.detail,
                    d.path.clone().unwrap_or_default(),
                    d.rule
                )
            })
            .collect();
        assert!(
            rules.iter().any(|r| r.starts_with(&format!(
                "GET other.localhost:{origin_port} not in the allowed domains"
            ))),
            "{rules:?}"
        );
        assert!(
            rules.iter().any(|r| r.starts_with("SOCKS5 UDP")),
            "{rules:?}"
        );
        assert!(
            rules
                .iter()
                .any(|r| r.starts_with("CONNECT app.localhost:1")),
            "{rules:?}"
        );
    }

    #[tokio::test]
    async fn an_undecided_name_is_asked_once_and_the_answer_kept() {
        let (origin_port, _) = origin("asked").await;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let a = asked.clone();
        let asker: Asker = Arc::new(move |host, port| {
            a.lock().unwrap().push(format!("{host}:{port}"));
            let yes = host == "yes.localhost";
            Box::pin(async move { yes })
        });
        let policy = DomainPolicy {
            allow_localhost: vec![origin_port],
            ..Default::default()
        };
        let (proxy, _) = proxy_with(policy, Some(asker)).await;
        for _ in 0..3 {
            let r = roundtrip(
                proxy,
                format!("GET http://yes.localhost:{origin_port}/ HTTP/1.1\r\n\r\n"),
            )
            .await;
            assert!(r.ends_with("asked"), "{r}");
        }
        let r = roundtrip(
            proxy,
            format!("GET http://no.localhost:{origin_port}/ HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(
            r.starts_with("HTTP/1.1 403") && r.contains("the host refused it"),
            "{r}"
        );
        assert_eq!(
            *asked.lock().unwrap(),
            vec![
                format!("yes.localhost:{origin_port}"),
                format!("no.localhost:{origin_port}")
            ]
        );
    }
}
