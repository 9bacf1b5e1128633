//! The parser and the typed views over the fixtures of `tests/fixtures/signals/` (seed 002's
//! blocks and the malformed cases).

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../tests/fixtures/signals/", $name))
    };
}

fn text_of(block: &Block, key: &str) -> String {
    match &block.field(key).unwrap().value {
        FieldValue::Text(t) => t.clone(),
        FieldValue::List(l) => panic!("{key} is a list: {l:?}"),
    }
}

fn keys(block: &Block) -> Vec<&str> {
    block.fields.iter().map(|f| f.key.as_str()).collect()
}

fn lines_of(problems: &[Problem]) -> Vec<usize> {
    problems.iter().map(|p| p.line).collect()
}

#[test]
fn seed_clarification_needed() {
    let p = parse(fixture!("seed002_clarification_needed.txt"));
    assert!(p.problems.is_empty());
    let [b] = p.blocks.as_slice() else {
        panic!("{p:?}")
    };
    assert_eq!(
        (b.name, b.start_line, b.end_line),
        (BlockName::ClarificationNeeded, 3, Some(11))
    );
    assert!(b
        .text
        .starts_with("[CLARIFICATION_NEEDED]\nagent_id: bg-task-abc\n"));
    assert!(b.text.ends_with("\n[/CLARIFICATION_NEEDED]"));
    assert_eq!(
        keys(b),
        [
            "agent_id",
            "timestamp",
            "blocked_at",
            "questions",
            "current_state"
        ]
    );
    let s = b.clarification_needed().unwrap();
    assert_eq!(s.agent_id.as_deref(), Some("bg-task-abc"));
    assert_eq!(s.timestamp.as_deref(), Some("2026-01-11T09:00:00-05:00"));
    assert_eq!(
        s.blocked_at.as_deref(),
        Some("Which auth strategy to analyze")
    );
    assert_eq!(
        s.questions,
        ["Analyze OAuth2, JWT, or both?", "What depth?"]
    );
    assert_eq!(
        s.current_state.as_deref(),
        Some("Checkpoint saved: step 1 completed")
    );
    assert_eq!(s.to, None);
    assert!(matches!(b.signal(), Ok(Signal::ClarificationNeeded(_))));
    // A view of another kind says so.
    let e = b.stop_work().unwrap_err();
    assert!(
        e.iter()
            .any(|p| p.message == "the block is [CLARIFICATION_NEEDED], not [STOP_WORK]"),
        "{e:?}"
    );
}

#[test]
fn the_seeds_elided_example_is_malformed_as_written() {
    let p = parse(fixture!("seed002_pipeline_verbatim.txt"));
    let [b] = p.blocks.as_slice() else {
        panic!("{p:?}")
    };
    assert_eq!(b.problems.len(), 1);
    assert_eq!(b.problems[0].line, 6);
    assert!(
        b.problems[0].message.contains("found '...'"),
        "{}",
        b.problems[0]
    );
    assert!(!b.is_well_formed());
    assert_eq!(b.signal().unwrap_err()[0].line, 6);
}

#[test]
fn seed_stop_work_keeps_the_snapshot_text() {
    let p = parse(fixture!("seed002_stop_work.txt"));
    let s = p.blocks[0].stop_work().unwrap();
    assert_eq!(s.blocker_type, "external_dependency");
    assert_eq!(s.details.as_deref(), Some("need npm install"));
    assert_eq!(
        s.state_snapshot.as_deref(),
        Some("Completed tasks: [A, B, C]\nGenerated files: [file1, file2]\nWorking directory: /path/to/work\nNext task: Task D")
    );
    assert_eq!(s.blocked_work.as_deref(), Some("Task D"));
    assert_eq!(
        s.resume_requirements.as_deref(),
        Some("node_modules installed")
    );

    // `stop_reason` stands in for `blocker_type`; `key:` + indented lines is text too.
    let p = parse(fixture!("seed002_stop_work_error.txt"));
    let s = p.blocks[0].stop_work().unwrap();
    assert_eq!(s.blocker_type, "error");
    assert_eq!(
        s.state_snapshot.as_deref(),
        Some("Items 1-50 processed\nCheckpoint: items-050.json")
    );
}

