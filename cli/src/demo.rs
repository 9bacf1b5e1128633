//! `agentx demo`: a realistic story played through the real commands in a fresh workspace,
//! printed as it happens. Time is simulated (it starts now, or at `--now`) so an SLA can
//! expire without waiting.

use agentx_clarify_command::Files;
use agentx_clarify_command::{self as commands, HookEvent, Mutation, Scope, Store};
use agentx_clarify_core::render::text_stats;
use agentx_clarify_core::render::{text_escalation, text_report, text_thread};
use agentx_clarify_core::routing::Outcome as RouteOutcome;
use agentx_clarify_core::stats::Stats;
use agentx_clarify_core::{Action, ClarifyError, NewRequest};
use agentx_clarify_runner::ProcessRunner;
use agentx_clarify_store::clock::system_now_ms;
use agentx_clarify_store::DiskStore as Workspace;
use serde_json::json;

use crate::demo_routing;
use crate::print::{self, STYLE};

const MINUTE: i64 = 60_000;

/// A workflow where the architect, the UX designer and the engineer may ask each other —
/// the ground on which deadlocks can happen.
const PAIRING_TOML: &str = r#"# Demo workflow: a design review where architect, UX designer and engineer may ask each other.
[[steps]]
id = "design"
agent = "architect"
can_clarify = ["engineer", "ux-designer", "product-manager"]
clarify_sla_minutes = 120

[[steps]]
id = "ux"
agent = "ux-designer"
can_clarify = ["engineer", "architect", "product-manager"]
clarify_sla_minutes = 120

[[steps]]
id = "build"
agent = "engineer"
can_clarify = ["architect", "ux-designer", "product-manager"]
clarify_sla_minutes = 120
"#;

struct Story {
    ws: Workspace,
    now: i64,
    /// Narrate as the story plays; off for `--json`, whose stdout is one JSON document.
    loud: bool,
}

fn heading(text: &str) {
    print::text(&format!("\n{}", STYLE.bold(&format!("── {text} "))));
}

fn say(text: &str) {
    print::text(&format!("   {text}"));
}

fn command(text: &str) {
    print::text(&STYLE.dim(&format!("   $ agentx {text}")));
}

