//! Who may read `/metrics` (docs/protocol.md §23.2), from `[serve]` in `.agentx/config.toml`:
//! `metrics = true` turns it on, and it must then be closed by a token
//! (`metrics_token_env`, the name of the variable holding it) or put on a listener of its
//! own (`metrics_listen`, loopback unless a token is set). Anything else is a refusal to
//! start: a metrics face open on a public address without a token is never served.

use std::net::SocketAddr;

use toml::de::{DeTable, DeValue};

use crate::Refused;

/// How `/metrics` is served, once checked.
#[derive(Clone, Debug, Default)]
pub struct MetricsSettings {
    /// Whether `/metrics` is served at all.
    pub on: bool,
    /// The token a scrape must present (`Authorization: Bearer …`), read from the variable
    /// `metrics_token_env` names at start.
    pub token: Option<String>,
    /// The listener of its own (`/metrics` only); `None`: on the main listener.
    pub listen: Option<SocketAddr>,
}

/// What `[serve]` says about metrics, as written.
#[derive(Default)]
struct Written {
    on: bool,
    token_env: Option<String>,
    listen: Option<String>,
}

/// Checks the metrics settings of the settings file's `bytes` (as the workspace handle read
/// them: the file is read once); `env` looks a variable up.
pub fn read(
    bytes: Option<&[u8]>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<MetricsSettings, Refused> {
    let text = bytes.map(String::from_utf8_lossy).unwrap_or_default();
    let written = written(&text)?;
    if !written.on {
        return Ok(MetricsSettings::default());
    }
    let token = match &written.token_env {
        None => None,
        Some(name) => match env(name) {
            Some(t) if t.len() >= 16 => Some(t),
            _ => {
                return Err(Refused(format!(
                    "[serve] metrics_token_env names {name}, which holds no token of at least 16 characters"
                )))
            }
        },
    };
    let listen = match &written.listen {
        None => None,
        Some(l) => Some(l.parse::<SocketAddr>().map_err(|_| {
            Refused(format!(
                "[serve] metrics_listen '{}' is not HOST:PORT with an IP address",
                agentx_clarify_core::error::shown(l)
            ))
        })?),
    };
    match (&token, listen) {
        (None, None) => Err(Refused(
            "[serve] metrics = true needs metrics_token_env (a token) or metrics_listen (a listener of its own)".into(),
        )),
        (None, Some(addr)) if !addr.ip().is_loopback() => Err(Refused(format!(
            "[serve] metrics_listen {addr} is not a loopback address: set metrics_token_env too"
        ))),
        _ => Ok(MetricsSettings {
            on: true,
            token,
            listen,
        }),
    }
}

/// The metrics keys of `[serve]` (the strict table's check has already refused unknown keys
/// and the command layer reports syntax errors; a wrong type is refused here).
fn written(text: &str) -> Result<Written, Refused> {
    let bad = |what: &str| Refused(format!("[serve] {what}"));
    let Ok(root) = DeTable::parse(text) else {
        // Every command reports the file's syntax error; the server's first call does too.
        return Ok(Written::default());
    };
    let mut written = Written::default();
    let Some(serve) = table(root.get_ref(), "serve") else {
        return Ok(written);
    };
    for (key, value) in serve {
        match (key.get_ref().as_ref(), value.get_ref()) {
            ("metrics", DeValue::Boolean(b)) => written.on = *b,
            ("metrics", _) => return Err(bad("metrics must be true or false")),
            ("metrics_token_env", DeValue::String(s)) => written.token_env = Some(owned(s)),
            ("metrics_token_env", _) => {
                return Err(bad("metrics_token_env must be a variable's name"))
            }
            ("metrics_listen", DeValue::String(s)) => written.listen = Some(owned(s)),
            ("metrics_listen", _) => return Err(bad("metrics_listen must be HOST:PORT")),
            _ => {}
        }
    }
    Ok(written)
}

fn table<'t, 'i>(root: &'t DeTable<'i>, name: &str) -> Option<&'t DeTable<'i>> {
    root.iter().find_map(|(k, v)| match v.get_ref() {
        DeValue::Table(t) if k.get_ref().as_ref() == name => Some(t),
        _ => None,
    })
}

fn owned(s: &str) -> String {
    s.to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn settings(toml: &str, env: &[(&str, &str)]) -> Result<MetricsSettings, Refused> {
        read(Some(toml.as_bytes()), |name| {
            env.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn metrics_are_off_unless_turned_on_and_closed() {
        assert!(!settings("", &[]).unwrap().on);
        assert!(!settings("[serve]\nmetrics = false\n", &[]).unwrap().on);
        let open = settings("[serve]\nmetrics = true\n", &[]).unwrap_err();
        assert!(open.0.contains("metrics_token_env"), "{}", open.0);
        let public = settings(
            "[serve]\nmetrics = true\nmetrics_listen = \"0.0.0.0:9464\"\n",
            &[],
        )
        .unwrap_err();
        assert!(public.0.contains("not a loopback"), "{}", public.0);
        let unset = settings(
            "[serve]\nmetrics = true\nmetrics_token_env = \"SCRAPE\"\n",
            &[],
        )
        .unwrap_err();
        assert!(unset.0.contains("SCRAPE"), "{}", unset.0);
        let token = "0123456789abcdef0123";
        let closed = settings(
            "[serve]\nmetrics = true\nmetrics_token_env = \"SCRAPE\"\nmetrics_listen = \"0.0.0.0:9464\"\n",
            &[("SCRAPE", token)],
        )
        .unwrap();
        assert_eq!(closed.token.as_deref(), Some(token));
        assert_eq!(closed.listen.unwrap().port(), 9464);
        let loopback = settings(
            "[serve]\nmetrics = true\nmetrics_listen = \"127.0.0.1:9464\"\n",
            &[],
        )
        .unwrap();
        assert!(loopback.on && loopback.token.is_none());
        assert!(settings("[serve]\nmetrics = \"yes\"\n", &[]).is_err());
    }
}
