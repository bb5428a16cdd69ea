//! Property tests of the parent forest against a brute-force model.
//!
//! `ModelForest` (`forest_model`) is the forest of SPEC §3 written as
//! plainly as possible (a vector of nodes, every question answered by a
//! full scan). Random operation
//! sequences run against both; every assignment must match the model's, and
//! after every operation all invariants of the real forest are checked against
//! the model's state.

use std::collections::{BTreeMap, BTreeSet};

use super::forest_model::{ModelForest, distance};
use neardup::forest::expiry::RemovedNodes;
use neardup::forest::{Assignment, Forest, ForestConfig, Indexing, NodeView, Placement};
use neardup::units::{Fingerprint, Millis, NodeId};
use proptest::collection::vec;
use proptest::prelude::*;

const BASE_COUNT: usize = 4;
const START_TIME: Millis = 1_700_000_000_000;

#[derive(Debug, Clone)]
enum Operation {
    /// Assign a variant of one of the base fingerprints.
    Assign {
        base: usize,
        flipped_bits: Vec<u32>,
        step: Millis,
    },
    /// Assign a variant of a base with extra neighbours picked among the nodes
    /// (as the engine does for short texts found by shingle overlap), the
    /// new node left out of the index when `text_only` (as the engine does
    /// for a short text alone).
    AssignWithExtras {
        base: usize,
        flipped_bits: Vec<u32>,
        extra_picks: Vec<usize>,
        text_only: bool,
        step: Millis,
    },
    /// Assign a fingerprint that is (most likely) already a node.
    AssignExisting {
        pick: usize,
        step: Millis,
    },
    ReachRoot {
        pick: usize,
        step: Millis,
    },
    ForgetDocument {
        pick: usize,
    },
    RemoveIfUnused {
        pick: usize,
    },
    Expire {
        budget: usize,
        step: Millis,
    },
    ExpireAll {
        step: Millis,
    },
}

fn time_step() -> impl Strategy<Value = Millis> {
    prop_oneof![
        8 => 0..60i64,
        2 => -40..0i64,
        1 => 200..900i64,
    ]
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        10 => (0..BASE_COUNT, vec(0..64u32, 0..=5), time_step()).prop_map(
            |(base, flipped_bits, step)| Operation::Assign { base, flipped_bits, step }
        ),
        2 => (
            0..BASE_COUNT,
            vec(0..64u32, 0..=8),
            vec(any::<usize>(), 1..=3),
            any::<bool>(),
            time_step(),
        )
            .prop_map(|(base, flipped_bits, extra_picks, text_only, step)| {
                Operation::AssignWithExtras { base, flipped_bits, extra_picks, text_only, step }
            }),
        3 => (any::<usize>(), time_step())
            .prop_map(|(pick, step)| Operation::AssignExisting { pick, step }),
        2 => (any::<usize>(), time_step())
            .prop_map(|(pick, step)| Operation::ReachRoot { pick, step }),
        2 => any::<usize>().prop_map(|pick| Operation::ForgetDocument { pick }),
        2 => any::<usize>().prop_map(|pick| Operation::RemoveIfUnused { pick }),
        2 => (0..6usize, time_step()).prop_map(|(budget, step)| Operation::Expire { budget, step }),
        1 => time_step().prop_map(|step| Operation::ExpireAll { step }),
    ]
}

#[derive(Debug, Clone)]
struct Scenario {
    bases: [u64; BASE_COUNT],
    max_distance: u32,
    retention: Millis,
    operations: Vec<Operation>,
}

fn scenario_with(operation_count: std::ops::Range<usize>) -> impl Strategy<Value = Scenario> {
    (
        proptest::array::uniform4(any::<u64>()),
        prop_oneof![1 => Just(0u32), 1 => Just(1), 1 => Just(2), 3 => Just(3), 1 => Just(4)],
        50..1500i64,
        vec(operation(), operation_count),
    )
        .prop_map(|(bases, max_distance, retention, operations)| Scenario {
            bases,
            max_distance,
            retention,
            operations,
        })
}

fn scenario() -> impl Strategy<Value = Scenario> {
    scenario_with(1..120)
}

