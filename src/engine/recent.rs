//! What changed in the engine lately, so that a placement decided on an
//! earlier state can be checked instead of decided again.
//!
//! Motivation: decisions are taken on a state that other placements may
//! change before the decision is applied: the earlier documents of the same
//! batch, or, in the sidecar, other requests placed meanwhile. A decision
//! read only a few parts of the state (see [`Footprint`]); if none of them
//! changed since, applying it gives the answer deciding it now would give.
//!
//! Design: every change of the engine moves its epoch by one. A placement
//! records what it added: the exact hash of its text, and for a new node its
//! fingerprint and the keys it was stored under in the short-text and
//! long-text indices; a removal (expiry, a node left without documents)
//! records the same of the node it took. Anything else (an adoption, a
//! replayed effect, a class carried over) is a *barrier*: no decision taken
//! before it is trusted. Memory is bounded: the changes of the last [`RECENT_EPOCHS`]
//! epochs are kept; a decision older than that is decided again.

use std::collections::VecDeque;

use crate::hashing::FingerprintMap;

use crate::units::Fingerprint;

/// How many changes a decision may lag behind and still be checked (a
/// batch, plus what other requests placed while it was decided).
pub(super) const RECENT_EPOCHS: u64 = 8_192;

/// Index keys kept before the maps are trimmed to the window: a node is
/// stored under a few dozen keys at most.
const KEYS_BEFORE_TRIM: usize = 64 * RECENT_EPOCHS as usize;

/// What a decision read: the nodes near its simhash, its index keys, its
/// exact hash.
#[derive(Debug, Default)]
pub(super) struct Footprint {
    pub(super) simhash: Fingerprint,
    pub(super) exact_hash: u64,
    /// Its band keys in the short-text index (none when it has no short
    /// text or that search is off).
    pub(super) shingle_keys: Vec<u64>,
    /// Its keys in the long-text index.
    pub(super) sketch_keys: Vec<u64>,
    /// Its body's sentence keys, whose commonness it read
    /// ([`super::commonness`]).
    pub(super) sentence_keys: Vec<u64>,
}

impl Footprint {
    fn keys(&self) -> impl Iterator<Item = &u64> {
        self.shingle_keys
            .iter()
            .chain(&self.sketch_keys)
            .chain(&self.sentence_keys)
    }
}

/// The engine's recent changes, by epoch.
#[derive(Debug, Default)]
pub(super) struct RecentChanges {
    /// Off until a caller decides on an earlier state
    /// ([`RecentChanges::track`]): then only the epoch moves, and no
    /// decision but one taken at the current epoch holds.
    tracking: bool,
    epoch: u64,
    /// Epoch of the last change that decisions cannot be checked against.
    barrier: u64,
    /// Epochs before this one are forgotten.
    known_since: u64,
    /// New nodes, oldest first, with the epoch that added them.
    nodes: VecDeque<(u64, Fingerprint)>,
    /// Index key → epoch of the last node stored under it.
    keys: FingerprintMap<u64>,
    /// Exact hash → epoch of the last text placed with it.
    exact_hashes: FingerprintMap<u64>,
}

impl RecentChanges {
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Records what changes from now on, so decisions taken on an earlier
    /// state can be checked. Until then the engine pays nothing for it.
    pub(super) fn track(&mut self) {
        if !self.tracking {
            self.tracking = true;
            // Nothing before this moment is known.
            self.known_since = self.epoch;
        }
    }

    /// A change no decision taken before it can be checked against.
    pub(super) fn barrier(&mut self) {
        self.epoch += 1;
        self.barrier = self.epoch;
    }

    /// A text placed: on a new node (`new_node` with its index keys) or
    /// counted on an existing one.
    pub(super) fn placed(&mut self, exact_hash: u64, new_node: Option<(Fingerprint, &Footprint)>) {
        self.changed(&[exact_hash], new_node);
    }

    /// Sentences became common or stopped being (see
    /// [`super::commonness`]): decisions that read them are taken again.
    /// Their keys share the map with the index keys: a coincidence of two
    /// costs a decision taken again, never a wrong one.
    pub(super) fn sentences_changed(&mut self, sentence_keys: &[u64]) {
        self.epoch += 1;
        if self.tracking {
            for &key in sentence_keys {
                self.keys.insert(key, self.epoch);
            }
        }
    }

    /// A node removed (expired, or left without documents), with the exact
    /// hashes and index keys it was found by.
    pub(super) fn removed(&mut self, node: Fingerprint, exact_hashes: &[u64], keys: &Footprint) {
        self.changed(exact_hashes, Some((node, keys)));
    }

    /// A node added or removed where decisions look: near its fingerprint,
    /// under its keys, by its exact hashes.
    fn changed(&mut self, exact_hashes: &[u64], node: Option<(Fingerprint, &Footprint)>) {
        self.epoch += 1;
        if !self.tracking {
            return;
        }
        let epoch = self.epoch;
        for &exact_hash in exact_hashes {
            self.exact_hashes.insert(exact_hash, epoch);
        }
        let new_node = node;
        if let Some((node, keys)) = new_node {
            for &key in keys.keys() {
                self.keys.insert(key, epoch);
            }
            self.nodes.push_back((epoch, node));
        }
        let horizon = epoch.saturating_sub(RECENT_EPOCHS);
        if horizon > self.known_since {
            self.known_since = horizon;
            while self
                .nodes
                .front()
                .is_some_and(|&(added, _)| added <= horizon)
            {
                self.nodes.pop_front();
            }
        }
        // Entries older than the window cannot matter: trimmed in one pass
        // when the maps reach twice the window, so each entry is visited a
        // bounded number of times.
        if self.keys.len() > KEYS_BEFORE_TRIM
            || self.exact_hashes.len() > 2 * RECENT_EPOCHS as usize
        {
            let known_since = self.known_since;
            self.keys.retain(|_, epoch| *epoch > known_since);
            self.exact_hashes.retain(|_, epoch| *epoch > known_since);
        }
    }

