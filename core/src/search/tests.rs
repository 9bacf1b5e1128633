use super::*;
use crate::ledger::Ledger;
use crate::ops::{Action, NewRequest};
use crate::signing::Signers;
use crate::testkit::{apply, ask, plain, signed_ledger, MIN, T0};

fn on(issue: u64, req: NewRequest) -> NewRequest {
    NewRequest {
        issue_number: issue,
        ..req
    }
}

/// Issue 42 of the testkit (cache resolved by the agents, scope resolved by a person, eviction
/// stale), and issue 7: a cache question resolved later, with a field.
fn ledgers() -> Vec<Ledger> {
    let keys = Signers::new();
    let mut req = on(
        7,
        plain(
            "engineer",
            "architect",
            "Cache",
            "Redis or memcached cache?",
        ),
    );
    req.field = Some("cache.backend".into());
    let l = ask(None, &req, T0 + 10 * MIN, &keys);
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Memcached.".into(),
    };
    let l = apply(&l, "CLR-7-001", answer, T0 + 11 * MIN, &keys);
    let resolve = Action::Resolve {
        from: None,
        message: None,
    };
    let l = apply(&l, "CLR-7-001", resolve, T0 + 12 * MIN, &keys);
    vec![signed_ledger(&keys), l]
}

fn candidates(ls: &[Ledger]) -> Vec<(u32, &Record)> {
    ls.iter()
        .flat_map(|l| l.clarifications.iter().map(move |r| (l.issue_number, r)))
        .collect()
}

fn ids(hits: &[Hit]) -> Vec<(&str, u8)> {
    hits.iter().map(|h| (h.id.as_str(), h.score)).collect()
}

#[test]
fn stop_words_are_sorted_for_the_binary_search() {
    assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(query_words("Which cache should we use?"), ["cache"]);
    assert_eq!(query_words("or the"), ["or", "the"]);
}

#[test]
fn more_words_found_rank_first_then_the_newest() {
    let ls = ledgers();
    let q = Query {
        text: "redis cache",
        field: None,
    };
    let hits = search(&q, &Filter::default(), candidates(&ls));
    // Both cache records hold both words; issue 7's question has fewer others. Nothing else
    // shares a word.
    assert_eq!(ids(&hits), [("CLR-7-001", 92), ("CLR-42-001", 88)]);
    let d = hits[1].decision.as_ref().unwrap();
    assert_eq!(
        (d.by.as_str(), d.text.as_str()),
        ("engineer", "Redis, see ADR-7.")
    );
    assert_eq!(hits[1].question, "Redis or in-process?");
    assert_eq!(hits[1].status, Status::Resolved);
}

#[test]
fn the_same_field_ranks_before_a_better_text_score() {
    let ls = ledgers();
    let q = Query {
        text: "redis in-process",
        field: Some("cache.backend"),
    };
    let hits = search(&q, &Filter::default(), candidates(&ls));
    assert_eq!(hits[0].id, "CLR-7-001");
    assert!(hits[0].same_field);
    assert!(hits[0].score < hits[1].score, "{hits:?}");
}

#[test]
fn filters_and_limit() {
    let ls = ledgers();
    let q = Query::default();
    let all = search(&q, &Filter::default(), candidates(&ls));
    // No words: every record, newest first.
    assert_eq!(
        ids(&all),
        [
            ("CLR-42-003", 0),
            ("CLR-7-001", 0),
            ("CLR-42-002", 0),
            ("CLR-42-001", 0)
        ]
    );
    let resolved = Filter {
        statuses: vec![Status::Resolved],
        issue: Some(42),
        ..Filter::default()
    };
    assert_eq!(search(&q, &resolved, candidates(&ls)).len(), 2);
    let to_pm = Filter {
        to: Some("product-manager".into()),
        ..Filter::default()
    };
    let hits = search(&q, &to_pm, candidates(&ls));
    assert_eq!(hits.len(), 1);
    let d = hits[0].decision.as_ref().unwrap();
    assert_eq!(
        (d.by.as_str(), d.text.as_str()),
        ("human", "export is out of scope")
    );
    let other = Filter {
        not_issue: Some(42),
        limit: Some(1),
        ..Filter::default()
    };
    assert_eq!(
        ids(&search(&q, &other, candidates(&ls))),
        [("CLR-7-001", 0)]
    );
    assert_eq!(check_limit(100).unwrap(), 100);
    assert_eq!(
        check_limit(0).unwrap_err().to_string(),
        "invalid input: `limit` 0 is out of range: expected 1 to 100"
    );
}

#[test]
fn the_score_is_bounded_and_a_word_found_nowhere_lowers_it() {
    let ls = ledgers();
    let r = &ls[0].clarifications[0];
    let exact = query_words("Cache layer: Redis or in-process?");
    assert_eq!(text_score(&exact, r), 100);
    let half = query_words("redis postgres");
    assert!(text_score(&half, r) < 50, "{}", text_score(&half, r));
    assert_eq!(text_score(&query_words("kubernetes"), r), 0);
    assert_eq!(text_score(&[], r), 0);
    // Open records carry no decision.
    assert_eq!(decision_of(&ls[0].clarifications[2]), None);
}