/// A deterministic veto: roughly one candidate in three is rejected.
fn salted_veto(salt: u64) -> impl Fn(Fingerprint) -> bool {
    move |candidate: Fingerprint| {
        let mixed = (candidate ^ salt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        !(mixed >> 61).is_multiple_of(3)
    }
}

/// A fingerprint to look up: a live node when there is one, else a base.
fn pick_fingerprint(model: &ModelForest, bases: &[u64], pick: usize) -> Fingerprint {
    pick_among(
        model.nodes.len(),
        |at| model.nodes[at].fingerprint,
        bases,
        pick,
    )
}

/// A live node's fingerprint (`live(at)` for `at` below `count`), or one
/// made from a base once in eight picks and when there is none.
fn pick_among(
    count: usize,
    live: impl Fn(usize) -> Fingerprint,
    bases: &[u64],
    pick: usize,
) -> Fingerprint {
    if count == 0 || pick.is_multiple_of(8) {
        bases[pick % bases.len()] ^ (pick as u64).rotate_left(17)
    } else {
        live(pick % count)
    }
}

fn check_invariants(
    forest: &Forest,
    model: &ModelForest,
    roots_must_be_far_apart: bool,
) -> Result<(), TestCaseError> {
    let max_distance = model.max_distance;
    prop_assert_eq!(forest.len(), model.nodes.len());

    // Every model node is exactly one forest node with the same data.
    for node in &model.nodes {
        let expected = NodeView {
            fingerprint: node.fingerprint,
            root: node.root,
            born: node.born,
            touched: node.touched,
            documents: node.documents,
            is_root: node.root == node.fingerprint,
        };
        prop_assert_eq!(forest.node(node.fingerprint), Some(expected));
        prop_assert_eq!(forest.root_of(node.fingerprint), Some(node.root));
    }
    let forest_nodes: BTreeSet<Fingerprint> =
        forest.iter_nodes().map(|view| view.fingerprint).collect();
    let model_nodes: BTreeSet<Fingerprint> =
        model.nodes.iter().map(|node| node.fingerprint).collect();
    prop_assert_eq!(&forest_nodes, &model_nodes);

    // Height ≤ 2, roots never older than their leaves.
    for view in forest.iter_nodes() {
        let root = forest.node(view.root).expect("a leaf's root is a node");
        prop_assert!(
            root.is_root,
            "leaf {:x} hangs under a leaf",
            view.fingerprint
        );
        prop_assert!(root.touched >= view.touched);
    }

    // Roots pairwise more than k apart (only without vetoes), unless the
    // earlier of the two is left out of the index: the later one's query
    // could not find it.
    let roots = model.roots();
    if roots_must_be_far_apart {
        for (position, &left) in roots.iter().enumerate() {
            for &right in &roots[position + 1..] {
                let (left_node, right_node) = (
                    model.get(left).expect("a root is a node"),
                    model.get(right).expect("a root is a node"),
                );
                let earlier = if left_node.arrival < right_node.arrival {
                    left_node
                } else {
                    right_node
                };
                prop_assert!(
                    !earlier.within_k || distance(left, right) > max_distance,
                    "roots {:x} and {:x} are within k",
                    left,
                    right
                );
            }
        }
    }

    // Classes: members, leaf counts, document totals.
    let mut total_documents = 0;
    for &root in &roots {
        let class = forest.class(root).expect("every root names a class");
        let mut expected_members = model.leaves_of(root);
        expected_members.sort_unstable();
        prop_assert_eq!(class.members[0], root);
        let mut leaves = class.members[1..].to_vec();
        leaves.sort_unstable();
        prop_assert_eq!(&leaves, &expected_members);
        prop_assert_eq!(class.nodes, expected_members.len() + 1);
        prop_assert_eq!(forest.leaf_count(root), Some(expected_members.len()));
        let documents = model.class_documents(root);
        prop_assert_eq!(class.documents, documents);
        prop_assert_eq!(forest.class_documents(root), Some(documents));
        total_documents += documents;
    }
    let stats = forest.stats();
    prop_assert_eq!(stats.nodes, model.nodes.len());
    prop_assert_eq!(stats.roots, roots.len());
    prop_assert_eq!(stats.documents, total_documents);

    // The index holds exactly the nodes placed within k.
    let index = forest.index();
    let within_k = || model.nodes.iter().filter(|node| node.within_k);
    prop_assert_eq!(index.len(), within_k().count());
    for node in &model.nodes {
        prop_assert_eq!(index.contains(node.fingerprint), node.within_k);
    }
    for query in model
        .nodes
        .iter()
        .take(5)
        .map(|node| node.fingerprint ^ 0b101)
    {
        let mut found = index.within(query);
        found.sort_unstable();
        let mut expected: Vec<(Fingerprint, u32)> = within_k()
            .map(|node| (node.fingerprint, distance(node.fingerprint, query)))
            .filter(|&(_, found_distance)| found_distance <= max_distance)
            .collect();
        expected.sort_unstable();
        prop_assert_eq!(found, expected);
    }
    Ok(())
}

/// Runs a scenario against the forest and the model; `veto_salt` switches on a
/// random veto.
fn run_scenario(scenario: &Scenario, veto_salt: Option<u64>) -> Result<(), TestCaseError> {
    let mut forest = Forest::new(ForestConfig {
        max_distance: scenario.max_distance,
        retention: Some(scenario.retention),
    })
    .expect("valid config");
    let mut model = ModelForest::new(scenario.max_distance);
    let confirm: Box<dyn Fn(Fingerprint) -> bool> = match veto_salt {
        Some(salt) => Box::new(salted_veto(salt)),
        None => Box::new(|_| true),
    };
    let mut now = START_TIME;
    let mut numbers: BTreeMap<Fingerprint, NodeId> = BTreeMap::new();

    for operation in &scenario.operations {
        match operation {
            Operation::Assign {
                base,
                flipped_bits,
                step,
            } => {
                now += step;
                let fingerprint = flip(scenario.bases[*base], flipped_bits);
                let placing = Placing::within_k(fingerprint, now, &confirm);
                assign_and_compare(&mut forest, &mut model, placing)?;
            }
            Operation::AssignWithExtras {
                base,
                flipped_bits,
                extra_picks,
                text_only,
                step,
            } => {
                now += step;
                let fingerprint = flip(scenario.bases[*base], flipped_bits);
                let extras: Vec<Fingerprint> = extra_picks
                    .iter()
                    .map(|&pick| pick_fingerprint(&model, &scenario.bases, pick))
                    .collect();
                let placing = Placing {
                    extra_candidates: &extras,
                    indexing: indexing(*text_only),
                    ..Placing::within_k(fingerprint, now, &confirm)
                };
                assign_and_compare(&mut forest, &mut model, placing)?;
            }
            Operation::AssignExisting { pick, step } => {
                now += step;
                let fingerprint = pick_fingerprint(&model, &scenario.bases, *pick);
                let placing = Placing::within_k(fingerprint, now, &confirm);
                assign_and_compare(&mut forest, &mut model, placing)?;
            }
            Operation::ReachRoot { pick, step } => {
                now += step;
                let fingerprint = pick_fingerprint(&model, &scenario.bases, *pick);
                let expected = model.reach_root(fingerprint, now);
                prop_assert_eq!(forest.reach_root(fingerprint, now), expected);
            }
            Operation::ForgetDocument { pick } => {
                let fingerprint = pick_fingerprint(&model, &scenario.bases, *pick);
                let expected = model.forget_document(fingerprint);
                prop_assert_eq!(forest.forget_document(fingerprint), expected);
            }
            Operation::RemoveIfUnused { pick } => {
                let fingerprint = pick_fingerprint(&model, &scenario.bases, *pick);
                let expected = model.remove_if_unused(fingerprint);
                let removed = forest.remove_if_unused(fingerprint);
                check_removed_numbers(&removed, &numbers)?;
                let removed: BTreeSet<Fingerprint> = removed.fingerprints.into_iter().collect();
                prop_assert_eq!(removed, expected);
            }
            Operation::Expire { budget, step } => {
                now += step;
                let removed =
                    expire_and_compare(&mut forest, &mut model, now, *budget, scenario.retention)?;
                check_removed_numbers(&removed, &numbers)?;
            }
            Operation::ExpireAll { step } => {
                now += step;
                let removed = expire_and_compare(
                    &mut forest,
                    &mut model,
                    now,
                    usize::MAX,
                    scenario.retention,
                )?;
                check_removed_numbers(&removed, &numbers)?;
            }
        }
        check_invariants(&forest, &model, veto_salt.is_none())?;
        numbers = check_numbers(&forest, &model, &numbers)?;
    }
    Ok(())
}

/// Node numbers: every node has one, no two share one, it names the node
/// back, and a node keeps its number while it lives (others key data by
/// it). Returns the numbers now.
fn check_numbers(
    forest: &Forest,
    model: &ModelForest,
    before: &BTreeMap<Fingerprint, NodeId>,
) -> Result<BTreeMap<Fingerprint, NodeId>, TestCaseError> {
    let mut numbers = BTreeMap::new();
    let mut taken = BTreeSet::new();
    for node in &model.nodes {
        let number = forest.number(node.fingerprint);
        prop_assert!(number.is_some(), "{:x} has no number", node.fingerprint);
        let number = number.unwrap_or_default();
        prop_assert!(taken.insert(number), "number {} given twice", number);
        prop_assert!((number as usize) < forest.number_bound());
        prop_assert_eq!(forest.fingerprint_at(number), Some(node.fingerprint));
        if let Some(&earlier) = before.get(&node.fingerprint) {
            prop_assert_eq!(number, earlier, "{:x} renumbered", node.fingerprint);
        }
        numbers.insert(node.fingerprint, number);
    }
    Ok(numbers)
}

/// A removal reports each node with the number it had.
fn check_removed_numbers(
    removed: &RemovedNodes,
    numbers: &BTreeMap<Fingerprint, NodeId>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(removed.fingerprints.len(), removed.ids.len());
    for (fingerprint, id) in removed.fingerprints.iter().zip(&removed.ids) {
        prop_assert_eq!(numbers.get(fingerprint), Some(id));
    }
    Ok(())
}

fn flip(base: Fingerprint, bits: &[u32]) -> Fingerprint {
    bits.iter()
        .fold(base, |fingerprint, &bit| fingerprint ^ (1 << bit))
}

fn indexing(text_only: bool) -> Indexing {
    if text_only {
        Indexing::TextOnly
    } else {
        Indexing::WithinK
    }
}

/// One placement to make in the forest and the model alike.
struct Placing<'a> {
    fingerprint: Fingerprint,
    now: Millis,
    extra_candidates: &'a [Fingerprint],
    indexing: Indexing,
    confirm: &'a dyn Fn(Fingerprint) -> bool,
}

