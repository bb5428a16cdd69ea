//! Tests of [`super`]: the key mix is a bijection, an entry is 10 bytes,
//! and the pass and the capture see every key.

use super::*;

#[test]
fn the_key_mix_is_a_bijection_given_back_whole() {
    for seed in [0, 1, u64::MAX, 0x1234_5678_9abc_def0] {
        let mix = KeyMix { seed };
        for key in [
            0,
            1,
            2,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            0xdead_beef_cafe_f00d,
        ] {
            assert_eq!(mix.unmix(mix.mix(key)), key, "seed {seed:x} key {key:x}");
        }
        let mut state = seed | 1;
        for _ in 0..10_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            assert_eq!(mix.unmix(mix.mix(state)), state);
        }
    }
    assert_eq!(MIX_FIRST.wrapping_mul(MIX_FIRST_INVERSE), 1);
    assert_eq!(MIX_SECOND.wrapping_mul(MIX_SECOND_INVERSE), 1);
}

#[test]
fn an_entry_is_ten_bytes_and_gives_back_its_bits_and_node() {
    assert_eq!(size_of::<DocumentKeyEntry>(), 10);
    let low = (1 << 48) - 1;
    for node in [0, 1, NodeId::MAX - 1] {
        let entry = DocumentKeyFormat::entry(low, node, 32);
        assert_ne!(entry, DocumentKeyFormat::VACANT);
        assert_eq!(
            (
                DocumentKeyFormat::low(entry, 32),
                DocumentKeyFormat::node(entry, 32)
            ),
            (low, node)
        );
    }
}

/// Keys spread over many shards of a few entries each.
fn many_shards() -> DocumentKeys {
    DocumentKeys {
        table: KeyNodeTable::splitting_at(2048),
        ..DocumentKeys::default()
    }
}

/// A cheap generator of keys, nodes and choices.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }
}

fn held(keys: &DocumentKeys) -> std::collections::BTreeMap<u64, NodeId> {
    let mix = keys.table.mix();
    keys.table
        .entries()
        .map(|(mixed, node)| (mix.unmix(mixed), node))
        .collect()
}

#[test]
fn a_pass_in_pieces_forgets_every_key_of_a_gone_node_while_keys_come_and_go() {
    for seed in 0..20 {
        let mut draws = Draws(seed);
        let mut keys = many_shards();
        for _ in 0..3_000 {
            let node = (draws.next() % 1_000) as NodeId;
            keys.set(DocumentKey(draws.next()), node);
        }
        assert!(keys.table.shard_count() > 16);
        // Nodes below 300 are gone; keys added during the pass name live
        // nodes, so shards grow and split under it.
        let gone = |node: NodeId| node < 300;
        let mut added = Vec::new();
        let mut ended = false;
        let mut pieces = 0;
        while !ended {
            for _ in 0..draws.next() % 40 {
                let key = DocumentKey(draws.next());
                let node = 300 + (draws.next() % 700) as NodeId;
                keys.set(key, node);
                added.push((key.0, node));
            }
            ended = keys.sweep_some_keeping(1 + (draws.next() % 200) as usize, |node| !gone(node));
            pieces += 1;
        }
        assert!(pieces > 10, "{pieces}");
        let after = held(&keys);
        assert_eq!(after.len(), keys.len());
        assert!(after.values().all(|&node| !gone(node)), "seed {seed}");
        for (key, node) in added {
            assert_eq!(after.get(&key), Some(&node), "seed {seed}");
        }
    }
}

#[test]
fn a_capture_gives_the_keys_as_they_were_at_its_start_whatever_changes_meanwhile() {
    for seed in 0..20 {
        let mut draws = Draws(seed);
        let mut keys = many_shards();
        let mut present = Vec::new();
        for _ in 0..3_000 {
            let key = DocumentKey(draws.next());
            keys.set(key, (draws.next() % 1_000) as NodeId);
            present.push(key);
        }
        let at_start = held(&keys);
        keys.start_capture(None);
        let mut done = false;
        while !done {
            for _ in 0..draws.next() % 30 {
                match draws.next() % 4 {
                    0 => {
                        keys.set(DocumentKey(draws.next()), 7);
                    }
                    1 => {
                        let key = present[(draws.next() % present.len() as u64) as usize];
                        keys.set(key, 8);
                    }
                    2 => {
                        let key = present[(draws.next() % present.len() as u64) as usize];
                        keys.take(key);
                    }
                    _ => {
                        keys.sweep_some_keeping(50, |node| node % 5 != 0);
                    }
                }
            }
            done = keys.capture_some(1 + (draws.next() % 300) as usize);
        }
        let Some(image) = keys.take_capture() else {
            panic!("the capture ended");
        };
        let captured: std::collections::BTreeMap<u64, NodeId> = image
            .iter()
            .map(|entry| (entry.key(), entry.node))
            .collect();
        assert_eq!(captured.len(), image.len(), "a key copied twice");
        assert_eq!(captured, at_start, "seed {seed}");
    }
}

#[test]
fn keys_given_at_once_keep_the_later_of_a_key_given_twice() {
    let pairs = vec![
        (DocumentKey(5), 1),
        (DocumentKey(9), 2),
        (DocumentKey(5), 3),
        (DocumentKey(u64::MAX), 4),
        (DocumentKey(0), 5),
    ];
    let keys = DocumentKeys::from_numbered(pairs);
    let expected: std::collections::BTreeMap<u64, NodeId> = [(5, 3), (9, 2), (u64::MAX, 4), (0, 5)]
        .into_iter()
        .collect();
    assert_eq!(held(&keys), expected);
    assert_eq!(keys.len(), 4);
}