#[test]
fn seed_delegate_work_and_completion_report() {
    let p = parse(fixture!("seed002_delegate_work.txt"));
    let s = p.blocks[0].delegate_work().unwrap();
    assert_eq!(
        s.new_task_description,
        "Analyze module 2 (payments) for security issues"
    );
    assert_eq!(s.capability.as_deref(), Some("qa.verification.multi-claim"));
    assert_eq!(s.independence, Some(Independence::CanProceedParallel));
    assert!(s.coordination.unwrap().starts_with("Append findings"));

    let p = parse(fixture!("seed002_completion_report.txt"));
    let s = p.blocks[0].completion_report().unwrap();
    assert_eq!(s.status, ReportStatus::Success);
    assert_eq!(
        s.deliverables,
        ["docs/auth-analysis.md", "SHARED_FINDINGS.jsonl"]
    );
    assert_eq!(s.recommendations.len(), 2);
    assert_eq!(
        s.metrics_achieved.as_deref(),
        Some("Both strategies analyzed in depth; 12 findings")
    );
}

#[test]
fn blocks_inside_markdown_fences() {
    let p = parse(fixture!("fenced.md"));
    assert_eq!(p.blocks.len(), 2);
    let q = p.blocks[0].clarification_needed().unwrap();
    assert_eq!(q.questions, ["Redis or an in-process LRU?"]);
    // Indented with its fence; items at the key's own indentation still form the list.
    let r = p.blocks[1].completion_report().unwrap();
    assert_eq!(r.status, ReportStatus::Partial);
    assert_eq!(r.deliverables, ["src/cache.rs"]);
    assert_eq!(
        (p.blocks[1].start_line, p.blocks[1].end_line),
        (13, Some(17))
    );
}

#[test]
fn nested_blocks_are_one_malformed_block() {
    let p = parse(fixture!("nested.txt"));
    assert!(p.problems.is_empty());
    let [b] = p.blocks.as_slice() else {
        panic!("{p:?}")
    };
    assert_eq!((b.start_line, b.end_line), (1, Some(8)));
    assert_eq!(lines_of(&b.problems), [5, 7]);
    assert_eq!(
        b.problems[0].message,
        "[STOP_WORK] is nested in [CLARIFICATION_NEEDED] opened at line 1; blocks cannot nest"
    );
    assert_eq!(
        b.problems[1].message,
        "[/STOP_WORK] does not close [CLARIFICATION_NEEDED] opened at line 1"
    );
    assert!(b.signal().is_err());
}

#[test]
fn a_stray_closing_tag_is_reported_outside_blocks() {
    let p = parse(fixture!("stray_close.txt"));
    assert_eq!(
        p.problems,
        [Problem::new(2, "[/STOP_WORK] closes no open block")]
    );
    assert_eq!(p.blocks.len(), 1);
    assert!(p.blocks[0].completion_report().is_ok());
}

#[test]
fn an_unterminated_block_runs_to_the_end_and_is_never_valid() {
    let p = parse(fixture!("unterminated.txt"));
    let [b] = p.blocks.as_slice() else {
        panic!("{p:?}")
    };
    assert_eq!(b.end_line, None);
    assert_eq!(lines_of(&b.problems), [4, 1]);
    assert!(b.problems[1]
        .message
        .contains("is not closed by [/STOP_WORK]"));
    assert!(b.stop_work().is_err());
}

#[test]
fn crlf_is_lf_for_fields_text_and_key() {
    let crlf = fixture!("crlf.txt");
    let p = parse(crlf);
    let b = &p.blocks[0];
    assert!(!b.text.contains('\r'));
    let s = b.clarification_needed().unwrap();
    assert_eq!(s.questions, ["First?", "Second?"]);
    assert_eq!(s.current_state.as_deref(), Some("line one\n\nline three"));
    let lf = parse(&crlf.replace("\r\n", "\n"));
    assert_eq!(lf.blocks[0].text, b.text);
    assert_eq!(
        block_key(1, "a", &b.text),
        block_key(1, "a", &lf.blocks[0].text)
    );
}

#[test]
fn tabs_indent_and_separate() {
    let p = parse(fixture!("tabs.txt"));
    let b = &p.blocks[0];
    assert!(b.is_well_formed(), "{:?}", b.problems);
    assert_eq!(
        keys(b),
        ["agent_id", "new_task_description", "notes", "plan"]
    );
    assert_eq!(text_of(b, "agent_id"), "engineer");
    assert_eq!(
        b.field("notes").unwrap().value,
        FieldValue::List(vec!["first".into(), "second continued".into()])
    );
    assert_eq!(text_of(b, "plan"), "step 1\n\tindented step");
    assert_eq!(
        b.delegate_work().unwrap().new_task_description,
        "Write the migration"
    );
}

#[test]
fn a_500_item_list() {
    let p = parse(fixture!("list_500.txt"));
    let s = p.blocks[0].clarification_needed().unwrap();
    assert_eq!(s.questions.len(), 500);
    assert_eq!(s.questions[499], "Question number 500?");
}

