//! The engine's nodes and side-record locations as of one moment, copied
//! a slice at a time while writes go on ([`crate::capture`]): what a
//! snapshot takes of the engine without stopping writes for the copy.

use super::Engine;
use super::side_data::SideSnapshot;
use super::side_file::{SideFileReader, SideLocation};
use crate::candidates::buckets::{CapturedPairs, KeyedNode};
use crate::candidates::captured::{
    CandidateTable, CandidateTexts, CandidatesCapture, CapturedCandidates,
};
use crate::capture::{CaptureSink, Image};
use crate::forest::records::{CapturedNodes, NodesCapture};
use crate::forest::{ForestCounters, NodeRecord};
use crate::units::{Fingerprint, NodeId};

/// A capture of the engine under way ([`Engine::start_capture`]).
#[derive(Debug)]
pub struct EngineCapture {
    nodes: NodesCapture,
    locations: CaptureSink<SideLocation>,
    /// The side file's segments at the capture's moment: every captured
    /// location's record stays readable, whatever is released meanwhile.
    file: SideFileReader,
    candidates: CandidatesCapture,
}

impl EngineCapture {
    /// Moves what was copied so far into the capture's images: call
    /// between slices, without the lock ([`crate::capture::CaptureSink`]).
    pub fn flush(&self) {
        self.nodes.flush();
        self.locations.flush();
        self.candidates.flush();
    }
}

/// A candidate pair costs a snapshot's slice about this many times the
/// bytes of its copy: each is read from its shard and its key's mix
/// undone (the nodes' and locations' slices are copies of memory).
const CANDIDATE_COPY_WEIGHT: usize = 8;

/// The engine's nodes and their side records as of a capture's moment.
#[derive(Debug)]
pub struct CapturedEngine {
    nodes: CapturedNodes,
    locations: Image<SideLocation>,
    file: SideFileReader,
    candidates: CapturedCandidates,
}

impl CapturedEngine {
    /// The forest's counters, every node (in no particular order) and the
    /// side records of the nodes that have one (not yet sorted,
    /// [`SideSnapshot::sort_by_arrival`]).
    pub fn into_parts(self) -> (ForestCounters, Vec<NodeRecord>, SideSnapshot) {
        let mut records = Vec::new();
        let mut entries = Vec::new();
        for (number, record) in self.nodes.records() {
            if let Some(&location) = self.locations.get(number as usize)
                && location != SideLocation::NOWHERE
            {
                entries.push((0, record.fingerprint, location));
            }
            records.push(record);
        }
        let sides = SideSnapshot {
            entries,
            file: self.file,
        };
        (self.nodes.counters, records, sides)
    }
}

/// A captured engine laid out for a snapshot: its nodes and their side
/// records are read in arrival order from the capture's image itself,
/// through a list of node numbers, not copied into records first.
#[derive(Debug)]
pub struct EngineImage {
    captured: CapturedEngine,
    order: Vec<NodeId>,
    sides: usize,
}

impl CapturedEngine {
    /// The capture as a snapshot reads it ([`EngineImage`]).
    pub fn into_image(self) -> EngineImage {
        let order = self.nodes.arrival_order();
        let sides = order
            .iter()
            .filter(|&&number| self.location_of(number).is_some())
            .count();
        EngineImage {
            captured: self,
            order,
            sides,
        }
    }

    fn location_of(&self, number: NodeId) -> Option<SideLocation> {
        self.locations
            .get(number as usize)
            .copied()
            .filter(|&location| location != SideLocation::NOWHERE)
    }
}

impl EngineImage {
    pub fn counters(&self) -> ForestCounters {
        self.captured.nodes.counters
    }

    pub fn node_count(&self) -> usize {
        self.order.len()
    }

    /// Each node number's position in [`Self::nodes`] (`u32::MAX` for a
    /// number not in use): 4 bytes a number while the keys are written.
    pub fn positions(&self) -> Vec<u32> {
        let bound = self
            .order
            .iter()
            .max()
            .map_or(0, |&number| number as usize + 1);
        let mut positions = vec![u32::MAX; bound];
        for (position, &number) in (0u32..).zip(&self.order) {
            positions[number as usize] = position;
        }
        positions
    }

