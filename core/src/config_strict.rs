//! Tables of `.agentx/config.toml` where a typo weakens security (docs/protocol.md §31): an unknown key
//! in `[audit]`, `[store]`, `[serve]`, `[mcp]`, `[people]`, `[github]` or a `[[notify]]` table is
//! `CONFIG_INVALID` at its file:line:column with the nearest known key — `require_signature =
//! true` in `[audit]` once turned signature enforcement off without a word. (Runner tables
//! are checked where they are read, `routing::runners`.) Other tables may hold other tools'
//! settings and stay lenient.

use toml::de::{DeTable, DeValue};

use crate::error::ClarifyError;
use crate::nearest::hint;
use crate::toml_read::{describe, get, Source};

/// Each strict table and its keys. A table that gains a key adds it here.
pub(crate) const STRICT_TABLES: &[(&str, &[&str])] = &[
    ("audit", &["require_signatures"]),
    ("store", &["url", "timeout_ms"]),
    (
        "serve",
        &[
            "listen",
            "public_url",
            "allowed_origins",
            "as",
            "tls_cert",
            "tls_key",
            "behind_proxy",
            "worker",
            "answer_link_hours",
            "metrics",
            "metrics_token_env",
            "metrics_listen",
        ],
    ),
    ("mcp", &["max_routes", "elicit"]),
    // Who decides (docs/protocol.md §37): a typo here would widen it to everyone.
    ("people", &["default_deciders", "claim_timeout_minutes"]),
    (
        "github",
        &[
            "repo",
            "via",
            "token_env",
            "api_url",
            "labels",
            "answer_roles",
            "mentions",
        ],
    ),
    ("notify", crate::notify::config::KEYS),
];

/// Checks every strict table present in the document.
pub(crate) fn check(src: &Source<'_>, root: &DeTable<'_>) -> Result<(), ClarifyError> {
    for (name, keys) in STRICT_TABLES {
        let Some(value) = get(root, name) else {
            continue;
        };
        match value.get_ref() {
            // `[[notify]]`: an array of tables, each checked.
            DeValue::Array(items) => {
                for item in items {
                    check_table(src, name, src.table(name, item)?, keys)?;
                }
            }
            DeValue::Table(t) => check_table(src, name, t, keys)?,
            other => {
                return Err(src.error_at(
                    &value.span(),
                    format!("{name} must be a table, found {}", describe(other)),
                ))
            }
        }
    }
    Ok(())
}

fn check_table(
    src: &Source<'_>,
    name: &str,
    table: &DeTable<'_>,
    keys: &[&str],
) -> Result<(), ClarifyError> {
    for (k, _) in table.iter() {
        let key: &str = k.get_ref();
        if !keys.contains(&key) {
            return Err(src.error_at(
                &k.span(),
                format!("unknown key '{key}' in [{name}]; {}", hint(key, keys)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ElicitPolicy};

    fn error(text: &str) -> String {
        let e = Config::parse("config.toml", text).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        e.to_string()
    }

    #[test]
    fn a_typo_in_a_strict_table_is_located_with_the_nearest_key() {
        assert_eq!(
            error("[audit]\nrequire_signature = true\n"),
            "config.toml:2:1: unknown key 'require_signature' in [audit]; did you mean 'require_signatures'?"
        );
        assert!(error("[store]\nurll = \"postgres://x\"\n").contains("did you mean 'url'?"));
        assert!(error("[mcp]\nmax_route = 2\n").starts_with("config.toml:2:1:"));
        assert!(
            error("[[notify]]\nname = \"a\"\n\n[[notify]]\nsecrt = \"x\"\n").starts_with(
                "config.toml:5:1: unknown key 'secrt' in [notify]; did you mean 'secret'?"
            )
        );
        assert!(error("[github]\nrepo = \"o/n\"\ntoken = \"x\"\n").contains("[github]"));
        assert!(error("[serve]\nallowed_origin = []\n").contains("'allowed_origins'"));
        // Other tables stay lenient: they may be another tool's.
        Config::parse(
            "config.toml",
            "[other]\nanything = 1\n[clarify]\nmax_retries = 2\n",
        )
        .unwrap();
        Config::parse(
            "config.toml",
            "[audit]\nrequire_signatures = true\n[mcp]\nmax_routes = 2\n",
        )
        .unwrap();
    }

    #[test]
    fn mcp_elicit_and_serve_allowed_origins_are_read_and_checked() {
        let c = Config::parse(
            "config.toml",
            "[mcp]\nelicit = false\n[serve]\nallowed_origins = [\"https://tools.example.com\"]\n",
        )
        .unwrap();
        assert_eq!(c.mcp_elicit, ElicitPolicy::Never);
        assert_eq!(c.serve_allowed_origins, ["https://tools.example.com"]);
        let d = Config::parse("config.toml", "").unwrap();
        assert_eq!(d.mcp_elicit, ElicitPolicy::Requester);
        assert!(d.serve_allowed_origins.is_empty());
        for (text, policy) in [
            ("true", ElicitPolicy::Requester),
            ("\"requester\"", ElicitPolicy::Requester),
            ("\"never\"", ElicitPolicy::Never),
        ] {
            let c = Config::parse("config.toml", &format!("[mcp]\nelicit = {text}\n")).unwrap();
            assert_eq!(c.mcp_elicit, policy, "{text}");
        }
        let refused = error("[mcp]\nelicit = \"no\"\n");
        assert!(
            refused.contains("elicit must be \"requester\" or \"never\""),
            "{refused}"
        );
        assert!(refused.contains("config.toml:2:"), "{refused}");
        assert!(
            error("[serve]\nallowed_origins = [\"tools.example.com\"]\n")
                .contains("allowed_origins")
        );
    }
}
