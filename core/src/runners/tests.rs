use super::*;
use crate::config::Config;

fn runners(text: &str) -> Runners {
    Config::parse_with_runners("config.toml", text)
        .unwrap()
        .agents
}

fn error(text: &str) -> String {
    let e = Config::parse_with_runners("config.toml", text).unwrap_err();
    assert_eq!(e.code(), "CONFIG_INVALID");
    e.to_string()
}

#[test]
fn personas_cwd_and_program_paths_stay_inside_the_workspace() {
    for (table, want) in [
        (
            "persona = \"../../../../etc/passwd\"",
            "agents.architect.persona must be a relative path inside the workspace",
        ),
        (
            "persona = \"/etc/passwd\"",
            "agents.architect.persona must be a relative path",
        ),
        (
            "cwd = \"/nonexistent\"",
            "agents.architect.cwd must be a relative path",
        ),
        (
            "cwd = \"sub/../..\"",
            "agents.architect.cwd must be a relative path",
        ),
    ] {
        let e = error(&format!(
            "[agents.architect]\npreset = \"claude\"\n{table}\n"
        ));
        assert!(e.starts_with("config.toml:3:"), "{e}");
        assert!(e.contains(want), "{e}");
    }
    for program in ["../outside/agent", "/usr/bin/env", "bin/../../agent"] {
        let e = error(&format!("[agents.architect]\ncommand = [{program:?}]\n"));
        assert!(e.starts_with("config.toml:2:"), "{e}");
        assert!(
            e.contains("must be a path relative to the workspace root"),
            "{e}"
        );
    }
    let e = error("[agents.architect]\npreset = \"claude\"\npersonna = \"p.md\"\n");
    assert!(e.contains("did you mean 'persona'?"), "{e}");
    // Inside the root or a bare name on PATH: as before.
    runners(
        "[agents.architect]\ncommand = [\"bin/agent\"]\ncwd = \"sub/dir\"\npersona = \"./p.md\"\n",
    );
    runners("[agents.architect]\ncommand = [\"env\", \"agent\"]\n");
}

#[test]
fn only_parse_with_runners_reads_runner_tables() {
    let text = "[clarify]\nmax_retries = 2\n[agents.architect]\npreset = 3\n";
    let plain = Config::parse("config.toml", text).unwrap();
    assert!(plain.agents.is_empty());
    assert_eq!(plain.max_retries, 2);
    assert!(error(text).starts_with("config.toml:4:10: agents.architect.preset must be a string"));
    let ok = "[agents.architect]\npreset = \"claude\"\n";
    assert_eq!(
        Config::parse_with_runners("config.toml", ok)
            .unwrap()
            .agents
            .agents
            .len(),
        1
    );
}

#[test]
fn no_agents_table_means_no_runners() {
    assert!(runners("[clarify]\nmax_retries = 2\n").is_empty());
    assert_eq!(runners("").for_agent("architect"), None);
}

#[test]
fn reads_the_spec_example() {
    let r = runners(
        r#"
[agents.architect]
preset = "claude"
command = ["tools/claude", "--model", "opus"]
timeout_seconds = 900
persona = ".github/agents/architect.agent.md"
env = { ANTHROPIC_MODEL = "claude-sonnet-4-5" }
cwd = "services/api"

[agents.default]
command = ["./bin/ask", "--who", "{prompt}"]
prompt = "arg"
answer = "jsonl:/text"
"#,
    );
    let a = r.for_agent("architect").unwrap();
    assert_eq!(a.preset, Preset::Claude);
    assert_eq!(a.command, ["tools/claude", "--model", "opus"]);
    assert_eq!((a.prompt, a.answer.clone()), (None, None));
    assert_eq!(a.timeout_seconds, 900);
    assert_eq!(a.env["ANTHROPIC_MODEL"], "claude-sonnet-4-5");
    assert_eq!(a.cwd, "services/api");
    let d = r.for_agent("engineer").unwrap();
    assert_eq!(d.preset, Preset::Command, "a command without a preset");
    assert_eq!(d.prompt, Some(PromptMode::Arg));
    assert_eq!(d.answer, Some(AnswerFormat::Jsonl("/text".into())));
    assert_eq!(d.timeout_seconds, DEFAULT_TIMEOUT_SECONDS);
    assert_eq!(d.cwd, ".");
    assert!(r.agents.contains_key("architect") && !r.agents.contains_key("default"));
}