#[test]
fn binary_garbage_is_scanned_without_harm() {
    let bytes = include_bytes!("../../../tests/fixtures/signals/binary_garbage.bin");
    let text = String::from_utf8_lossy(bytes);
    let p = parse(&text);
    let b = p
        .blocks
        .iter()
        .find(|b| b.name == BlockName::StopWork)
        .unwrap();
    assert!(b.end_line.is_some());
    // `de\0tails:` is not a key.
    assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
    assert!(b.stop_work().is_err());
    // Every random byte string parses too (the fuzz target does this at scale).
    let mut seed = 18u64;
    for _ in 0..200 {
        let junk: Vec<u8> = (0..512)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                [
                    b'[',
                    b']',
                    b'\n',
                    b' ',
                    b'-',
                    b':',
                    b'|',
                    b'\t',
                    (seed >> 33) as u8,
                ][((seed >> 40) % 9) as usize]
            })
            .collect();
        let _ = parse(&String::from_utf8_lossy(&junk));
    }
}

#[test]
fn malformed_lines_and_repeated_keys() {
    let p = parse(fixture!("malformed_lines.txt"));
    let b = &p.blocks[0];
    assert_eq!(lines_of(&b.problems), [3, 4, 6]);
    assert!(b.problems[0].message.starts_with("expected `key: value`"));
    assert!(b.problems[1].message.starts_with("`- item` outside a list"));
    assert_eq!(b.problems[2].message, "key `key` repeats line 5");
    assert_eq!(text_of(b, "key"), "value");
}

#[test]
fn field_problems_name_the_field() {
    let p = parse(fixture!("field_problems.txt"));
    let msgs = |r: Vec<Problem>| r.into_iter().map(|p| p.message).collect::<Vec<_>>();
    let q = msgs(p.blocks[0].clarification_needed().unwrap_err());
    assert!(q[0].starts_with("`questions` is missing"), "{q:?}");
    assert!(
        q[1].starts_with("`to`: invalid agent name 'Not An Agent'"),
        "{q:?}"
    );
    let s = msgs(p.blocks[1].stop_work().unwrap_err());
    assert!(
        s[0].starts_with("`blocker_type` (or `stop_reason`) is missing"),
        "{s:?}"
    );
    let d = msgs(p.blocks[2].delegate_work().unwrap_err());
    assert!(
        d[0].starts_with("`new_task_description` is missing"),
        "{d:?}"
    );
    assert!(
        d[1].starts_with("`capability`: capability 'research' has one segment"),
        "{d:?}"
    );
    assert_eq!(
        d[2],
        "`independence` is 'maybe'; allowed: can_proceed_parallel, blocks_current_work"
    );
    let c = msgs(p.blocks[3].completion_report().unwrap_err());
    assert_eq!(c, ["`status` is 'done'; allowed: success, partial, failed"]);
    // Reserved actors are never a target.
    let p = parse("[DELEGATE_WORK]\nnew_task_description: x\nto: human\n[/DELEGATE_WORK]");
    let d = msgs(p.blocks[0].delegate_work().unwrap_err());
    assert!(d[0].contains("a reserved actor"), "{d:?}");
}

#[test]
fn grammar_details() {
    let p = parse(
        "[COMPLETION_REPORT]\n\
         # a comment\n\
         status: 'it''s fine'\n\
         metrics_achieved: \"tab\\tquote\\\" \"\n\
         odd: \"a\" and \"b\"\n\
         wrapped: first part\n  second part\n\
         empty:\n\
         text: |\n\n  a\n\n  b\n\n\
         list:\n- one\n- two\n  wrapped\n-\n\
         url: http://x\n\
         [/COMPLETION_REPORT]",
    );
    let b = &p.blocks[0];
    assert!(b.is_well_formed(), "{:?}", b.problems);
    assert_eq!(text_of(b, "status"), "it's fine");
    assert_eq!(text_of(b, "metrics_achieved"), "tab\tquote\" ");
    assert_eq!(text_of(b, "odd"), "\"a\" and \"b\"");
    assert_eq!(text_of(b, "wrapped"), "first part second part");
    assert_eq!(text_of(b, "empty"), "");
    assert_eq!(text_of(b, "text"), "a\n\nb");
    assert_eq!(
        b.field("list").unwrap().value,
        FieldValue::List(vec!["one".into(), "two wrapped".into(), String::new()])
    );
    assert_eq!(text_of(b, "url"), "http://x");
    // `key:value` (no space) and `http://…` at the start of a line are not keys.
    let p = parse("[STOP_WORK]\nblocker_type:error\nhttp://example.com\n[/STOP_WORK]");
    assert_eq!(lines_of(&p.blocks[0].problems), [2, 3]);
    // A lone tag word inside text is not a tag; an unknown tag is not a block.
    let p = parse("[INFO] starting\n[CLARIFICATION_NEEDED] now\n[SOMETHING]\n[/SOMETHING]");
    assert!(p.blocks.is_empty() && p.problems.is_empty());
}

