//! The `[github]` table of `.agentx/config.toml` (docs/github.md): which repository, how to
//! reach it, who may answer from it. Checked like every strict table (an unknown key is
//! `CONFIG_INVALID` with the nearest known one, `config_strict`); here the values.

use serde::Serialize;
use toml::de::DeValue;

use crate::error::ClarifyError;
use crate::toml_read::{describe, get, Source, Value};

/// How the shell reaches GitHub.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// `gh api …`: the GitHub CLI with its own login and host (GitHub Enterprise as configured).
    Gh,
    /// REST with a token read from `token_env`, at `api_url`.
    Api,
}

/// Repository permissions GitHub reports (`role_name` of the collaborator permission).
pub const ROLES: [&str; 5] = ["admin", "maintain", "write", "triage", "read"];

/// The `[github]` settings, checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GithubConfig {
    pub owner: String,
    pub repo: String,
    pub via: Via,
    /// The environment variable holding the token (`via = "api"`); the token itself is read
    /// by the shell and never stored or printed.
    pub token_env: String,
    pub api_url: String,
    pub labels: bool,
    pub answer_roles: Vec<String>,
    /// Keep `@user`/`@org/team` in ledger text as mentions on the hub's comments (default
    /// false: an agent's text pings no one).
    pub mentions: bool,
}

impl GithubConfig {
    /// `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }
}

/// A repository owner or name as GitHub allows them (letters, digits, `-`, `_`, `.`), so it
/// can be put in a request path as is.
fn repo_part(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 100
        && text != "."
        && text != ".."
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The `[github]` table of a `config.toml` (`file` names it in errors); `None` without one.
pub fn parse_github(file: &str, bytes: &[u8]) -> Result<Option<GithubConfig>, ClarifyError> {
    let text = crate::toml_read::toml_text(file, bytes)?;
    let src = Source { file, text };
    let doc = src.parse()?;
    let Some(value) = get(doc.get_ref(), "github") else {
        return Ok(None);
    };
    let table = src.table("github", value)?;
    let at = |key: &str| get(table, key);
    let repo_value = at("repo")
        .ok_or_else(|| src.error_at(&value.span(), "[github] needs repo = \"owner/name\""))?;
    let (owner, repo) = owner_and_repo(&src, repo_value)?;
    let via = match at("via") {
        None => Via::Gh,
        Some(v) => via(&src, v)?,
    };
    let token_env = match at("token_env") {
        None => String::from("GITHUB_TOKEN"),
        Some(v) => token_env(&src, v)?,
    };
    let api_url = match at("api_url") {
        None => String::from("https://api.github.com"),
        Some(v) => api_url(&src, v)?,
    };
    let labels = match at("labels") {
        None => true,
        Some(v) => src.boolean("github.labels", v)?,
    };
    let answer_roles = match at("answer_roles") {
        None => vec!["admin".into(), "maintain".into(), "write".into()],
        Some(v) => answer_roles(&src, v)?,
    };
    let mentions = match at("mentions") {
        None => false,
        Some(v) => src.boolean("github.mentions", v)?,
    };
    Ok(Some(GithubConfig {
        owner,
        repo,
        via,
        token_env,
        api_url,
        labels,
        answer_roles,
        mentions,
    }))
}

/// `github.repo`: both halves of `owner/name` must be path-safe, since they go into request
/// paths unescaped.
fn owner_and_repo(src: &Source<'_>, v: &Value<'_>) -> Result<(String, String), ClarifyError> {
    let repo_text = src.string("github.repo", v)?;
    match repo_text.split_once('/') {
        Some((o, r)) if repo_part(o) && repo_part(r) => Ok((o.to_owned(), r.to_owned())),
        _ => Err(src.error_at(
            &v.span(),
            format!(
                "github.repo must be \"owner/name\", found \"{}\"",
                crate::error::shown(&repo_text)
            ),
        )),
    }
}

/// `github.via`: only the two ways the shell knows how to reach GitHub.
fn via(src: &Source<'_>, v: &Value<'_>) -> Result<Via, ClarifyError> {
    match src.string("github.via", v)?.as_str() {
        "gh" => Ok(Via::Gh),
        "api" => Ok(Via::Api),
        other => Err(src.error_at(
            &v.span(),
            format!(
                "github.via must be \"gh\" or \"api\", found \"{}\"",
                crate::error::shown(other)
            ),
        )),
    }
}

/// `github.token_env`: a plain environment variable name (the token itself never sits in
/// the config).
fn token_env(src: &Source<'_>, v: &Value<'_>) -> Result<String, ClarifyError> {
    let name = src.string("github.token_env", v)?;
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(src.error_at(
            &v.span(),
            "github.token_env must name an environment variable (letters, digits, _)",
        ));
    }
    Ok(name)
}

/// `github.api_url`: an http(s) base, kept without its trailing `/` so paths join cleanly.
fn api_url(src: &Source<'_>, v: &Value<'_>) -> Result<String, ClarifyError> {
    let url = src.string("github.api_url", v)?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(src.error_at(
            &v.span(),
            "github.api_url must be an http(s) URL (GitHub Enterprise: https://HOST/api/v3)",
        ));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// `github.answer_roles`: an array of the permissions GitHub reports.
fn answer_roles(src: &Source<'_>, v: &Value<'_>) -> Result<Vec<String>, ClarifyError> {
    if !matches!(v.get_ref(), DeValue::Array(_)) {
        return Err(src.error_at(
            &v.span(),
            format!(
                "github.answer_roles must be an array of roles, found {}",
                describe(v.get_ref())
            ),
        ));
    }
    src.strings(
        "github.answer_roles",
        v,
        ("roles", "roles: admin, maintain, write, triage, read"),
        |s| ROLES.contains(&s),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        let c = parse_github("config.toml", b"[github]\nrepo = \"acme/app\"\n")
            .unwrap()
            .unwrap();
        assert_eq!(c.via, Via::Gh);
        assert_eq!(c.token_env, "GITHUB_TOKEN");
        assert_eq!(c.answer_roles, ["admin", "maintain", "write"]);
        assert!(c.labels);
        assert!(!c.mentions, "an agent's text pings no one unless asked");
        assert!(parse_github("config.toml", b"[clarify]\n")
            .unwrap()
            .is_none());
        let e = parse_github("config.toml", b"[github]\nrepo = \"acme\"\n").unwrap_err();
        assert!(e.to_string().contains("owner/name"), "{e}");
        let e =
            parse_github("config.toml", b"[github]\nrepo = \"a/b\"\nvia = \"curl\"\n").unwrap_err();
        assert!(e.to_string().contains("\"gh\" or \"api\""), "{e}");
        let e = parse_github(
            "config.toml",
            b"[github]\nrepo = \"a/b\"\nanswer_roles = [\"owner\"]\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("roles"), "{e}");
        let c = parse_github(
            "config.toml",
            b"[github]\nrepo = \"a/b\"\nvia = \"api\"\napi_url = \"http://127.0.0.1:9/\"\nlabels = false\nmentions = true\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (c.via, c.api_url.as_str(), c.labels, c.mentions),
            (Via::Api, "http://127.0.0.1:9", false, true)
        );
    }
}