#[test]
fn a2a_runners_take_a_url_and_a_token_variable() {
    let r = runners(
        "[agents.architect]\npreset = \"a2a\"\nurl = \"http://127.0.0.1:9000/agents/arch\"\ntoken_env = \"ARCH_TOKEN\"\ntimeout_seconds = 5\n",
    );
    let a = r.for_agent("architect").unwrap();
    assert_eq!(a.preset, Preset::A2a);
    assert_eq!(a.url.as_deref(), Some("http://127.0.0.1:9000/agents/arch"));
    assert_eq!(a.token_env.as_deref(), Some("ARCH_TOKEN"));
    assert!(a.command.is_empty());
    for (text, says) in [
        ("[agents.a]\npreset = \"a2a\"\n", "no url"),
        (
            "[agents.a]\npreset = \"a2a\"\nurl = \"ftp://x\"\n",
            "http:// or https://",
        ),
        (
            "[agents.a]\npreset = \"a2a\"\nurl = \"http://\"\n",
            "http:// or https://",
        ),
        (
            "[agents.a]\npreset = \"a2a\"\nurl = \"http://x\"\ntoken_env = \"A-B\"\n",
            "token_env must name",
        ),
        (
            "[agents.a]\npreset = \"a2a\"\nurl = \"http://x\"\ncommand = [\"x\"]\n",
            "not a command",
        ),
        (
            "[agents.a]\npreset = \"claude\"\nurl = \"http://x\"\n",
            "preset \"a2a\" only",
        ),
        (
            "[agents.a]\ncommand = [\"x\"]\ntoken_env = \"T\"\n",
            "preset \"a2a\" only",
        ),
    ] {
        let e = error(text);
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn command_runners_default_to_stdin_and_text() {
    let r = runners("[agents.tester]\ncommand = [\"echo\"]\n");
    let t = &r.agents.get("tester").unwrap();
    assert_eq!(t.prompt, Some(PromptMode::Stdin));
    assert_eq!(t.answer, Some(AnswerFormat::Text));
    assert!(r.default.is_none());
    assert_eq!(r.for_agent("architect"), None);
}

#[test]
fn persona_files_default_to_the_agent_convention() {
    let r = runners(
        "[agents.architect]\npreset = \"copilot\"\n[agents.pm]\npreset = \"copilot\"\npersona = \"docs/pm.md\"\n[agents.ux]\npreset = \"copilot\"\npersona = \"./.github/agents/ux.agent.md\"\n",
    );
    let a = &r.agents.get("architect").unwrap();
    assert_eq!(
        a.persona_file("architect"),
        PersonaFile {
            path: ".github/agents/architect.agent.md".into(),
            required: false
        }
    );
    assert!(a.persona_is_default("architect"));
    let pm = &r.agents.get("pm").unwrap();
    assert_eq!(pm.persona_file("pm").path, "docs/pm.md");
    assert!(pm.persona_file("pm").required);
    assert!(!pm.persona_is_default("pm"));
    assert!(r.agents.get("ux").unwrap().persona_is_default("ux"));
}

#[test]
fn bad_tables_are_located() {
    for (text, want) in [
        (
            "[agents.architect]\npreset = \"claud\"\n",
            "config.toml:2:10: agents.architect.preset must be one of claude, codex, gemini, copilot, cursor, command, a2a, found \"claud\"",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\ntimeout_seconds = 0\n",
            "config.toml:3:19: agents.architect.timeout_seconds must be an integer from 1 to 86400, found 0",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\ntimeout_seconds = 86401\n",
            "config.toml:3:19: agents.architect.timeout_seconds must be an integer from 1 to 86400, found 86401",
        ),
        (
            "[agents.architect]\npreset = \"codex\"\npromt = \"arg\"\n",
            "config.toml:3:1: unknown key 'promt' in [agents.architect]; allowed: preset, command, prompt, answer, timeout_seconds, persona, env, cwd",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\nanswer = \"text\"\n",
            "config.toml:3:10: agents.architect.answer is fixed by preset \"claude\"; only preset \"command\" takes answer",
        ),
        (
            "[agents.architect]\npreset = \"gemini\"\nprompt = \"arg\"\n",
            "config.toml:3:10: agents.architect.prompt is fixed by preset \"gemini\"; only preset \"command\" takes prompt",
        ),
        (
            "[agents.architect]\ncommand = [\"x\"]\nprompt = \"file\"\n",
            "config.toml:3:10: agents.architect.prompt must be \"stdin\" or \"arg\", found \"file\"",
        ),
        (
            "[agents.architect]\ncommand = [\"x\"]\nanswer = \"json:result\"\n",
            "config.toml:3:10: agents.architect.answer JSON pointer \"result\" must be empty or start with '/'",
        ),
        (
            "[agents.architect]\ncommand = []\n",
            "config.toml:2:11: agents.architect.command must start with a program name",
        ),
        (
            "[agents.architect]\ncommand = [\"x\", 3]\n",
            "config.toml:2:17: agents.architect.command must hold strings without NUL characters, found 3",
        ),
        (
            "[agents.architect]\ncommand = \"claude -p\"\n",
            "config.toml:2:11: agents.architect.command must be an array of strings [program, args…], found string \"claude -p\"",
        ),
        (
            "[agents.architect]\ncommand = [\"x\"]\nprompt = \"arg\"\n",
            "config.toml:2:11: agents.architect.command has no \"{prompt}\" argument for prompt = \"arg\"",
        ),
        (
            "[agents.architect]\ncommand = [\"x\", \"{prompt}\"]\n",
            "config.toml:2:11: agents.architect.command has \"{prompt}\" but prompt = \"stdin\"; set prompt = \"arg\"",
        ),
        (
            "[agents.architect]\npreset = \"copilot\"\ncommand = [\"copilot\", \"{prompt}\"]\n",
            "config.toml:3:11: agents.architect.command holds \"{prompt}\", but a preset places the prompt itself",
        ),
        (
            "[agents.architect]\npreset = \"command\"\n",
            "agents.architect] has preset \"command\" but no command",
        ),
        ("[agents.architect]\ntimeout_seconds = 5\n", "[agents.architect] needs a preset (claude, codex, gemini, copilot, cursor, command, a2a) or a command"),
        (
            "[agents.Architect]\npreset = \"claude\"\n",
            "config.toml:1:9: [agents.Architect]: invalid agent name 'Architect'",
        ),
        (
            "[agents.human]\npreset = \"claude\"\n",
            "config.toml:1:9: [agents.human]: 'human' is never asked, so it takes no runner",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\nenv = { \"A-B\" = \"x\" }\n",
            "config.toml:3:9: agents.architect.env: 'A-B' is not an environment variable name",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\nenv = { A = 1 }\n",
            "config.toml:3:13: agents.architect.env.A must be a string without NUL characters, found 1",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\ncwd = \"\"\n",
            "config.toml:3:7: agents.architect.cwd must be a non-empty path without NUL characters",
        ),
        (
            "[agents.architect]\npreset = \"claude\"\npersona = 7\n",
            "config.toml:3:11: agents.architect.persona must be a string, found 7",
        ),
        ("agents = 3\n", "config.toml:1:10: agents must be a table, found 3"),
        (
            "[agents]\narchitect = \"claude\"\n",
            "config.toml:2:13: agents.architect must be a table, found string \"claude\"",
        ),
    ] {
        let got = error(text);
        assert!(got.contains(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn inline_tables_read_like_headers() {
    let a = runners("agents = { qa = { preset = \"cursor\", timeout_seconds = 5 } }\n");
    assert_eq!(a.agents.get("qa").unwrap().preset, Preset::Cursor);
    assert_eq!(a.agents.get("qa").unwrap().timeout_seconds, 5);
}