impl<'a> Placing<'a> {
    fn within_k(
        fingerprint: Fingerprint,
        now: Millis,
        confirm: &'a dyn Fn(Fingerprint) -> bool,
    ) -> Self {
        Placing {
            fingerprint,
            now,
            extra_candidates: &[],
            indexing: Indexing::WithinK,
            confirm,
        }
    }
}

fn assign_and_compare(
    forest: &mut Forest,
    model: &mut ModelForest,
    placing: Placing<'_>,
) -> Result<(), TestCaseError> {
    let Placing {
        fingerprint,
        now,
        extra_candidates,
        indexing,
        confirm,
    } = placing;
    let before = model.clone();
    let mut consulted = Vec::new();
    let assignment =
        forest.assign_with_candidates(fingerprint, now, extra_candidates, indexing, |candidate| {
            consulted.push(candidate);
            confirm(candidate)
        });
    let expected = model.assign(fingerprint, now, extra_candidates, indexing, confirm);
    prop_assert_eq!(assignment, expected, "assigning {:x}", fingerprint);

    // Only real neighbours placed within k are consulted, and never for an
    // existing node.
    if before.get(fingerprint).is_some() {
        prop_assert!(consulted.is_empty());
    }
    for &candidate in &consulted {
        prop_assert!(before.get(candidate).is_some_and(|node| node.within_k));
        prop_assert!(distance(candidate, fingerprint) <= before.max_distance);
        prop_assert_ne!(candidate, fingerprint);
    }
    // A vetoed candidate never decides: the chosen root has a confirmed
    // neighbour, and a new root means no neighbour was confirmed.
    match assignment.placement {
        Placement::ExistingNode => {}
        Placement::NewRoot => {
            prop_assert!(before.confirmed_roots(fingerprint, confirm).is_empty());
            prop_assert!(before.extra_roots(extra_candidates).is_empty());
        }
        Placement::JoinedRoot | Placement::ResolvedConflict { .. } => {
            let confirmed_under_root = before.nodes.iter().any(|node| {
                node.root == assignment.root
                    && node.within_k
                    && distance(node.fingerprint, fingerprint) <= before.max_distance
                    && confirm(node.fingerprint)
            });
            let extra_under_root = before
                .extra_roots(extra_candidates)
                .contains(&assignment.root);
            prop_assert!(confirmed_under_root || extra_under_root);
        }
    }
    Ok(())
}

