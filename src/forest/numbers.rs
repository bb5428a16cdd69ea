//! The forest's node numbers as other structures see them: read during
//! an assignment ([`NodeNumbers`]), and held out of reuse after their
//! node is removed while a structure that names nodes by number may still
//! name them ([`NumberHold`]: the ledger's document keys).

use super::{Forest, Node};
use crate::slots::FingerprintSlots;
use crate::units::{Fingerprint, NodeId};

/// Removed nodes' numbers held out of reuse while a structure that names
/// nodes by number may still name them (see
/// [`FingerprintSlots::hold_released_numbers`]).
#[derive(Debug)]
pub struct NumberHold<'a> {
    pub(super) nodes: &'a mut FingerprintSlots<Node>,
}

impl NumberHold<'_> {
    /// Holds every number removed from now on.
    pub fn start(&mut self) {
        self.nodes.hold_released_numbers();
    }

    /// Whether any number is held.
    pub fn holds_any(&self) -> bool {
        self.nodes.holds_released_numbers()
    }

    /// The holder passed over all it names once more.
    pub fn pass_ended(&mut self) {
        self.nodes.holder_pass_ended();
    }

    /// The holder names no removed node any more.
    pub fn release_all(&mut self) {
        self.nodes.release_held_numbers();
    }
}

/// Read access to the nodes' numbers during an assignment (see
/// [`Forest::assign_with_numbered_candidates`]).
#[derive(Debug, Clone, Copy)]
pub struct NodeNumbers<'a> {
    pub(super) nodes: &'a FingerprintSlots<Node>,
}

impl NodeNumbers<'_> {
    /// The number of `fingerprint`'s node, if it is one.
    pub fn number(&self, fingerprint: Fingerprint) -> Option<NodeId> {
        self.nodes.number(fingerprint)
    }
}

impl Forest {
    /// The hold on removed nodes' numbers, for a structure that names
    /// nodes by number (the ledger's document keys).
    pub fn number_hold(&mut self) -> NumberHold<'_> {
        NumberHold {
            nodes: &mut self.nodes,
        }
    }
}