fn indent(block: &str) -> String {
    block
        .lines()
        .map(|l| format!("   {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Story {
    fn advance(&mut self, minutes: i64) {
        self.now += minutes * MINUTE;
        if !self.loud {
            return;
        }
        let unit = if minutes == 1 { "minute" } else { "minutes" };
        say(&STYLE.dim(&format!(
            "… {minutes} {unit} pass (simulated clock: {})",
            agentx_clarify_core::time::format_ms(self.now)
        )));
    }

    fn ask(
        &mut self,
        issue: u32,
        from: &str,
        to: &str,
        topic: &str,
        question: &str,
        workflow: Option<&str>,
    ) -> Result<Mutation, ClarifyError> {
        let wf = workflow.map_or_else(String::new, |w| format!(" --workflow {w}"));
        if self.loud {
            command(&format!("clarify ask --issue {issue} --from {from} --to {to} --topic {topic:?} --question {question:?}{wf}"));
        }
        let req = NewRequest {
            issue_number: u64::from(issue),
            from: from.into(),
            to: to.into(),
            topic: topic.into(),
            question: question.into(),
            blocking: true,
            workflow: workflow.map(str::to_owned),
            ..NewRequest::default()
        };
        commands::ask(&self.ws, self.now, &req)
    }

    fn act(&mut self, id: &str, action: Action, shown: &str) -> Result<Mutation, ClarifyError> {
        if self.loud {
            command(shown);
        }
        commands::act(&self.ws, self.now, id, &action)
    }

    fn hook(&mut self, agent: &str, issue: u32) -> Result<(), ClarifyError> {
        if self.loud {
            command(&format!("hook start {agent} {issue}"));
        }
        commands::hook(&self.ws, self.now, HookEvent::Start, agent, Some(issue))?;
        Ok(())
    }

    fn show(&self, m: &Mutation) {
        if let Some(r) = &m.clarification {
            print::text(&indent(&text_thread(m.issue, r, STYLE)));
        }
        if !m.monitor.report.is_quiet() {
            print::text(&indent(&text_report(&m.monitor.report, STYLE)));
        }
    }
}

pub fn run(
    ws: &Workspace,
    root_given: bool,
    start: Option<i64>,
    json: bool,
) -> Result<i32, ClarifyError> {
    let ws = if root_given {
        if !ws.list_clarifications()?.ledgers.is_empty() {
            return Err(ClarifyError::InvalidInput {
                message: format!("{} already holds ledgers; the demo needs an empty workspace (omit --root to use a new temporary one)", ws.root().display()),
            });
        }
        Workspace::new(ws.root())
    } else {
        let dir = tempfile::Builder::new()
            .prefix("agentx-demo-")
            .tempdir()
            .map_err(|e| ClarifyError::Io {
                message: format!("cannot create a temporary workspace: {e}"),
            })?;
        Workspace::new(dir.keep())
    };
    let mut s = Story {
        ws,
        now: start.unwrap_or_else(system_now_ms),
        loud: !json,
    };
    if json {
        // Machine output: play silently, then print the outcome.
        let stats = play(&mut s, false)?;
        print::json(
            &json!({"ok": true, "root": s.ws.root().display().to_string(), "stats": stats}),
        );
        return Ok(0);
    }
    play(&mut s, true)?;
    Ok(0)
}

fn play(s: &mut Story, loud: bool) -> Result<Stats, ClarifyError> {
    let out = |m: &Mutation, s: &Story| {
        if loud {
            s.show(m);
        }
    };
    if loud {
        print::text(&STYLE.bold("AgentX Clarify demo: agents ask instead of guessing."));
        say(&format!("workspace: {}", s.ws.root().display()));
    }
    s.ws.init()?;
    std::fs::write(
        s.ws.path(agentx_clarify_command::paths::WORKFLOWS_DIR)
            .join("pairing.toml"),
        PAIRING_TOML,
    )
    .map_err(|e| ClarifyError::Io {
        message: format!("cannot write the demo workflow: {e}"),
    })?;
    if loud {
        command("init");
        say("created .agentx/ with the feature, story and bug workflows (+ a demo 'pairing' workflow)");
    }

    if loud {
        heading("1. An engineer asks the architect instead of guessing (issue #42)");
    }
    s.hook("engineer", 42)?;
    let m = s.ask(
        42,
        "engineer",
        "architect",
        "Session cache",
        "Redis or an in-process LRU for the session cache?",
        None,
    )?;
    out(&m, s);
    s.advance(4);
    let m = s.act("CLR-42-001", Action::Answer { from: "architect".into(), body: "Redis: sessions must survive a deploy. See ADR-7.".into() }, "clarify answer CLR-42-001 --from architect --body \"Redis: sessions must survive a deploy. See ADR-7.\"")?;
    out(&m, s);
    s.advance(2);
    let m = s.act("CLR-42-001", Action::FollowUp { from: "engineer".into(), question: "Which eviction policy and TTL should the keys use?".into() }, "clarify follow-up CLR-42-001 --from engineer --question \"Which eviction policy and TTL should the keys use?\"")?;
    out(&m, s);
    s.advance(3);
    let m = s.act("CLR-42-001", Action::Answer { from: "architect".into(), body: "allkeys-lru, TTL 24h, refreshed on every request.".into() }, "clarify answer CLR-42-001 --from architect --body \"allkeys-lru, TTL 24h, refreshed on every request.\"")?;
    out(&m, s);
    s.advance(1);
    let m = s.act(
        "CLR-42-001",
        Action::Resolve {
            from: None,
            message: Some("Redis, allkeys-lru, 24h sliding TTL.".into()),
        },
        "clarify resolve CLR-42-001 -m \"Redis, allkeys-lru, 24h sliding TTL.\"",
    )?;
    out(&m, s);

    if loud {
        heading("2. Silence becomes an escalation: SLA → retry → human (issue #43)");
    }
    s.hook("engineer", 43)?;
    let m = s.ask(
        43,
        "engineer",
        "product-manager",
        "CSV export scope",
        "Is CSV export of invoices in scope for v1?",
        None,
    )?;
    out(&m, s);
    if loud {
        say("the feature workflow gives the product manager 60 minutes to answer…");
    }
    s.advance(61);
    if loud {
        command("clarify monitor");
    }
    let config = s.ws.load_config()?;
    let run = commands::run_monitor(&s.ws, &config, s.now, false, Scope::All)?;
    if loud {
        print::text(&indent(&text_report(&run.report, STYLE)));
        say("the monitor re-routed the question (retry 1 of 1); still no answer…");
    }
    s.advance(61);
    if loud {
        command("clarify monitor");
    }
    let run = commands::run_monitor(&s.ws, &config, s.now, false, Scope::All)?;
    if loud {
        print::text(&indent(&text_report(&run.report, STYLE)));
        let (issue, record) = commands::show_id(&s.ws, "CLR-43-001")?;
        print::text(&indent(&text_escalation(issue, &record, STYLE)));
    }
    s.advance(15);
    let m = s.act(
        "CLR-43-001",
        Action::Resolve {
            from: None,
            message: Some("Out of scope for v1; track it as #51.".into()),
        },
        "clarify resolve CLR-43-001 -m \"Out of scope for v1; track it as #51.\"",
    )?;
    out(&m, s);

    if loud {
        heading("3. Two agents wait on each other: a deadlock broken by priority (issue #44)");
    }
    s.hook("architect", 44)?;
    s.hook("engineer", 44)?;
    let m = s.ask(
        44,
        "architect",
        "engineer",
        "Migration state",
        "Which schema migrations are already applied in staging?",
        Some("pairing"),
    )?;
    out(&m, s);
    s.advance(2);
    let m = s.ask(
        44,
        "engineer",
        "architect",
        "Final schema",
        "Is the orders schema final before I write the migration?",
        Some("pairing"),
    )?;
    out(&m, s);
    if loud {
        say("priority (product-manager > architect > ux-designer > engineer …) decides: the engineer yields,");
        say("answers the architect, and a human takes the engineer's question.");
    }
    s.advance(3);
    let m = s.act("CLR-44-001", Action::Answer { from: "engineer".into(), body: "Up to 0042_orders_index; 0043 is pending review.".into() }, "clarify answer CLR-44-001 --from engineer --body \"Up to 0042_orders_index; 0043 is pending review.\"")?;
    out(&m, s);

    if loud {
        heading("4. A three-agent cycle (issue #45)");
    }
    s.hook("ux-designer", 45)?;
    let m = s.ask(
        45,
        "architect",
        "ux-designer",
        "Checkout flow",
        "Does checkout stay a single page?",
        Some("pairing"),
    )?;
    out(&m, s);
    let m = s.ask(
        45,
        "ux-designer",
        "engineer",
        "Payment widget",
        "Can the payment widget render inline without a redirect?",
        Some("pairing"),
    )?;
    out(&m, s);
    let m = s.ask(
        45,
        "engineer",
        "architect",
        "Payment provider",
        "Which payment provider do we integrate first?",
        Some("pairing"),
    )?;
    out(&m, s);

    if loud {
        heading("5. Scope is enforced: the engineer may not ask the reviewer in this workflow");
    }
    match s.ask(
        46,
        "engineer",
        "reviewer",
        "Review checklist",
        "Which checklist applies to this PR?",
        None,
    ) {
        Err(e) if loud => {
            print::text(&format!("   refused [{}]: {e}", e.code()));
        }
        Err(_) => {}
        Ok(_) => {
            return Err(ClarifyError::Internal {
                message: String::from("the demo's scope violation was accepted"),
            })
        }
    }

    routed_chapter(s, loud)?;

    let stats = commands::stats(&s.ws, None)?.stats;
    if loud {
        heading("7. What happened: agentx clarify stats");
        print::text(&indent(&text_stats(&stats)));
        heading("Explore the workspace");
        let root = s.ws.root().display().to_string();
        say(&format!("agentx --root {root} clarify list --all"));
        say(&format!("agentx --root {root} clarify show CLR-42-001"));
        say(&format!("agentx --root {root} clarify show --issue 45"));
        say(&format!("agentx --root {root} ready"));
        say(&format!("agentx --root {root} clarify verify"));
        say(&format!(
            "agentx --root {root} clarify resume-prompt CLR-47-001"
        ));
        say(&format!(
            "agentx --root {root} serve   # the inbox: answer the escalations in a browser"
        ));
    }
    Ok(stats)
}

/// Chapter 6, routing: the architect's agent CLI answers within the run, the engineer gets
/// the text that resumes it, and a failing agent is escalated with its cause — never an
/// invented answer.
fn routed_chapter(s: &mut Story, loud: bool) -> Result<(), ClarifyError> {
    if loud {
        heading("6. The hub routes: the architect's agent answers, a failing agent escalates (issue #47)");
        say("runners in .agentx/config.toml: architect → claude -p (stand-in), product-manager → gemini (fails)");
    }
    demo_routing::install_runners(&s.ws)?;
    s.hook("engineer", 47)?;
    let m = s.ask(
        47,
        "engineer",
        "architect",
        "Rate limiting",
        "Token bucket or fixed window for the public API's rate limits?",
        None,
    )?;
    if loud {
        s.show(&m);
    }
    let runner = ProcessRunner::new(s.ws.root());
    s.advance(1);
    let now = s.now;
    let clock = move || now;
    if loud {
        command("clarify route CLR-47-001");
    }
    let routed = commands::route(&s.ws, &runner, "CLR-47-001", &clock, true)?;
    if routed.outcome != RouteOutcome::Answered {
        return Err(ClarifyError::Internal {
            message: format!("the demo's architect did not answer: {:?}", routed.outcome),
        });
    }
    if let (true, Some(r)) = (loud, &routed.clarification) {
        print::text(&indent(&text_thread(47, r, STYLE)));
        command("clarify resume-prompt CLR-47-001");
        let resume = commands::signals::resume_prompt(&s.ws, "CLR-47-001")?;
        print::text(&indent(&resume.text()));
    }
    s.advance(2);
    let m = s.ask(
        47,
        "engineer",
        "product-manager",
        "Free tier",
        "Do free-tier keys get the same limits as paid ones?",
        None,
    )?;
    if loud {
        s.show(&m);
    }
    s.advance(1);
    if loud {
        command("clarify route CLR-47-002");
    }
    let now = s.now;
    let clock = move || now;
    let routed = commands::route(&s.ws, &runner, "CLR-47-002", &clock, true)?;
    if routed.outcome != RouteOutcome::Escalated {
        return Err(ClarifyError::Internal {
            message: format!(
                "the demo's failing agent was not escalated: {:?}",
                routed.outcome
            ),
        });
    }
    if let (true, Some(r)) = (loud, &routed.clarification) {
        print::text(&indent(&text_escalation(47, r, STYLE)));
        say("the agent's failure is on record with its cause; a human answers, not a placeholder.");
    }
    Ok(())
}
