//! OpenClaw's approval modes and how they combine: per-call values may only tighten.

use serde::{Deserialize, Serialize};

/// What may run at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    /// Nothing runs.
    Deny,
    /// Only allowlisted executables and safe-bin uses run (see `Ask`).
    Allowlist,
    /// Everything runs.
    Full,
}

/// When a person is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Ask {
    Off,
    OnMiss,
    Always,
}

impl Security {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "deny" => Some(Security::Deny),
            "allowlist" => Some(Security::Allowlist),
            "full" => Some(Security::Full),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Security::Deny => "deny",
            Security::Allowlist => "allowlist",
            Security::Full => "full",
        }
    }
}

impl Ask {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" => Some(Ask::Off),
            "on-miss" => Some(Ask::OnMiss),
            "always" => Some(Ask::Always),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Ask::Off => "off",
            Ask::OnMiss => "on-miss",
            Ask::Always => "always",
        }
    }
}

/// The stricter security: deny < allowlist < full.
pub fn min_security(a: Security, b: Security) -> Security {
    a.min(b)
}

/// The more cautious ask mode: off < on-miss < always.
pub fn max_ask(a: Ask, b: Ask) -> Ask {
    a.max(b)
}

/// OpenClaw B's `requiresExecApproval`.
pub fn requires_approval(
    ask: Ask,
    security: Security,
    analysis_ok: bool,
    allowlist_satisfied: bool,
) -> bool {
    ask == Ask::Always
        || (ask == Ask::OnMiss
            && security == Security::Allowlist
            && (!analysis_ok || !allowlist_satisfied))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tightening() {
        assert_eq!(
            min_security(Security::Full, Security::Allowlist),
            Security::Allowlist
        );
        assert_eq!(min_security(Security::Deny, Security::Full), Security::Deny);
        assert_eq!(max_ask(Ask::Off, Ask::OnMiss), Ask::OnMiss);
        assert_eq!(max_ask(Ask::Always, Ask::Off), Ask::Always);
    }

    #[test]
    fn requires_approval_truth_table() {
        use Ask::*;
        use Security::*;
        for ask in [Off, OnMiss, Always] {
            for security in [Deny, Allowlist, Full] {
                for ok in [false, true] {
                    for satisfied in [false, true] {
                        let expected = ask == Always
                            || (ask == OnMiss && security == Allowlist && !(ok && satisfied));
                        assert_eq!(
                            requires_approval(ask, security, ok, satisfied),
                            expected,
                            "{ask:?} {security:?} {ok} {satisfied}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn parse_names() {
        assert_eq!(Security::parse(" Allowlist "), Some(Security::Allowlist));
        assert_eq!(Ask::parse("on-miss"), Some(Ask::OnMiss));
        assert_eq!(Ask::parse("sometimes"), None);
    }
}
