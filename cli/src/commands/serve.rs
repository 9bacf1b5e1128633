//! `agentx serve` (the hub as a service, docs/protocol.md §23) and `agentx tokens` (its access tokens).

use std::path::{Path, PathBuf};

use agentx_clarify_core::ClarifyError;
use agentx_clarify_serve::tokens::{self, Kind};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::print;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (a non-loopback one needs TLS or --behind-proxy)
    #[arg(long, default_value = "127.0.0.1:7700", value_name = "HOST:PORT")]
    pub listen: String,
    /// The address people open: the links in notifications (a push's "open the thread") and
    /// in sign-in links point there. Default: the listen address, which a phone on another
    /// network cannot reach; behind a proxy, its https URL (required)
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// The person the printed one-time sign-in link signs in, and so the `by` of what they
    /// decide. Default: this machine's user name ($USER, else $LOGNAME, else the account
    /// that runs the server), lower-cased
    #[arg(long = "as", value_name = "NAME")]
    pub as_name: Option<String>,
    /// TLS certificate chain (PEM); with --tls-key
    #[arg(
        long,
        value_name = "PEM",
        requires = "tls_key",
        conflicts_with = "behind_proxy"
    )]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM); with --tls-cert
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// A TLS-terminating proxy is in front (needs an https --public-url)
    #[arg(long)]
    pub behind_proxy: bool,
    /// Do not run the monitor at the core's next wake-up
    #[arg(long)]
    pub no_worker: bool,
    /// The log on stderr: `text` (lines for a person) or `json` (one object per line, with
    /// every request: for a log shipper)
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
}

#[derive(Subcommand, Debug)]
pub enum Tokens {
    /// Make a token and print it once (only its SHA-256 is stored)
    New {
        /// A person's token: the inbox and /api/v1
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "agent",
            required_unless_present = "agent"
        )]
        human: Option<String>,
        /// An agent's token: /mcp and A2A
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The person who runs this agent's client (a person of people.toml): MCP
        /// elicitation asks them only about records they may decide, as themselves
        #[arg(long, value_name = "PERSON", requires = "agent")]
        operator: Option<String>,
    },
    /// Print a one-time sign-in link for a person (10 minutes, once; only its hash is kept):
    /// open it on a phone instead of pasting a token
    Link {
        #[arg(long, value_name = "NAME")]
        human: String,
        /// The inbox's address as people open it (`agentx serve --public-url`)
        #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:7700")]
        url: String,
    },
    /// List the tokens (never their secrets)
    List,
    /// Revoke a token by name or id (takes effect on the next request); a person's token
    /// takes their open answer links with it
    Revoke {
        #[arg(value_name = "NAME|ID")]
        which: String,
    },
}

pub fn serve(root: PathBuf, args: ServeArgs) -> Result<i32, ClarifyError> {
    let tls = args.tls_cert.zip(args.tls_key);
    let as_name = match args.as_name {
        Some(name) => name,
        None => match machine_user() {
            Some(name) => name,
            None => {
                eprintln!(
                    "error: cannot tell whom the sign-in link is for (no $USER, $LOGNAME or account name that is a valid name): give --as NAME"
                );
                return Ok(2);
            }
        },
    };
    agentx_clarify_serve::run(agentx_clarify_serve::Options {
        root,
        listen: args.listen,
        public_url: args.public_url,
        as_name,
        tls,
        behind_proxy: args.behind_proxy,
        no_worker: args.no_worker,
        json_log: args.log_format == "json",
        // A long-lived process gives back what its large reads freed (issue 50 item 11).
        give_back: Some(crate::alloc::give_back),
    })
}

/// `tokens link --human NAME`: a one-time sign-in link, printed once.
fn link(root: &Path, now: i64, json: bool, human: &str, url: &str) -> Result<i32, ClarifyError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ClarifyError::input(format!(
            "--url must be an http(s) URL, e.g. https://hub.example.com; found \"{}\"",
            agentx_clarify_core::error::shown(url)
        )));
    }
    let minted = agentx_clarify_serve::links::Links::open(root)?.mint(human, now)?;
    let link = agentx_clarify_serve::links::url(url, &minted.code);
    let until = agentx_clarify_core::time::format_ms(minted.expires);
    if json {
        print::json(&json!({"ok": true, "human": human, "link": link, "expires": until}));
    } else {
        print::text(&format!(
            "a sign-in link for '{human}' (works once, until {until}):\n{link}\nIt is shown once: send it to yourself, open it in the browser you decide in."
        ));
    }
    Ok(0)
}

/// The name of the person at this machine, as a ledger name: `$USER`, else `$LOGNAME`, else
/// the account that owns this process (`/etc/passwd`), lower-cased with anything but letters,
/// digits and `-` turned into `-` (`Jane.Doe` → `jane-doe`). `None` when nothing gives a name.
fn machine_user() -> Option<String> {
    let from_env = ["USER", "LOGNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty());
    let raw = from_env.or_else(account_name)?;
    let name: String = raw
        .trim()
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-') => c,
            _ => '-',
        })
        .collect();
    let name = name.trim_matches('-').chars().take(64).collect::<String>();
    agentx_clarify_core::names::check_agent(&name)
        .ok()
        .map(|()| name)
}

/// The account that runs this process, from `/etc/passwd` (no `unsafe` getpwuid: the owner of
/// `/proc/self` is this process's user).
fn account_name() -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_owned())
    })
}

