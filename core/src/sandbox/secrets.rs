//! Variables a sandboxed run does not inherit: the agent's credentials. The threat model promises
//! that nothing of the agent's environment a command could misuse is readable from inside, and API
//! keys and tokens are what agents' environments hold. Names are judged, and values only for one
//! shape: a URL with a password in it (`DATABASE_URL=postgres://app:secret@db/x`, a proxy's
//! `http://user:pw@proxy:3128`), whatever its variable is called. The host passes one on by naming
//! it (`sandbox.passEnv`) or by giving it in `env` itself.

/// Parts of a name that mark a credential, matched case-insensitively anywhere in it.
const MARKS: [&str; 15] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDS",
    "COOKIE",
    "AUTH",
    "SESSION_ID",
    "JWT",
    "WEBHOOK",
    "PRIVATE",
    "CONNECTION_STRING",
];

/// Prefixes of whole families of credentials (cloud and forge accounts).
const PREFIXES: [&str; 11] = [
    "AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "GH_", "GITHUB_", "GITLAB_", "VAULT_",
    // Password managers' session keys (Bitwarden's BW_SESSION decrypts the vault; 1Password's
    // OP_SESSION_<account>) and payment accounts.
    "BW_", "OP_", "STRIPE_",
];

/// Suffixes that name a credential by convention.
const SUFFIXES: [&str; 6] = ["_PAT", "_PWD", "_DSN", "_PASS", "_PW", "_SK"];

/// Does `name` look like a credential's variable?
pub fn looks_like_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    MARKS.iter().any(|m| upper.contains(m))
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Does `value` hold a URL with credentials in it: a password (`scheme://user:password@host...`,
/// one with a `/` in it too) or a token as the user (`https://ghp_...@github.com`)? (A short user
/// name alone, `ssh://git@host`, is none.)
pub fn value_holds_credentials(value: &str) -> bool {
    // A keyword connection string (`host=db user=app password=...`, ODBC's `Pwd=...`).
    let lower = value.to_ascii_lowercase();
    let keyword = ["password=", "passwd=", "pwd="].iter().any(|k| {
        lower
            .match_indices(k)
            .any(|(i, _)| i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric())
    });
    keyword
        || value.match_indices("://").any(|(i, _)| {
            let rest = &value[i + 3..];
            let token = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
            token.find('@').is_some_and(|at| {
                let user_info = &token[..at];
                user_info.contains(':') || (user_info.len() >= 20 && !user_info.contains('/'))
            })
        })
}

/// Is the variable `name=value` a credential's?
pub fn is_secret(name: &str, value: &str) -> bool {
    looks_like_secret(name) || value_holds_credentials(value)
}

/// Is `name` kept although it looks like a credential (named in `passed`)?
pub fn passed_on(name: &str, passed: &[String]) -> bool {
    passed.iter().any(|p| p == name)
}

/// The names a run with `passed` drops: those of the inherited environment (when inherited) and the
/// model's that look like credentials, sorted and once each.
pub fn dropped_names(inherit: bool, model: &[(String, String)], passed: &[String]) -> Vec<String> {
    let mut vars: Vec<(String, String)> = model.to_vec();
    if inherit {
        vars.extend(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }));
    }
    let mut names: Vec<String> = vars
        .into_iter()
        .filter(|(n, v)| is_secret(n, v) && !passed_on(n, passed))
        .map(|(n, _)| n)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_a_password_are_credentials_whatever_their_name() {
        for value in [
            "postgres://app:s3cret@db.internal:5432/app",
            "redis://:hunter2@cache:6379/0",
            "mongodb+srv://u:p@cluster0.example.net/db?retryWrites=true",
            "http://user:pw@proxy:3128",
            "mongodb://u:p@h1,h2,h3/db",
            "see https://u:p@host",
            "postgres://u:pa/ss@h/db",
            "https://ghp_0123456789abcdefghij0123@github.com/org/repo.git",
            "host=db user=app password=secret dbname=x",
            "Server=x;Database=y;Uid=u;Pwd=secret;",
        ] {
            assert!(value_holds_credentials(value), "{value}");
            assert!(is_secret("DATABASE_URL", value), "{value}");
        }
        for value in [
            "postgres://app@db/app",
            "https://registry.npmjs.org/",
            "http://proxy:3128",
            "/usr/bin:/bin",
            "user:pw@host",
            "ssh://git@github.com/org/repo",
            "",
        ] {
            assert!(!value_holds_credentials(value), "{value}");
        }
        assert!(!is_secret("HTTPS_PROXY", "http://proxy:3128"));
    }

    #[test]
    fn credentials_are_recognised_by_name() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "NPM_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "AZURE_CLIENT_SECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PGPASSWORD",
            "DB_PASSWD",
            "MY_SERVICE_PAT",
            "SSH_AUTH_SOCK",
            "XAUTHORITY",
            "sentry_dsn",
            "api_key",
            "DOCKER_CREDS",
            "SMTP_PASS",
            "DB_PW",
            "MY_JWT",
            "SLACK_WEBHOOK_URL",
            "AZURE_STORAGE_CONNECTION_STRING",
            "SIGNING_PRIVATE_PEM",
            "BW_SESSION",
            "OP_SESSION_myaccount",
            "STRIPE_SK",
            "PAYMENTS_SK",
        ] {
            assert!(looks_like_secret(name), "{name}");
        }
        for name in [
            "PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "PWD", "TMPDIR", "CI", "NODE_ENV",
            "EDITOR", "LC_ALL", "TZ",
        ] {
            assert!(!looks_like_secret(name), "{name}");
        }
    }

    #[test]
    fn the_model_s_names_are_dropped_unless_passed_on() {
        let model = vec![
            ("MY_TOKEN".to_string(), "x".to_string()),
            ("FOO".to_string(), "y".to_string()),
            ("DEPLOY_KEY".to_string(), "z".to_string()),
        ];
        assert_eq!(
            dropped_names(false, &model, &["DEPLOY_KEY".to_string()]),
            ["MY_TOKEN"]
        );
    }
}
