//! Recovery of the engine from a snapshot: the forest, the side records and
//! the indexes rebuilt from them.
//!
//! Motivation: recovery time is this at scale (10 M nodes: the forest, 10 M
//! records copied into the side file, some 60 M index inserts), and a
//! sidecar that restarts is down until it finishes.
//!
//! Design and consequences: see [`Engine::restore`].

use super::Engine;
use super::exact_hashes::ExactHashes;
use super::side_data::{EncodedSides, RecordKeys, SideStore};
use super::side_file::SideStorage;
use crate::candidates::shingle_index::{LshShape, ShingleIndex};
use crate::candidates::sketch_index::SketchIndex;
use crate::confirm::ConfirmationConfig;
use crate::fingerprint::Fingerprinter;
use crate::forest::{Forest, ForestError};
use crate::units::NodeId;

impl Engine {
    /// An engine with the forest `build_forest` makes and this side data
    /// (from a snapshot); the candidate indexes and the exact-hash table are
    /// rebuilt from the side data, in arrival order. Side records of nodes
    /// the forest does not hold are dropped.
    ///
    /// Recovery time is this function at scale, so its independent parts
    /// run on two threads. A second thread numbers the nodes, then stores
    /// the records in the side file, fills the exact-hash table and rebuilds
    /// the long-text sketch index. This one builds the forest meanwhile,
    /// then rebuilds the short-text LSH (the larger index) with those
    /// numbers. Each reads the records in arrival order (the bounded index
    /// buckets keep the newest, so the order matters and is the same as one
    /// pass). At 10 M nodes the LSH was the long pole.
    ///
    /// # Errors
    ///
    /// Whatever `build_forest` returns.
    pub fn restore(
        fingerprinter: Fingerprinter,
        build_forest: impl FnOnce() -> Result<Forest, ForestError>,
        confirmation: ConfirmationConfig,
        side_storage: SideStorage,
        sides: &EncodedSides,
    ) -> Result<Self, ForestError> {
        let mut side_data = SideStore::new(side_storage);
        side_data.reserve(sides.len());
        let mut exact_hashes = ExactHashes::default();
        exact_hashes.reserve(sides.len());
        let mut short_texts = ShingleIndex::new(LshShape::default());
        let mut long_texts = SketchIndex::default();
        let long_texts_built = &mut long_texts;
        let short_text_search = confirmation.short_text_search;
        let (numbers_sender, numbers_receiver) = std::sync::mpsc::channel();
        let (forest, orphans, unstored) = std::thread::scope(|scope| {
            let storing = scope.spawn(|| {
                let mut keys = RecordKeys::default();
                let ids: std::sync::Arc<[Option<NodeId>]> = sides
                    .iter()
                    .map(|record| {
                        keys.read(record).ok()?;
                        side_data.claim(keys.fingerprint)
                    })
                    .collect();
                // The receiver only goes away if this thread's partner
                // panicked, which the scope reports.
                let _ = numbers_sender.send(std::sync::Arc::clone(&ids));
                let mut unstored = side_data.put_all_at(&ids, sides);
                unstored.sort_unstable();
                unstored.dedup();
                let mut long_texts = SketchIndex::builder();
                for (record, id) in sides.iter().zip(ids.iter()) {
                    let Some(id) = *id else { continue };
                    if unstored.binary_search(&id).is_ok() || keys.read(record).is_err() {
                        continue;
                    }
                    for &exact_hash in &keys.exact_hashes {
                        exact_hashes.insert(exact_hash, id, |node| {
                            side_data.holds_exact_hash(node, exact_hash)
                        });
                    }
                    if let Some(sketch) = &keys.sketch {
                        long_texts.add(id, sketch);
                    }
                }
                *long_texts_built = long_texts.build();
                unstored
            });
            let forest = build_forest();
            let mut orphans = Vec::new();
            if let (Ok(forest), Ok(ids)) = (&forest, numbers_receiver.recv()) {
                let mut keys = RecordKeys::default();
                let mut band_keys = Vec::new();
                let mut builder = ShingleIndex::builder(LshShape::default());
                if short_text_search {
                    builder.reserve(sides.len());
                }
                for (record, id) in sides.iter().zip(ids.iter()) {
                    let Some(id) = *id else { continue };
                    if keys.read(record).is_err() {
                        continue;
                    }
                    if !forest.contains(keys.fingerprint) {
                        orphans.push(keys.fingerprint);
                        continue;
                    }
                    if let Some(shingles) = &keys.shingles
                        && short_text_search
                    {
                        builder.add(id, shingles, &mut band_keys);
                    }
                }
                short_texts = builder.build();
            }
            match storing.join() {
                Ok(unstored) => (forest, orphans, unstored),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        // A node whose record found no space is no candidate: nothing could
        // confirm it. The storing thread left it out of the sketch index;
        // its LSH entries go here. (`unstored` is in number order.)
        if !unstored.is_empty() {
            let mut keys = RecordKeys::default();
            for record in sides.iter() {
                if keys.read(record).is_err() {
                    continue;
                }
                let Some(id) = side_data
                    .id(keys.fingerprint)
                    .filter(|id| unstored.binary_search(id).is_ok())
                else {
                    continue;
                };
                if let Some(shingles) = &keys.shingles {
                    short_texts.remove(id, shingles);
                }
            }
        }
        let mut engine = Engine::new(fingerprinter, forest?, confirmation);
        engine.side_data = side_data;
        engine.exact_hashes = exact_hashes;
        engine.short_texts = short_texts;
        engine.long_texts = long_texts;
        // Records of nodes the forest does not hold (a snapshot that
        // disagrees with itself) go: nothing could place them.
        engine.drop_side_data(&orphans);
        Ok(engine)
    }
}