fn expire_and_compare(
    forest: &mut Forest,
    model: &mut ModelForest,
    now: Millis,
    budget: usize,
    retention: Millis,
) -> Result<RemovedNodes, TestCaseError> {
    let cutoff = now - retention;
    let expired_before = model.expired(cutoff);
    let largest_tree = model
        .roots()
        .iter()
        .map(|&root| model.leaves_of(root).len() + 1)
        .max()
        .unwrap_or(0);
    let progress = forest.expire(now, budget);

    let removed: BTreeSet<Fingerprint> = progress.removed.fingerprints.iter().copied().collect();
    prop_assert_eq!(removed.len(), progress.removed.len(), "removed twice");
    for &fingerprint in &removed {
        prop_assert!(
            expired_before.contains(&fingerprint),
            "{:x} removed but not expired",
            fingerprint
        );
    }
    // A removed root takes all its leaves in the same call.
    let mut leaves_by_root: BTreeMap<Fingerprint, Vec<Fingerprint>> = BTreeMap::new();
    for node in &model.nodes {
        leaves_by_root
            .entry(node.root)
            .or_default()
            .push(node.fingerprint);
    }
    for (root, members) in &leaves_by_root {
        if removed.contains(root) {
            for member in members {
                prop_assert!(removed.contains(member));
            }
        }
    }
    // Budget: at most one tree beyond it.
    if budget == 0 {
        prop_assert!(removed.is_empty());
    } else {
        prop_assert!(removed.len() < budget.saturating_add(largest_tree));
    }
    for &fingerprint in &removed {
        model.remove(fingerprint);
    }
    if !progress.more_pending {
        prop_assert!(
            model.expired(cutoff).is_empty(),
            "expiry said done but {:?} remain",
            model.expired(cutoff)
        );
    }
    if budget == usize::MAX {
        prop_assert!(!progress.more_pending);
        prop_assert_eq!(&removed, &expired_before);
    }
    Ok(progress.removed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn forest_matches_the_model(scenario in scenario()) {
        run_scenario(&scenario, None)?;
    }

    #[test]
    fn vetoed_candidates_never_decide(scenario in scenario(), salt in any::<u64>()) {
        run_scenario(&scenario, Some(salt))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn forest_matches_the_model_over_long_runs(scenario in scenario_with(300..800)) {
        run_scenario(&scenario, None)?;
    }
}

#[test]
fn expiry_stats_count_every_removal() {
    let mut forest = Forest::new(ForestConfig {
        max_distance: 3,
        retention: Some(100),
    })
    .expect("valid config");
    for (step, fingerprint) in [0u64, 1, 0xff00, 0xff01, 1 << 40].into_iter().enumerate() {
        forest.assign(fingerprint, step as Millis);
    }
    let mut removed = 0;
    loop {
        let progress = forest.expire(1_000, 1);
        removed += progress.removed.len();
        if !progress.more_pending {
            break;
        }
    }
    assert_eq!(removed, 5);
    assert_eq!(forest.stats().expired_nodes, 5);
    assert!(forest.is_empty());
}

/// What one operation gave back: two forests that should be one compare
/// equal on these (removals as sets: a tree's leaves are listed in an
/// order recovery does not keep, and nothing depends on it).
#[derive(Debug, PartialEq)]
enum Outcome {
    Assigned(Assignment),
    Reached(Option<Fingerprint>),
    Forgot(bool),
    Removed(BTreeSet<Fingerprint>, bool),
}

/// Applies `operation` to `forest` alone (no model), picking nodes among
/// the live ones in fingerprint order, which does not depend on numbers.
fn apply(
    forest: &mut Forest,
    scenario: &Scenario,
    operation: &Operation,
    now: &mut Millis,
) -> Outcome {
    let mut live: Vec<Fingerprint> = forest.iter_nodes().map(|node| node.fingerprint).collect();
    live.sort_unstable();
    let pick = |pick: usize| pick_among(live.len(), |at| live[at], &scenario.bases, pick);
    let removed = |removed: RemovedNodes, more_pending: bool| {
        Outcome::Removed(removed.fingerprints.into_iter().collect(), more_pending)
    };
    match operation {
        Operation::Assign {
            base,
            flipped_bits,
            step,
        } => {
            *now += step;
            let fingerprint = flip(scenario.bases[*base], flipped_bits);
            Outcome::Assigned(forest.assign(fingerprint, *now))
        }
        Operation::AssignWithExtras {
            base,
            flipped_bits,
            extra_picks,
            text_only,
            step,
        } => {
            *now += step;
            let fingerprint = flip(scenario.bases[*base], flipped_bits);
            let extras: Vec<Fingerprint> = extra_picks.iter().map(|&at| pick(at)).collect();
            Outcome::Assigned(forest.assign_with_candidates(
                fingerprint,
                *now,
                &extras,
                indexing(*text_only),
                |_| true,
            ))
        }
        Operation::AssignExisting { pick: at, step } => {
            *now += step;
            Outcome::Assigned(forest.assign(pick(*at), *now))
        }
        Operation::ReachRoot { pick: at, step } => {
            *now += step;
            Outcome::Reached(forest.reach_root(pick(*at), *now))
        }
        Operation::ForgetDocument { pick: at } => {
            Outcome::Forgot(forest.forget_document(pick(*at)))
        }
        Operation::RemoveIfUnused { pick: at } => {
            removed(forest.remove_if_unused(pick(*at)), false)
        }
        Operation::Expire { budget, step } => {
            *now += step;
            let progress = forest.expire(*now, *budget);
            removed(progress.removed, progress.more_pending)
        }
        Operation::ExpireAll { step } => {
            *now += step;
            let progress = forest.expire(*now, usize::MAX);
            removed(progress.removed, progress.more_pending)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A forest rebuilt from its records (a restart, a standby) at any
    /// points behaves as the one that ran on: the same placements, the
    /// same nodes taken by each budgeted expiry (node numbers, which a
    /// restart changes, decide nothing), the same records at the end.
    #[test]
    fn a_forest_restored_at_any_point_goes_on_as_the_one_that_ran_on(
        scenario in scenario_with(1..200),
        restarts in vec(0..200usize, 1..6),
    ) {
        let config = ForestConfig {
            max_distance: scenario.max_distance,
            retention: Some(scenario.retention),
        };
        let mut ran_on = Forest::new(config).expect("valid config");
        let mut restarted = Forest::new(config).expect("valid config");
        let (mut now_ran_on, mut now_restarted) = (START_TIME, START_TIME);
        for (index, operation) in scenario.operations.iter().enumerate() {
            if restarts.contains(&index) {
                restarted = Forest::restore(config, &restarted.node_records(), restarted.counters())
                    .expect("its own records restore");
            }
            let expected = apply(&mut ran_on, &scenario, operation, &mut now_ran_on);
            let got = apply(&mut restarted, &scenario, operation, &mut now_restarted);
            prop_assert_eq!(got, expected, "operation {} ({:?})", index, operation);
        }
        prop_assert_eq!(restarted.node_records(), ran_on.node_records());
        prop_assert_eq!(restarted.stats().roots, ran_on.stats().roots);
        prop_assert_eq!(restarted.stats().documents, ran_on.stats().documents);
    }
}