    /// Whether a decision taken at `since` with this footprint still holds:
    /// nothing it read changed after `since`. `reach`: how far (in bits)
    /// from its simhash a new node could have changed it.
    pub(super) fn unchanged_since(&self, since: u64, footprint: &Footprint, reach: u32) -> bool {
        if since == self.epoch {
            return true;
        }
        if !self.tracking || self.barrier > since || since < self.known_since {
            return false;
        }
        let newer = |epoch: Option<&u64>| epoch.is_some_and(|&epoch| epoch > since);
        if newer(self.exact_hashes.get(&footprint.exact_hash))
            || footprint.keys().any(|key| newer(self.keys.get(key)))
        {
            return false;
        }
        !self
            .nodes
            .iter()
            .rev()
            .take_while(|&&(epoch, _)| epoch > since)
            .any(|&(_, node)| (node ^ footprint.simhash).count_ones() <= reach)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footprint(simhash: Fingerprint, exact_hash: u64, keys: &[u64]) -> Footprint {
        Footprint {
            simhash,
            exact_hash,
            shingle_keys: keys.to_vec(),
            sketch_keys: Vec::new(),
            sentence_keys: Vec::new(),
        }
    }

    #[test]
    fn a_decision_holds_until_what_it_read_changes() {
        let tracked = || {
            let mut recent = RecentChanges::default();
            recent.track();
            recent
        };
        let mut recent = tracked();
        let since = recent.epoch();
        let mine = footprint(0b1111, 7, &[100, 200]);
        recent.placed(8, Some((0xFFFF_0000, &footprint(0, 0, &[300]))));
        assert!(recent.unchanged_since(since, &mine, 4), "unrelated node");
        recent.placed(9, None);
        assert!(recent.unchanged_since(since, &mine, 4), "counted elsewhere");
        let mut near = tracked();
        near.placed(8, Some((0b0111_0000_1111, &footprint(0, 0, &[]))));
        assert!(!near.unchanged_since(0, &mine, 4), "a node within reach");
        assert!(near.unchanged_since(0, &mine, 2), "out of a smaller reach");
        let mut keyed = tracked();
        keyed.placed(8, Some((u64::MAX, &footprint(0, 0, &[200]))));
        assert!(!keyed.unchanged_since(0, &mine, 4), "a shared key");
        let mut same = tracked();
        same.placed(7, None);
        assert!(!same.unchanged_since(0, &mine, 4), "the same text");
        let mut barred = tracked();
        barred.barrier();
        assert!(!barred.unchanged_since(0, &mine, 4), "a barrier");
        assert!(barred.unchanged_since(barred.epoch(), &mine, 4));
        let mut removed = tracked();
        removed.removed(u64::MAX, &[3], &footprint(0, 0, &[4]));
        assert!(removed.unchanged_since(0, &mine, 4), "an unrelated removal");
        removed.removed(0b0111_0000_1111, &[], &footprint(0, 0, &[]));
        assert!(
            !removed.unchanged_since(0, &mine, 4),
            "a removal within reach"
        );
        let mut common = tracked();
        let reading = Footprint {
            sentence_keys: vec![42],
            ..footprint(0b1111, 7, &[])
        };
        common.sentences_changed(&[41]);
        assert!(common.unchanged_since(0, &reading, 4), "another sentence");
        common.sentences_changed(&[42]);
        assert!(
            !common.unchanged_since(0, &reading, 4),
            "a sentence it read"
        );
    }

    #[test]
    fn untracked_changes_trust_only_the_current_state() {
        let mut recent = RecentChanges::default();
        let mine = footprint(0, 1, &[]);
        recent.placed(5, Some((u64::MAX, &footprint(0, 0, &[]))));
        assert!(!recent.unchanged_since(0, &mine, 3));
        assert!(recent.unchanged_since(recent.epoch(), &mine, 3));
        recent.track();
        let since = recent.epoch();
        recent.placed(6, Some((u64::MAX, &footprint(0, 0, &[]))));
        assert!(recent.unchanged_since(since, &mine, 3));
        assert!(
            !recent.unchanged_since(since - 1, &mine, 3),
            "before tracking began"
        );
    }

    #[test]
    fn what_is_forgotten_is_not_trusted() {
        let mut recent = RecentChanges::default();
        recent.track();
        let mine = footprint(0, 1, &[]);
        for node in 0..=RECENT_EPOCHS {
            recent.placed(node + 10, Some((u64::MAX - node, &footprint(0, 0, &[]))));
        }
        assert!(
            !recent.unchanged_since(0, &mine, 3),
            "older than the window"
        );
        let since = recent.epoch() - 5;
        assert!(recent.unchanged_since(since, &mine, 3));
    }
}