/// The workspace's people (none without `people.toml`): a person's token or link names one
/// of them once any is defined (docs/protocol.md §37).
fn people(root: &Path) -> Result<agentx_clarify_core::people::People, ClarifyError> {
    use agentx_clarify_command::store::Files as _;
    agentx_clarify_a2a::open_workspace(root)?
        .store()?
        .load_people()
}

fn check_person(root: &Path, name: &str) -> Result<(), ClarifyError> {
    match agentx_clarify_core::people::token_refusal(&people(root)?, name) {
        Some(why) => Err(ClarifyError::input(why)),
        None => Ok(()),
    }
}

pub fn tokens(root: &Path, now: i64, json: bool, cmd: Tokens) -> Result<i32, ClarifyError> {
    let store = &tokens::open(root)?;
    match cmd {
        Tokens::New {
            human,
            agent,
            operator,
        } => {
            let (kind, name) = match (human, agent) {
                (Some(h), _) => (Kind::Human, h),
                (None, Some(a)) => (Kind::Agent, a),
                (None, None) => {
                    return Err(ClarifyError::input("give --human NAME or --agent NAME"))
                }
            };
            if kind == Kind::Human {
                check_person(root, &name)?;
            }
            if let Some(o) = &operator {
                check_person(root, o)?;
            }
            let (token, secret) = tokens::new_token(store, kind, &name, operator.as_deref(), now)?;
            // An agent's token names the agent of `/mcp` and `/a2a` as `--agent` does for
            // `agentx mcp`: the same warning when no workflow step runs it (issue 49).
            let warnings: Vec<String> = match kind {
                Kind::Agent => agentx_clarify_a2a::open_workspace(root)
                    .and_then(|ws| ws.store())
                    .ok()
                    .and_then(|store| {
                        agentx_clarify_command::status::no_step_warning(&*store, &name)
                    })
                    .into_iter()
                    .collect(),
                Kind::Human => Vec::new(),
            };
            for w in &warnings {
                print::warn(w);
            }
            if json {
                let mut listed = token.listed();
                if let Some(m) = listed.as_object_mut() {
                    m.insert("token".into(), secret.into());
                }
                print::json(&json!({"ok": true, "token": listed, "warnings": warnings}));
            } else {
                print::text(&format!(
                    "{} token '{}' ({}): {secret}\nIt is shown once: keep it in a password manager or a secret store.",
                    kind.as_str(),
                    token.name,
                    token.id
                ));
            }
            Ok(0)
        }
        Tokens::Link { human, url } => {
            check_person(root, &human)?;
            link(root, now, json, &human, &url)
        }
        Tokens::List => list(store, root, json),
        Tokens::Revoke { which } => revoke(store, &which, now, json),
    }
}

/// `tokens revoke`: the token, and for a person's token how many of their open answer links
/// went with it (`linksRevoked`; absent for an agent's token).
fn revoke(store: &tokens::Tokens, which: &str, now: i64, json: bool) -> Result<i32, ClarifyError> {
    let tokens::Revoked { token: t, links } = tokens::revoke(store, which, now)?;
    if json {
        let mut v = json!({"ok": true, "revoked": t.listed()});
        if let Some(n) = links {
            v["linksRevoked"] = n.into();
        }
        print::json(&v);
    } else {
        let links = match links {
            Some(1) => "; 1 open answer link revoked".to_owned(),
            Some(n) => format!("; {n} open answer links revoked"),
            None => String::new(),
        };
        print::text(&format!(
            "revoked {} token '{}' ({}){links}",
            t.kind.as_str(),
            t.name,
            t.id
        ));
    }
    Ok(0)
}

/// `tokens list`: every token, never its secret; a person's token that names nobody of
/// `people.toml` is marked.
fn list(store: &tokens::Tokens, root: &Path, json: bool) -> Result<i32, ClarifyError> {
    let all = store.load()?;
    let people = people(root)?;
    // Tokens made before people were defined keep working; the listing says which
    // of them name nobody of people.toml.
    let stray = |t: &tokens::Token| {
        t.kind == Kind::Human && people.is_defined() && people.get(&t.name).is_none()
    };
    if json {
        let listed: Vec<_> = all
            .iter()
            .map(|t| {
                let mut v = t.listed();
                if let (true, Some(m)) = (
                    people.is_defined() && t.kind == Kind::Human,
                    v.as_object_mut(),
                ) {
                    m.insert("definedPerson".into(), (!stray(t)).into());
                }
                v
            })
            .collect();
        print::json(&json!({"ok": true, "tokens": listed}));
    } else if all.is_empty() {
        print::text("no tokens (make one with `agentx tokens new --human NAME`)");
    } else {
        for t in &all {
            let used = t.last_used.map_or_else(
                || "never used".to_owned(),
                |ms| format!("last used {}", agentx_clarify_core::time::format_ms(ms)),
            );
            let note = if stray(t) {
                " (not a defined person)"
            } else {
                ""
            };
            let operated = t
                .operator
                .as_deref()
                .map_or(String::new(), |o| format!(" (operator: {o})"));
            print::text(&format!(
                "{}  {:<6} {:<20} created {}, {used}{note}{operated}",
                t.id,
                t.kind.as_str(),
                t.name,
                agentx_clarify_core::time::format_ms(t.created)
            ));
        }
    }
    Ok(0)
}
