//! Boilerplate learned from the stream: sentences that many classes carry.
//!
//! Motivation: the built-in prior ([`crate::confirm::boilerplate`]) knows
//! the genre's vocabulary ("all rights reserved", "不代表本站观点"), not a
//! site's own words. A portal's hosting disclaimer, a paywall in its own
//! phrasing or a press footer nobody listed are text like any other to it,
//! so two different stories under one such body read as one retitled
//! reprint. What gives such a sentence away is not what it says but where
//! it occurs: under many stories. A story's sentences stay in its class
//! (its reprints join it); a site's boilerplate turns up in one class after
//! another (Bar-Yossef & Rajagopalan's template detection by block
//! frequency, applied to a stream).
//!
//! Design: a table from a sentence's key ([`SentenceKey`]: a hash of its
//! letters and digits) to
//! the classes it was placed in: the first [`REMEMBERED_CLASSES`] roots,
//! exactly, and a count of distinct roots past them. A sentence is common
//! once `threshold` classes carried it. A long body whose identifying
//! weight falls below [`MIN_IDENTIFYING_WEIGHT`] without its common
//! sentences, and is at least half common sentences, no longer identifies
//! its story: the headline decides (`Engine::learned_weight`).
//!
//! [`MIN_IDENTIFYING_WEIGHT`]: crate::confirm::boilerplate::MIN_IDENTIFYING_WEIGHT Memory is bounded: past
//! `capacity` entries the table is swept, keeping what is common or on its
//! way there (seen in two classes) and was touched within the retention;
//! when even those fill it, the least recently touched go. Updated only
//! when a placement is applied (in arrival order), read when a placement
//! is decided: the answers do not depend on threads.
//!
//! Consequences: the first few stories under a new boilerplate body are
//! judged by what the body says (they may join), the next ones by their
//! headline; a story reprinted many times stays one class and its
//! sentences stay uncommon; a story that splits into two classes does not
//! make its sentences common (the threshold is three). The table is part
//! of the state (issue 46): each placement that teaches it logs its
//! sentence keys (replayed by recovery and by standbys), snapshots hold
//! its entries, and a sweep's cut is decided by (touch, key) alone, so a
//! table restored and one that never stopped hold the same entries and
//! stamp alike.

use crate::confirm::boilerplate::SentenceKey;
use crate::hashing::FingerprintMap;
use crate::units::{Fingerprint, Millis};

/// Roots remembered per sentence, exactly (the rest are only counted).
pub const REMEMBERED_CLASSES: usize = 2;

/// Default: a sentence three classes carried is boilerplate.
pub const DEFAULT_COMMON_SENTENCE_CLASSES: u8 = 3;

/// Default bound on the table's entries (about 40 B each with the map's
/// own slots: about 10 MiB in all).
pub const DEFAULT_CAPACITY: usize = 1 << 18;

/// One sentence of the table, as a snapshot holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommonSentenceRecord {
    pub key: u64,
    pub roots: [u32; REMEMBERED_CLASSES],
    pub classes: u8,
    pub touched: Millis,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// The first distinct roots seen (32 mixed bits, 0: none yet).
    roots: [u32; REMEMBERED_CLASSES],
    /// Distinct classes counted, saturating.
    classes: u8,
    touched: Millis,
}

/// The classes each sentence was placed in (see the module doc).
#[derive(Debug)]
pub struct CommonSentences {
    entries: FingerprintMap<Entry>,
    /// Classes from which a sentence is common; 0: learning is off.
    threshold: u8,
    capacity: usize,
    retention: Option<Millis>,
}

impl CommonSentences {
    pub fn new(threshold: u8, capacity: usize, retention: Option<Millis>) -> Self {
        CommonSentences {
            entries: FingerprintMap::default(),
            threshold,
            capacity: capacity.max(16),
            retention,
        }
    }

    /// Learning is on.
    pub fn enabled(&self) -> bool {
        self.threshold > 0
    }

    /// The sentence is boilerplate by where it occurred.
    pub fn is_common(&self, key: u64) -> bool {
        self.enabled()
            && self
                .entries
                .get(&key)
                .is_some_and(|entry| entry.classes >= self.threshold)
    }

