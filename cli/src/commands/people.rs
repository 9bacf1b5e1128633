//! `agentx people list|check` (docs/protocol.md §37): the people of `.agentx/people.toml`,
//! who is on call now for each rotation, and whether the deciders lists of the settings name
//! someone. Read-only: the core decides, at `--now`.

use agentx_clarify_command::Files;
use agentx_clarify_core::people::{check, People};
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Subcommand;
use serde_json::json;

use crate::exit::{self, Outcome};
use crate::print;

#[derive(Subcommand, Debug)]
pub enum PeopleCmd {
    /// Each person with their roles and contacts, and who is on call now per rotation
    #[command(
        after_help = "Examples:\n  agentx people list\n  agentx people list --now 2026-11-23T09:00:00Z --json"
    )]
    List,
    /// Check people.toml against the settings: every role a deciders list names has someone,
    /// every name is a person (exit 3 when not)
    #[command(
        after_help = "Examples:\n  agentx people check\n  agentx people check --json\n\nThe file itself is checked as every command reads it (unknown keys, names, rotations\nof defined people); this adds what only the workflows and config.toml can tell."
    )]
    Check,
}

pub fn run(ws: &Workspace, now: i64, json: bool, cmd: PeopleCmd) -> Outcome {
    let people = ws.load_people()?;
    match cmd {
        PeopleCmd::List => list(&people, now, json),
        PeopleCmd::Check => {
            let config = ws.load_config()?;
            let problems = check(&people, &config, &ws.load_workflows()?, now);
            report(&people, &problems, json)
        }
    }
}

fn list(people: &People, now: i64, json: bool) -> Outcome {
    let view = agentx_clarify_core::people::view(people, now);
    let on_call = view["onCall"].as_array().cloned().unwrap_or_default();
    if json {
        print::json(&json!({"ok": true, "people": view["people"], "onCall": on_call}));
        return Ok(0);
    }
    if !people.is_defined() {
        print::text("no people defined (.agentx/people.toml): every person may decide, as before");
        return Ok(0);
    }
    let mut lines = Vec::new();
    for (name, p) in people.persons.iter() {
        let roles = if p.roles.is_empty() {
            String::from("(no roles)")
        } else {
            p.roles.join(", ")
        };
        lines.push(format!("{name}  roles: {roles}"));
    }
    if !on_call.is_empty() {
        lines.push(format!("on call at {}:", format_ms(now)));
    }
    for c in &on_call {
        let role = c["role"].as_str().unwrap_or_default();
        let who = c["person"]
            .as_str()
            .unwrap_or("nobody (the rotation has not started)");
        let until = match (c["until"].as_str(), c["next"].as_str()) {
            (Some(until), Some(next)) => format!(" until {until}, then {next}"),
            _ => String::new(),
        };
        lines.push(format!("  {role}: {who}{until}"));
    }
    print::text(&lines.join("\n"));
    Ok(0)
}

fn report(people: &People, problems: &[String], json: bool) -> Outcome {
    let error = (!problems.is_empty()).then(|| ClarifyError::ConfigInvalid {
        file: agentx_clarify_core::people::PEOPLE_FILE.to_owned(),
        location: None,
        message: format!(
            "{} deciders list(s) name nobody: {}",
            problems.len(),
            problems.join("; ")
        ),
    });
    if json {
        let mut out =
            json!({"ok": error.is_none(), "people": people.persons.len(), "problems": problems});
        if let Some(e) = &error {
            out["error"] = json!({"code": e.code(), "message": e.to_string()});
        }
        print::json(&out);
    } else if problems.is_empty() {
        print::text(&format!(
            "people.toml: {} people, {} rotation(s); every deciders list names someone",
            people.persons.len(),
            people.rotations.len()
        ));
    } else {
        print::text(&problems.join("\n"));
    }
    Ok(error.map_or(0, |e| exit::code(&e)))
}
