//! The ledger's unit tests: counts, keys, placements in doubt.
use super::tests_support::{ledger_with as ledger, place_at as place};
use super::*;

const ORIGINAL: &str = "周末去哪儿玩？这五个公园的秋景美到不想走";
const REPOST: &str = "转发：周末去哪儿玩？这五个公园的秋景美到不想走";
const OTHER: &str = "地铁三号线东延段今日开通，沿线设站七座";

fn documents(ledger: &Ledger) -> u64 {
    ledger.engine().forest().stats().documents
}

fn sent_to(id: &str) -> SentTo {
    SentTo {
        index: "news".into(),
        id: Some(id.into()),
    }
}

#[test]
fn a_placement_in_doubt_keeps_where_it_was_sent_and_a_replay_agrees() {
    let mut ledger = ledger(None);
    ledger.enable_journal();
    // Two copies of one text and another text in flight; one of each
    // text answered, one placement never sent (taken back).
    let first = place(&mut ledger, ORIGINAL, 0).fingerprint;
    ledger.sending(first, sent_to("1"));
    let copy = place(&mut ledger, ORIGINAL, 1).fingerprint;
    assert_eq!(copy, first);
    ledger.sending(copy, sent_to("2"));
    let other = place(&mut ledger, OTHER, 2).fingerprint;
    ledger.sending(other, sent_to("3"));
    let unsent = place(&mut ledger, REPOST, 3).fingerprint;
    ledger.stored(DocumentKey::new("news", "1"), first);
    ledger.stored(DocumentKey::new("news", "3"), other);
    ledger.not_stored(unsent);
    assert_eq!(ledger.sent_records(), vec![(copy, sent_to("2"))]);
    // A placement with no target (a state from before targets): the
    // crash rule; the one sent stays pending, to be read back.
    let untargeted = place(&mut ledger, REPOST, 4).fingerprint;
    let documents_before = documents(&ledger);
    let in_doubt = ledger.resolve_in_doubt();
    let mut expected = vec![
        InDoubt {
            fingerprint: copy,
            sent_to: Some(sent_to("2")),
        },
        InDoubt {
            fingerprint: untargeted,
            sent_to: None,
        },
    ];
    expected.sort_by(|a, b| (a.fingerprint, &a.sent_to).cmp(&(b.fingerprint, &b.sent_to)));
    assert_eq!(in_doubt, expected);
    assert_eq!(
        documents(&ledger),
        documents_before - 1,
        "only the untargeted one uncounted"
    );
    assert_eq!(ledger.pending_records(), vec![(copy, 1)]);
    assert_eq!(ledger.sent_records(), vec![(copy, sent_to("2"))]);
    // The journal replayed on an empty ledger gives the same.
    let mut replayed = super::tests_support::ledger();
    for effect in ledger.take_journal() {
        replayed.replay(effect);
    }
    assert_eq!(replayed.pending_records(), ledger.pending_records());
    assert_eq!(replayed.sent_records(), ledger.sent_records());
    // Read back later: found under its key, nothing is pending any more.
    ledger.stored(DocumentKey::new("news", "2"), copy);
    assert!(ledger.pending_records().is_empty());
    assert!(ledger.sent_records().is_empty());
}

#[test]
fn a_rejected_document_leaves_nothing() {
    let mut ledger = ledger(None);
    let placed = place(&mut ledger, ORIGINAL, 0);
    ledger.not_stored(placed.fingerprint);
    assert_eq!(ledger.engine().forest().stats().nodes, 0);
    assert_eq!(documents(&ledger), 0);
}

#[test]
fn a_document_the_cluster_does_not_hold_keeps_its_node_uncounted() {
    let mut ledger = ledger(None);
    let placed = place(&mut ledger, ORIGINAL, 0);
    ledger.not_found(placed.fingerprint);
    assert_eq!(ledger.engine().forest().stats().nodes, 1);
    assert_eq!(documents(&ledger), 0);
    assert!(ledger.pending_records().is_empty());
}

#[test]
fn a_retry_of_the_same_key_counts_once() {
    let mut ledger = ledger(None);
    let key = DocumentKey::new("news", "1");
    for now in 0..3 {
        let placed = place(&mut ledger, ORIGINAL, now);
        ledger.stored(key, placed.fingerprint);
    }
    assert_eq!(documents(&ledger), 1);
    assert_eq!(ledger.stats().restored, 2);
}

#[test]
fn reindexing_a_key_with_other_text_moves_its_count() {
    let mut ledger = ledger(None);
    let key = DocumentKey::new("news", "1");
    let first = place(&mut ledger, ORIGINAL, 0);
    ledger.stored(key, first.fingerprint);
    let second = place(&mut ledger, OTHER, 1);
    ledger.stored(key, second.fingerprint);
    assert_eq!(documents(&ledger), 1);
    // The first text's node had no other document: it is gone.
    assert!(!ledger.engine().forest().contains(first.fingerprint));
    assert_eq!(ledger.fingerprint_of(key), Some(second.fingerprint));
}

#[test]
fn a_delete_takes_the_count_back_but_the_class_stays_for_its_members() {
    let mut ledger = ledger(None);
    let original = place(&mut ledger, ORIGINAL, 0);
    ledger.stored(DocumentKey::new("news", "1"), original.fingerprint);
    let repost = place(&mut ledger, REPOST, 1);
    ledger.stored(DocumentKey::new("news", "2"), repost.fingerprint);
    assert_eq!(repost.root, original.root);
    ledger.deleted(DocumentKey::new("news", "1"));
    let class = ledger
        .engine()
        .forest()
        .class(original.root)
        .expect("class");
    assert_eq!(class.documents, 1);
    // Deleting an unknown key changes nothing.
    ledger.deleted(DocumentKey::new("news", "404"));
    assert_eq!(ledger.stats().deleted, 1);
}