#[test]
fn related_are_resolved_records_of_other_issues_above_the_score_or_of_the_field() {
    let ls = ledgers();
    let q = Query {
        text: "Cache layer: Redis or in-process LRU?",
        field: None,
    };
    // Asked on issue 7: issue 42's cache record is close enough, 7's own is left out.
    let hits = related(&q, 7, 60, candidates(&ls));
    assert_eq!(ids(&hits), [("CLR-42-001", 80)]);
    assert!(related(&q, 7, 81, candidates(&ls)).is_empty());
    // Asked on issue 42 with issue 7's field: its record is related whatever its score.
    let field = Query {
        text: "Which eviction?",
        field: Some("cache.backend"),
    };
    assert_eq!(
        ids(&related(&field, 42, 60, candidates(&ls))),
        [("CLR-7-001", 0)]
    );
    // Open records (CLR-42-003) are never related.
    let open = Query {
        text: "LRU or LFU eviction?",
        field: None,
    };
    assert!(related(&open, 1, 0, candidates(&ls))
        .iter()
        .all(|h| h.status == Status::Resolved));
}

/// What an index does with a probe: counts from each record's [`probe::Indexed`] entry, the
/// core's key, the best `limit` — the order a scan gives, for search and for `related`.
fn by_probe(p: &probe::Probe, ls: &[Ledger]) -> Vec<String> {
    let mut keyed: Vec<(probe::RankKey, String)> = candidates(ls)
        .into_iter()
        .filter(|(n, r)| p.filter.admits(*n, r))
        .filter_map(|(n, r)| {
            let ix = probe::indexed(n, r);
            Some((p.key(&p.counts(&ix))?, ix.id))
        })
        .collect();
    keyed.sort_by_key(|k| std::cmp::Reverse(k.0));
    keyed.truncate(p.limit);
    keyed.into_iter().map(|(_, id)| id).collect()
}

#[test]
fn an_index_probe_gives_the_scans_order() {
    let ls = ledgers();
    let texts = [
        "cache",
        "Redis cache eviction",
        "scope",
        "",
        "or the",
        "nothing here",
    ];
    for text in texts {
        for field in [None, Some("cache.backend")] {
            let q = Query { text, field };
            for filter in [
                Filter::default(),
                Filter {
                    limit: Some(1),
                    ..Filter::default()
                },
            ] {
                let scan: Vec<String> = search(&q, &filter, candidates(&ls))
                    .into_iter()
                    .map(|h| h.id)
                    .collect();
                assert_eq!(
                    by_probe(&probe::Probe::search(&q, &filter), &ls),
                    scan,
                    "{text:?}"
                );
            }
            for min in [0, 40, 90] {
                let scan: Vec<String> = related(&q, 42, min, candidates(&ls))
                    .into_iter()
                    .map(|h| h.id)
                    .collect();
                assert_eq!(
                    by_probe(&probe::Probe::related(&q, 42, min), &ls),
                    scan,
                    "{text:?}"
                );
            }
        }
    }
}

#[test]
fn related_needs_the_fewest_words_its_minimum_score_allows() {
    // Every record that `related` takes at a minimum score has at least that many words.
    let ls = ledgers();
    for text in [
        "Redis or memcached cache eviction policy scope",
        "cache",
        "scope eviction",
    ] {
        for min in [0, 30, 60, 90, 100] {
            let q = Query { text, field: None };
            let p = probe::Probe::related(&q, 42, min);
            for (n, r) in candidates(&ls) {
                let ix = probe::indexed(n, r);
                let c = p.counts(&ix);
                if p.key(&c).is_some() && min > 0 {
                    assert!(
                        c.found as usize >= p.least_found(),
                        "{text:?} {min} {}",
                        ix.id
                    );
                }
            }
        }
    }
}

#[test]
fn no_score_reaches_a_minimum_with_fewer_words_than_least_found() {
    // Every count a record can have: qn words asked, found of them in its text, common in
    // its asked words (common ≤ found), asked_len asked words (≥ common).
    for qn in 1..=30u64 {
        for min in (5..=100u8).step_by(5) {
            let p = probe::Probe {
                words: (0..qn).map(|i| format!("w{i}")).collect(),
                field: None,
                filter: Filter::default(),
                min_score: Some(min),
                limit: 3,
            };
            let least = p.least_found() as u64;
            for found in 0..least.min(qn + 1) {
                for common in 0..=found {
                    for asked_len in common..=40 {
                        assert!(
                            score_of(qn, found, common, asked_len) < min,
                            "{qn} {min} {found}"
                        );
                    }
                }
            }
        }
    }
}