    /// How many texts the candidate indexes held, and whether short texts
    /// were searched by their shingles.
    pub fn candidate_texts(&self) -> CandidateTexts {
        self.captured.candidates.texts
    }

    /// The pairs of one candidate table: a key's side by side, oldest
    /// first; nodes by number.
    pub fn candidate_pairs(&self, table: CandidateTable) -> &CapturedPairs {
        &self.captured.candidates.tables[table as usize]
    }

    /// The fingerprint of node `number`, if it was in use.
    pub fn fingerprint_at(&self, number: NodeId) -> Option<Fingerprint> {
        self.captured.nodes.fingerprint_at(number)
    }

    /// The nodes, in arrival order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeRecord> + '_ {
        self.order
            .iter()
            .filter_map(|&number| self.captured.nodes.record_at(number))
    }

    /// Side records [`EngineImage::for_each_side_record`] visits.
    pub fn side_count(&self) -> usize {
        self.sides
    }

    /// Each node's side record, encoded as the side file holds it, with
    /// its node's position among [`Self::nodes`], in the arrival order of
    /// the nodes (a record that cannot be read is skipped: it cannot
    /// happen while the image holds its segments).
    pub fn for_each_side_record<'a>(&'a self, mut visit: impl FnMut(u32, &'a [u8])) {
        let file = &self.captured.file;
        // About the order the records were written in.
        file.read_in_order();
        for (position, &number) in (0u32..).zip(&self.order) {
            if let Some(record) = self
                .captured
                .location_of(number)
                .and_then(|location| file.record(location))
            {
                visit(position, record);
            }
        }
        file.read_at_random();
    }
}

impl Engine {
    /// Starts capturing the nodes and side-record locations as they are
    /// now: call with writes locked out (a moment of the log).
    pub fn start_capture(&self) -> EngineCapture {
        let nodes = self.forest.start_capture(self.side_data.directory());
        let (file, locations) = self.side_data.start_capture();
        let candidates = CandidatesCapture::start(
            &self.short_texts,
            &self.long_texts,
            self.confirmation.short_text_search,
            self.side_data.directory(),
        );
        EngineCapture {
            nodes,
            locations,
            file,
            candidates,
        }
    }

    /// Copies up to `budget_bytes` more of the capture (one table at a
    /// time); `true` once all is copied. Writes must be locked out
    /// meanwhile; readers may run.
    pub fn capture_some(&self, budget_bytes: usize) -> bool {
        let slot_bytes = size_of::<NodeRecord>();
        let pairs = budget_bytes / size_of::<KeyedNode>() / CANDIDATE_COPY_WEIGHT;
        self.forest.capture_some(budget_bytes / slot_bytes)
            && self
                .side_data
                .capture_some(budget_bytes / size_of::<SideLocation>())
            && self.short_texts.capture_some(pairs)
            && self.long_texts.capture_some(pairs)
    }

    /// The capture's image, once [`Engine::capture_some`] said all is
    /// copied (the capture ends); `None` (and the capture dropped) before.
    pub fn take_capture(&self, capture: EngineCapture) -> Option<CapturedEngine> {
        let EngineCapture {
            nodes,
            file,
            candidates,
            ..
        } = capture;
        let candidates = candidates.finish(
            self.short_texts.take_capture(),
            self.long_texts.take_capture(),
        );
        let (Some(nodes), Some(locations), Some(candidates)) = (
            self.forest.take_capture(nodes),
            self.side_data.take_capture(),
            candidates,
        ) else {
            self.stop_capture();
            return None;
        };
        Some(CapturedEngine {
            nodes,
            locations,
            file,
            candidates,
        })
    }

    /// Where a capture's images go: the side file's directory, so that
    /// they are page cache the kernel may write out, not heap
    /// ([`crate::capture::Image`]).
    pub fn capture_directory(&self) -> Option<&std::path::Path> {
        self.side_data.directory()
    }

    /// Ends a capture without its image (a snapshot given up).
    pub fn stop_capture(&self) {
        self.forest.stop_capture();
        self.side_data.stop_capture();
        self.short_texts.stop_capture();
        self.long_texts.stop_capture();
    }
}