#[test]
fn repeated_keys_are_found_in_blocks_of_any_size() {
    for n in [3, 16, 17, 40] {
        let mut text = String::from("[STOP_WORK]\n");
        for i in 0..n {
            text.push_str(&format!("k{i}: v\n"));
        }
        text.push_str("k2: again\nk0: again\n[/STOP_WORK]");
        let b = &parse(&text).blocks[0];
        assert_eq!(b.fields.len(), n, "{n}");
        assert_eq!(
            b.problems,
            [
                Problem::new(n + 2, "key `k2` repeats line 4"),
                Problem::new(n + 3, "key `k0` repeats line 2")
            ],
            "{n}"
        );
    }
}

#[test]
fn problems_per_block_are_capped() {
    let mut text = String::from("[STOP_WORK]\n");
    for _ in 0..100 {
        text.push_str("not a key\n");
    }
    text.push_str("[/STOP_WORK]\n");
    let b = &parse(&text).blocks[0];
    assert_eq!(b.problems.len(), MAX_PROBLEMS_PER_BLOCK + 1);
    assert_eq!(
        b.problems.last().unwrap().message,
        "80 more problems not listed"
    );
}

/// 10 MB of mixed output with 10,000 blocks (the size the bench measures).
pub(crate) fn big_output() -> String {
    let block = fixture!("seed002_clarification_needed.txt");
    let chatter =
        "tool: read_file src/main.rs (ok)\nthinking about the cache layer and what to do next...\n";
    let size = 10 << 20;
    let mut out = String::with_capacity(size + 4096);
    for i in 0..10_000 {
        out.push_str(&block.replace("bg-task-abc", &format!("bg-task-{i}")));
        while out.len() < (i + 1) * (size / 10_000) {
            out.push_str(chatter);
        }
    }
    out
}

#[test]
fn ten_megabytes_with_ten_thousand_blocks() {
    let text = big_output();
    let p = parse(&text);
    assert_eq!(p.blocks.len(), 10_000);
    assert!(p.blocks.iter().all(Block::is_well_formed));
    assert_eq!(
        p.blocks[9_999]
            .clarification_needed()
            .unwrap()
            .agent_id
            .as_deref(),
        Some("bg-task-9999")
    );
    // One unterminated block at the top swallows the rest, as one malformed block.
    let p = parse(&format!("[STOP_WORK]\n{text}"));
    assert_eq!(p.blocks.len(), 1);
    assert!(p.blocks[0].problems.len() <= MAX_PROBLEMS_PER_BLOCK + 2);
}

#[test]
fn routing_finds_the_first_block_of_a_kind() {
    let answer = "I need more input.\n[STOP_WORK]\nblocker_type: error\n[/STOP_WORK]\n[CLARIFICATION_NEEDED]\nquestions:\n- Which one?\nto: architect\n[/CLARIFICATION_NEEDED]\n";
    let p = parse(answer);
    let asked = p.first(BlockName::ClarificationNeeded).unwrap();
    assert_eq!(asked.start_line, 5);
    let q = asked.clarification_needed().unwrap();
    assert_eq!(
        (q.questions.as_slice(), q.to.as_deref()),
        (&[String::from("Which one?")][..], Some("architect"))
    );
    assert_eq!(
        p.first(BlockName::StopWork)
            .unwrap()
            .stop_work()
            .unwrap()
            .blocker_type,
        "error"
    );
    assert!(p.first(BlockName::DelegateWork).is_none());
}

#[test]
fn blocks_serialise_for_json_reports() {
    let p = parse(fixture!("seed002_delegate_work.txt"));
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["blocks"][0]["block"], "DELEGATE_WORK");
    assert_eq!(v["blocks"][0]["startLine"], 2);
    assert_eq!(v["blocks"][0]["wellFormed"], true);
    assert_eq!(
        v["blocks"][0]["fields"]["independence"],
        "can_proceed_parallel"
    );
    let s = serde_json::to_value(p.blocks[0].signal().unwrap()).unwrap();
    assert_eq!(s["block"], "DELEGATE_WORK");
    assert_eq!(s["independence"], "can_proceed_parallel");
    assert_eq!(
        s["newTaskDescription"],
        "Analyze module 2 (payments) for security issues"
    );
}