#[test]
fn the_key_that_marks_an_empty_place_is_still_a_key() {
    let mut ledger = ledger(None);
    let marker = DocumentKey(u64::MAX);
    let placed = place(&mut ledger, ORIGINAL, 0);
    ledger.stored(marker, placed.fingerprint);
    assert_eq!(ledger.fingerprint_of(marker), Some(placed.fingerprint));
    assert_eq!(ledger.stats().keys, 1);
    // A retry under it counts once; a delete finds it.
    let again = place(&mut ledger, ORIGINAL, 1);
    ledger.stored(marker, again.fingerprint);
    assert_eq!(documents(&ledger), 1);
    ledger.deleted(marker);
    assert_eq!(ledger.fingerprint_of(marker), None);
    assert_eq!(documents(&ledger), 0);
}

#[test]
fn keys_are_swept_with_their_nodes_and_the_rest_stay() {
    let mut ledger = ledger(Some(10));
    let mut kept = Vec::new();
    for id in 0..200 {
        let text = format!("{OTHER} 第{id}版");
        let now = if id % 2 == 0 { 0 } else { 100 };
        let placed = place(&mut ledger, &text, now);
        let key = DocumentKey::new("news", &id.to_string());
        ledger.stored(key, placed.fingerprint);
        if id % 2 == 1 {
            kept.push((key, placed.fingerprint));
        }
    }
    while ledger.expire(105, 1000).1 {}
    ledger.sweep_keys();
    assert_eq!(ledger.stats().keys, kept.len());
    for (key, fingerprint) in kept {
        assert_eq!(ledger.fingerprint_of(key), Some(fingerprint));
    }
}

#[test]
fn the_same_id_in_another_index_is_another_document() {
    let mut ledger = ledger(None);
    let first = place(&mut ledger, ORIGINAL, 0);
    ledger.stored(DocumentKey::new("news-1", "1"), first.fingerprint);
    let second = place(&mut ledger, ORIGINAL, 1);
    ledger.stored(DocumentKey::new("news-2", "1"), second.fingerprint);
    assert_eq!(documents(&ledger), 2);
}

#[test]
fn keys_of_expired_nodes_are_swept() {
    let mut ledger = ledger(Some(10));
    for id in 0..1100 {
        let placed = place(&mut ledger, &format!("{OTHER} 编号{id}"), 0);
        ledger.stored(
            DocumentKey::new("news", &id.to_string()),
            placed.fingerprint,
        );
    }
    assert_eq!(ledger.stats().keys, 1100);
    while ledger.expire(1_000, 10_000).1 {}
    assert_eq!(ledger.engine().forest().stats().nodes, 0);
    assert_eq!(ledger.stats().keys, 0);
}

#[test]
fn a_key_whose_node_expired_does_not_name_the_node_its_text_makes_again() {
    let mut ledger = ledger(Some(10));
    // Other keys, so that many stay live beside the one that expires.
    for id in 0..20 {
        let placed = place(&mut ledger, &format!("{OTHER} 编号{id}"), 100);
        ledger.stored(
            DocumentKey::new("news", &id.to_string()),
            placed.fingerprint,
        );
    }
    let old_key = DocumentKey::new("news", "old");
    let first = place(&mut ledger, ORIGINAL, 0);
    ledger.stored(old_key, first.fingerprint);
    let (removed, _) = ledger.expire(105, 1);
    assert_eq!(removed, 1);
    // The same text again: a new node with the old fingerprint.
    let again = place(&mut ledger, ORIGINAL, 106);
    assert_eq!(again.fingerprint, first.fingerprint);
    ledger.stored(DocumentKey::new("news", "new"), again.fingerprint);
    assert_eq!(ledger.fingerprint_of(old_key), None);
    // Deleting the old document does not take the new one's count.
    ledger.deleted(old_key);
    let node = ledger.engine().forest().node(again.fingerprint);
    assert_eq!(node.map(|node| node.documents), Some(1));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Whatever was removed and made again, and wherever the pass over the
    /// keys is: a key names the node it was stored at while that node
    /// lives, and nothing once it is gone (a number reused too early would
    /// name a newer node).
    #[test]
    fn a_key_names_its_node_while_it_lives_and_nothing_after(
        operations in proptest::collection::vec(
            (0u8..6, 0usize..2000, 0usize..400, 1usize..4), 1..1500),
    ) {
        let mut ledger = ledger(Some(40));
        let mut model: std::collections::HashMap<DocumentKey, (Fingerprint, Millis)> =
            std::collections::HashMap::new();
        let mut now: Millis = 0;
        for (operation, id, text, budget) in operations {
            now += 1;
            let key = DocumentKey::new("news", &id.to_string());
            match operation {
                0..=2 => {
                    let placed = place(&mut ledger, &format!("{OTHER} 编号{text}"), now);
                    ledger.stored(key, placed.fingerprint);
                    let born = ledger.engine().forest().node(placed.fingerprint).map(|node| node.born);
                    if let Some(born) = born {
                        model.insert(key, (placed.fingerprint, born));
                    }
                }
                3 => {
                    let placed = place(&mut ledger, &format!("{ORIGINAL} 第{text}版"), now);
                    ledger.not_stored(placed.fingerprint);
                }
                4 => {
                    ledger.deleted(key);
                    model.remove(&key);
                }
                _ => {
                    ledger.expire(now, budget);
                }
            }
            for (&key, &(fingerprint, born)) in &model {
                let alive = ledger
                    .engine()
                    .forest()
                    .node(fingerprint)
                    .is_some_and(|node| node.born == born);
                proptest::prop_assert_eq!(ledger.fingerprint_of(key), alive.then_some(fingerprint));
            }
        }
    }
}
