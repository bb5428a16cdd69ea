//! What a node keeps besides its forest record: its root, the exact-text
//! hashes that map to it, and the text it is confirmed by.
//!
//! Motivation: confirmation ([`crate::confirm`]) needs a node's text, the
//! exact fast path needs its hashes, and a snapshot must write both while
//! the engine goes on.
//!
//! Design: one shared (`Arc`) record per node. It never changes but for its
//! exact hashes (copied on write), so a snapshot holds pointers, not copies.
//!
//! Consequences: this is most of a node's memory (see
//! `benches/engine_scale.rs`).

use std::sync::Arc;

use crate::confirm::{LongText, NodeTexts, ShortText};
use crate::forest::NodeRecord;
use crate::units::Fingerprint;

#[derive(Debug, Clone)]
pub(super) struct NodeSideData {
    /// The node's root. Fixed for the node's life: trees never merge, and a
    /// root leaves only together with its whole tree.
    pub(super) root: Fingerprint,
    pub(super) exact_hashes: Vec<u64>,
    /// Set when the text that created the node was short.
    pub(super) short_text: Option<ShortText>,
    /// Set when it was long.
    pub(super) long_text: Option<LongText>,
}

impl NodeSideData {
    /// Heap bytes owned (not counting the struct itself).
    pub(super) fn heap_bytes(&self) -> usize {
        let short = self
            .short_text
            .as_ref()
            .map_or(0, |short| short.shingles.len() * 4 + short.letters.len());
        let long = self.long_text.as_ref().map_or(0, |long| {
            (long.sketch.len() + long.numbers.len()) * 4
                + long.headline.as_ref().map_or(0, |headline| headline.len())
                + long.lead.len()
        });
        self.exact_hashes.capacity() * 8 + short + long
    }

    pub(super) fn texts(&self) -> NodeTexts<'_> {
        NodeTexts {
            short: self.short_text.as_ref(),
            long: self.long_text.as_ref(),
        }
    }
}

/// Side data held for a snapshot (see [`Engine::side_snapshot`]).
#[derive(Debug, Default)]
pub struct SideSnapshot(pub(super) Vec<(u64, Fingerprint, Arc<NodeSideData>)>);

impl SideSnapshot {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Puts the entries in the arrival order of their nodes; `nodes` must
    /// be sorted by fingerprint. Entries without a node go last.
    pub fn sort_by_arrival(&mut self, nodes_by_fingerprint: &[NodeRecord]) {
        self.0
            .sort_unstable_by_key(|(_, fingerprint, _)| *fingerprint);
        let mut nodes = nodes_by_fingerprint.iter().peekable();
        for (arrival, fingerprint, _) in &mut self.0 {
            while nodes
                .next_if(|node| node.fingerprint < *fingerprint)
                .is_some()
            {}
            *arrival = match nodes.peek() {
                Some(node) if node.fingerprint == *fingerprint => node.arrival,
                _ => u64::MAX,
            };
        }
        self.0.sort_unstable_by_key(|(arrival, _, _)| *arrival);
    }

    pub fn for_each<'a>(&'a self, mut visit: impl FnMut(SideView<'a>)) {
        for (_, fingerprint, side) in &self.0 {
            visit(SideView {
                fingerprint: *fingerprint,
                root: side.root,
                exact_hashes: &side.exact_hashes,
                short_text: side.short_text.as_ref(),
                long_text: side.long_text.as_ref(),
            });
        }
    }
}

/// A node's side data, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct SideView<'a> {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: &'a [u64],
    pub short_text: Option<&'a ShortText>,
    pub long_text: Option<&'a LongText>,
}

/// A node's side data as a snapshot stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideRecord {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: Vec<u64>,
    pub short_text: Option<ShortText>,
    pub long_text: Option<LongText>,
}
