//! The origin of an http(s) URL — its scheme, host and port (RFC 6454), lowercase, the
//! default port left out — and the secrets that look-alike text in a shown message would give
//! away. Both are what a network door compares or hides (issue 48): an A2A runner sends its
//! bearer token only to the origin it was configured with; a sink's stderr shown on the inbox
//! never carries a token.

/// `scheme://host[:port]` of `url` (`http` or `https`), or `None` for anything else — a URL
/// with user information (`user@host`) included, as a browser would not send a credential
/// there either.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (inside, after) = v6.split_once(']')?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (format!("[{inside}]"), port)
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (authority.clone(), None),
        },
    };
    if host.is_empty() || host == "[]" {
        return None;
    }
    match port {
        Some(p) if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) => None,
        Some(p) if p != default => Some(format!("{scheme}://{host}:{p}")),
        _ => Some(format!("{scheme}://{host}")),
    }
}

/// Whether `text` is an origin as [`origin_of`] writes it (`[agents.X] allow_card_origins`
/// entries): nothing after the port but an optional `/`.
pub fn is_origin(text: &str) -> bool {
    origin_of(text).is_some_and(|o| o == text.trim_end_matches('/').to_ascii_lowercase())
}

/// Prefixes of tokens that name themselves (this hub's, GitHub's, Slack's, common API keys).
const TOKEN_PREFIXES: &[&str] = &[
    "axt_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "sk-",
    "whsec_",
    "AKIA",
];

/// Names whose value is a secret (`Authorization: Bearer …`, `password=…`, `token: …`).
const SECRET_WORDS: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "api-key",
    "authorization",
];

/// `text` with what looks like a secret replaced by `[redacted]`: a word starting with a
/// known token prefix, the value after `Bearer`, `password=`, `token:` and the like, a
/// URL's `user:password@`, and any word of 32 or more characters of letters, digits, `_`,
/// `-`, `+`, `/`, `=` (a key in hex or base64). Then cut to `max` characters.
pub fn redacted(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    let mut hide_next = false;
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end();
        let gap = &piece[word.len()..];
        let (shown, hide_after) = redact_word(word, hide_next);
        hide_next = hide_after;
        out.push_str(&shown);
        out.push_str(gap);
    }
    if out.chars().count() > max {
        let mut cut: String = out.chars().take(max).collect();
        cut.push('…');
        return cut;
    }
    out
}

/// One word as shown, and whether the word after it is a secret.
fn redact_word(word: &str, hidden: bool) -> (String, bool) {
    const HIDDEN: &str = "[redacted]";
    if word.is_empty() {
        return (String::new(), hidden);
    }
    let bare = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '(' | ')'));
    let lower = bare.to_ascii_lowercase();
    // `Bearer x`, `Basic x`, `password: x`, `token= x` — not the word "token" in a sentence.
    let names_secret = matches!(lower.as_str(), "bearer" | "basic")
        || (lower.ends_with([':', '='])
            && SECRET_WORDS.contains(&lower.trim_end_matches([':', '='])));
    if hidden {
        // `Authorization: Bearer x`: the scheme's name stays, the value goes.
        return if names_secret {
            (word.to_owned(), true)
        } else {
            (HIDDEN.to_owned(), false)
        };
    }
    // `password=x`, `token:x`, `--token=x`: the name stays, the value goes.
    for sep in ['=', ':'] {
        if let Some((name, value)) = bare.split_once(sep) {
            let name_l = name.trim_start_matches('-').to_ascii_lowercase();
            if SECRET_WORDS.iter().any(|w| name_l.ends_with(w)) {
                if value.is_empty() {
                    return (word.to_owned(), true);
                }
                return (format!("{name}{sep}{HIDDEN}"), false);
            }
        }
    }
    if names_secret {
        return (word.to_owned(), true);
    }
    if let Some(at) = bare.find('@') {
        if let Some(scheme_end) = bare.find("://") {
            if scheme_end < at && bare[scheme_end + 3..at].contains(':') {
                return (
                    format!("{}{HIDDEN}@{}", &bare[..scheme_end + 3], &bare[at + 1..]),
                    false,
                );
            }
        }
    }
    let looks_keyed = TOKEN_PREFIXES
        .iter()
        .any(|p| bare.starts_with(p) && bare.len() > p.len() + 3);
    let long = bare.chars().count() >= 32
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '='));
    if looks_keyed || long {
        return (HIDDEN.to_owned(), false);
    }
    (word.to_owned(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:9000/agents/a").as_deref(),
            Some("http://127.0.0.1:9000")
        );
        assert_eq!(
            origin_of("HTTPS://Hub.Example.com:443/x?y").as_deref(),
            Some("https://hub.example.com")
        );
        assert_eq!(
            origin_of("http://[::1]:80/").as_deref(),
            Some("http://[::1]")
        );
        assert_eq!(
            origin_of("http://[::1]:8080").as_deref(),
            Some("http://[::1]:8080")
        );
        for bad in [
            "ftp://x",
            "http://",
            "http://u:p@h/",
            "http://h:x/",
            "http://h:/",
            "x",
            "http://[::1",
        ] {
            assert_eq!(origin_of(bad), None, "{bad}");
        }
        assert!(is_origin("http://127.0.0.1:9000") && is_origin("https://a.example/"));
        assert!(!is_origin("http://127.0.0.1:9000/a2a") && !is_origin("mailto:x"));
    }

    #[test]
    fn secrets_are_hidden_and_the_rest_kept() {
        let said = "curl: (22) 401 for https://bot:hunter2@hooks.example/x with Authorization: Bearer abc.def token=axt_0123456789abcdefghij and password: swordfish ghp_abcdefghijklmnop key 0123456789abcdef0123456789abcdef ok";
        let shown = redacted(said, 1000);
        for secret in [
            "hunter2",
            "abc.def",
            "axt_0123",
            "swordfish",
            "ghp_abcd",
            "0123456789abcdef0123",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(
            shown.starts_with("curl: (22) 401 for https://[redacted]@hooks.example/x"),
            "{shown}"
        );
        assert!(
            shown.contains("token=[redacted]") && shown.ends_with(" ok"),
            "{shown}"
        );
        assert_eq!(redacted("plain words stay", 100), "plain words stay");
        assert_eq!(
            redacted("the token is missing", 100),
            "the token is missing"
        );
        assert_eq!(redacted("abcdef", 3), "abc…");
    }
}