    /// Half-letters ([`SentenceKey::weight_in_halves`]) of `sentences` that
    /// are common.
    pub fn common_halves(&self, sentences: &[SentenceKey]) -> u64 {
        if !self.enabled() || self.entries.is_empty() {
            return 0;
        }
        sentences
            .iter()
            .filter(|sentence| self.is_common(sentence.hash))
            .map(|sentence| u64::from(sentence.weight_in_halves))
            .sum()
    }

    /// Notes that `sentences` were placed in the class of `root` at `now`.
    /// Returns the keys whose commonness changed (became common, or were
    /// forgotten while common): decisions that read them must be taken again.
    pub fn placed(
        &mut self,
        sentences: &[SentenceKey],
        root: Fingerprint,
        now: Millis,
    ) -> Vec<u64> {
        self.placed_keys(sentences.iter().map(|sentence| sentence.hash), root, now)
    }

    /// The keys a placement teaches the table (what the log holds of it):
    /// its sentences' keys when learning is on, else none.
    pub fn keys_to_learn(&self, sentences: &[SentenceKey]) -> Vec<u64> {
        if !self.enabled() {
            return Vec::new();
        }
        sentences.iter().map(|sentence| sentence.hash).collect()
    }

    /// [`CommonSentences::placed`] of sentences given by their keys (a
    /// replayed placement).
    pub fn placed_keys(
        &mut self,
        keys: impl IntoIterator<Item = u64>,
        root: Fingerprint,
        now: Millis,
    ) -> Vec<u64> {
        let mut changed = Vec::new();
        if !self.enabled() {
            return changed;
        }
        // Roots of one template's classes differ in a few bits only: all
        // 64 mixed into the 32 kept. Never 0: 0 marks an empty place.
        let class = ((root.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32).max(1);
        for key in keys {
            let entry = self.entries.entry(key).or_insert(Entry {
                roots: [0; REMEMBERED_CLASSES],
                classes: 0,
                touched: now,
            });
            entry.touched = entry.touched.max(now);
            if entry.roots.contains(&class) {
                continue;
            }
            if let Some(free) = entry.roots.iter_mut().find(|place| **place == 0) {
                *free = class;
            }
            entry.classes = entry.classes.saturating_add(1);
            if entry.classes == self.threshold {
                changed.push(key);
            }
        }
        if self.entries.len() > self.capacity {
            self.sweep(now, &mut changed);
        }
        changed
    }

    /// Keeps what is common or on its way (two classes) and touched within
    /// the retention; then, if that is still more than half the capacity,
    /// the most recently touched half.
    fn sweep(&mut self, now: Millis, changed: &mut Vec<u64>) {
        let threshold = self.threshold;
        let horizon = self
            .retention
            .map(|retention| now.saturating_sub(retention));
        self.entries.retain(|&key, entry| {
            let keep = entry.classes >= 2.min(threshold)
                && horizon.is_none_or(|horizon| entry.touched >= horizon);
            if !keep && entry.classes >= threshold {
                changed.push(key);
            }
            keep
        });
        let keep = self.capacity / 2;
        if self.entries.len() > keep {
            // The cut is by (touch, key): which entries go never depends
            // on the map's order, so a table restored from a snapshot
            // sweeps as the one that never stopped.
            let mut order: Vec<(Millis, u64)> = self
                .entries
                .iter()
                .map(|(&key, entry)| (entry.touched, key))
                .collect();
            let cut = order.len() - keep;
            let (_, &mut oldest_kept, _) = order.select_nth_unstable(cut);
            self.entries.retain(|&key, entry| {
                let keep = (entry.touched, key) >= oldest_kept;
                if !keep && entry.classes >= threshold {
                    changed.push(key);
                }
                keep
            });
        }
    }

    /// Every entry, sorted by key (snapshots).
    pub fn records(&self) -> Vec<CommonSentenceRecord> {
        let mut records: Vec<CommonSentenceRecord> = self
            .entries
            .iter()
            .map(|(&key, entry)| CommonSentenceRecord {
                key,
                roots: entry.roots,
                classes: entry.classes,
                touched: entry.touched,
            })
            .collect();
        records.sort_unstable_by_key(|record| record.key);
        records
    }

    /// The table as a snapshot held it.
    pub fn restore(&mut self, records: &[CommonSentenceRecord]) {
        self.entries.clear();
        self.entries.reserve(records.len());
        for record in records {
            self.entries.insert(
                record.key,
                Entry {
                    roots: record.roots,
                    classes: record.classes,
                    touched: record.touched,
                },
            );
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Approximate heap bytes (the map's slots and control bytes).
    pub fn approx_heap_bytes(&self) -> usize {
        self.entries.capacity() * (std::mem::size_of::<(u64, Entry)>() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(hash: u64) -> SentenceKey {
        SentenceKey {
            hash,
            weight_in_halves: 20,
        }
    }

    #[test]
    fn a_sentence_becomes_common_in_its_third_class() {
        let mut table = CommonSentences::new(3, 1000, None);
        let sentences = [key(7), key(8)];
        assert!(table.placed(&sentences, 100, 1).is_empty());
        // Reprints in the same class count once.
        assert!(table.placed(&sentences, 100, 2).is_empty());
        assert!(table.placed(&[key(7)], 200, 3).is_empty());
        assert_eq!(table.common_halves(&sentences), 0);
        assert_eq!(table.placed(&[key(7)], 300, 4), vec![7]);
        assert!(table.is_common(7) && !table.is_common(8));
        assert_eq!(table.common_halves(&sentences), 20);
        // Past the threshold nothing changes any more.
        assert!(table.placed(&[key(7)], 400, 5).is_empty());
    }

    #[test]
    fn roots_that_differ_only_in_high_bits_are_other_classes() {
        let mut table = CommonSentences::new(3, 1000, None);
        for root in [
            0xd329_51ee_07e5_10d9,
            0x53a9_d1fe_07e5_10d9,
            0xd3a9_d17e_0765_10d9,
        ] {
            table.placed(&[key(7)], root, 1);
        }
        assert!(table.is_common(7));
    }

    #[test]
    fn off_learns_nothing() {
        let mut table = CommonSentences::new(0, 1000, None);
        for root in 1..10 {
            assert!(table.placed(&[key(7)], root, 1).is_empty());
        }
        assert!(!table.is_common(7) && table.is_empty());
    }

    #[test]
    fn memory_is_bounded_and_common_sentences_outlive_a_sweep() {
        let mut table = CommonSentences::new(3, 64, None);
        for root in 1..=3 {
            table.placed(&[key(u64::MAX)], root, 0);
        }
        for hash in 0..10_000u64 {
            let changed = table.placed(&[key(hash)], hash, hash as Millis);
            assert!(changed.is_empty(), "{hash}: {changed:?}");
            assert!(table.len() <= 65);
        }
        assert!(table.is_common(u64::MAX));
    }

    #[test]
    fn entries_touched_at_one_moment_are_swept_too() {
        let mut table = CommonSentences::new(3, 64, None);
        for hash in 0..1_000u64 {
            table.placed(&[key(hash)], 1, 5);
            table.placed(&[key(hash)], 2, 5);
            assert!(table.len() <= 65);
        }
    }

    #[test]
    fn a_restored_table_sweeps_as_the_one_that_never_stopped() {
        // Many entries touched at one moment: the cut falls among ties.
        let mut unbroken = CommonSentences::new(3, 64, None);
        for hash in 0..60u64 {
            unbroken.placed(&[key(hash * 7919)], 1 + hash % 3, 5);
        }
        let mut restored = CommonSentences::new(3, 64, None);
        let mut records = unbroken.records();
        // Another insertion order than the one it was learned in.
        records.reverse();
        restored.restore(&records);
        assert_eq!(restored.records(), unbroken.records());
        for hash in 1_000..1_200u64 {
            let a = unbroken.placed(&[key(hash)], hash, 5);
            let b = restored.placed(&[key(hash)], hash, 5);
            assert_eq!(a.len(), b.len());
            assert_eq!(restored.records(), unbroken.records(), "after {hash}");
        }
    }

    #[test]
    fn common_sentences_expire_with_the_retention() {
        let mut table = CommonSentences::new(3, 16, Some(100));
        for root in 1..=3 {
            table.placed(&[key(u64::MAX)], root, 0);
        }
        let mut forgotten = Vec::new();
        for hash in 0..100u64 {
            forgotten.extend(table.placed(&[key(hash)], hash, 1_000));
        }
        assert_eq!(forgotten, vec![u64::MAX]);
        assert!(!table.is_common(u64::MAX));
    }
}
