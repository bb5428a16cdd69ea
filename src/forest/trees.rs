//! The classes that have leaves: each a list of its leaves' node numbers
//! and its document total, kept in a numbered slab whose number the root's
//! node holds.
//!
//! Motivation: a map from the root's fingerprint to its tree cost the
//! 8-byte key, a control byte and the map's empty places (it is 44–88 %
//! full) besides the 32-byte tree, and a leaf list of fingerprints 8 bytes
//! a leaf; at 10 M nodes trees and leaves were 13.7 bytes a node. The root
//! is always read before its tree, and its node has a spare field (a root
//! is in no leaf list), so that field names the tree instead.
//!
//! Design: a vector of trees, a removed tree's number reused first. A tree
//! in use always has a leaf (a class whose last leaf goes gives its tree
//! back), so an empty list marks a vacant number.
//!
//! A list of one leaf (most of them, where most classes are pairs) is held
//! in the tree itself ([`LeafList`]): a vector of one took an allocation of
//! 32 bytes for its 4-byte number (glibc's smallest block), about 6 bytes a
//! node at 10 M nodes that no table counted.
//!
//! Consequences: numbers are `u32` (fewer trees than nodes); the slab grows
//! by doubling and gives back only vacant numbers at its end.

use crate::units::NodeId;

/// A root's tree number when it has no leaves.
pub(super) const NO_TREE: u32 = u32::MAX;

/// A tree's leaves: none (a vacant number), one held in place, or a
/// vector (a list that falls back to one leaf gives its vector back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum LeafList {
    #[default]
    Empty,
    One(NodeId),
    Many(Vec<NodeId>),
}

/// A list that outgrows one leaf starts with room for this many (a
/// 16-byte allocation takes glibc's smallest block either way).
const FIRST_VECTOR: usize = 4;

impl LeafList {
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, LeafList::Empty)
    }

    /// Leaves' places on the heap (a list of one has none there).
    pub fn heap_capacity(&self) -> usize {
        match self {
            LeafList::Many(leaves) => leaves.capacity(),
            LeafList::Empty | LeafList::One(_) => 0,
        }
    }

    pub fn as_slice(&self) -> &[NodeId] {
        match self {
            LeafList::Empty => &[],
            LeafList::One(leaf) => std::slice::from_ref(leaf),
            LeafList::Many(leaves) => leaves,
        }
    }

    pub fn get(&self, position: usize) -> Option<&NodeId> {
        self.as_slice().get(position)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, NodeId> {
        self.as_slice().iter()
    }

    pub fn push(&mut self, leaf: NodeId) {
        match self {
            LeafList::Empty => *self = LeafList::One(leaf),
            LeafList::One(first) => {
                let mut leaves = Vec::with_capacity(FIRST_VECTOR);
                leaves.extend([*first, leaf]);
                *self = LeafList::Many(leaves);
            }
            LeafList::Many(leaves) => leaves.push(leaf),
        }
    }

    /// Takes out the leaf at `position`, the last one taking its place.
    pub fn swap_remove(&mut self, position: usize) -> Option<NodeId> {
        match self {
            LeafList::One(leaf) if position == 0 => {
                let leaf = *leaf;
                *self = LeafList::Empty;
                Some(leaf)
            }
            LeafList::Many(leaves) if position < leaves.len() => {
                let removed = leaves.swap_remove(position);
                if let [only] = leaves[..] {
                    *self = LeafList::One(only);
                }
                Some(removed)
            }
            _ => None,
        }
    }

    /// Gives back a vector's room beyond `capacity` places.
    pub fn shrink_to(&mut self, capacity: usize) {
        if let LeafList::Many(leaves) = self {
            leaves.shrink_to(capacity);
        }
    }
}

impl IntoIterator for LeafList {
    type Item = NodeId;
    type IntoIter = std::iter::Chain<std::option::IntoIter<NodeId>, std::vec::IntoIter<NodeId>>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            LeafList::Empty => None.into_iter().chain(Vec::new()),
            LeafList::One(leaf) => Some(leaf).into_iter().chain(Vec::new()),
            LeafList::Many(leaves) => None.into_iter().chain(leaves),
        }
    }
}

/// One class with leaves.
#[derive(Debug, Clone, Default)]
pub(super) struct Tree {
    /// The leaves' node numbers, in no particular order (a leaf's node
    /// holds its position).
    pub leaves: LeafList,
    /// Documents of the root plus all leaves.
    pub class_documents: u64,
}

/// The numbered trees; see the module docs.
#[derive(Debug, Clone, Default)]
pub(super) struct Trees {
    trees: Vec<Tree>,
    vacant: Vec<u32>,
    len: usize,
}

impl Trees {
    /// Trees in use.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, number: u32) -> Option<&Tree> {
        self.trees
            .get(number as usize)
            .filter(|tree| !tree.leaves.is_empty())
    }

    pub fn get_mut(&mut self, number: u32) -> Option<&mut Tree> {
        self.trees
            .get_mut(number as usize)
            .filter(|tree| !tree.leaves.is_empty())
    }

    /// Stores `tree` (which has a leaf) and gives its number.
    pub fn add(&mut self, tree: Tree) -> u32 {
        debug_assert!(!tree.leaves.is_empty(), "a tree has a leaf");
        self.len += 1;
        if let Some(number) = self.vacant.pop() {
            self.trees[number as usize] = tree;
            return number;
        }
        self.trees.push(tree);
        // Fewer trees than nodes, and nodes have u32 numbers.
        u32::try_from(self.trees.len() - 1).unwrap_or(NO_TREE)
    }

    /// Takes tree `number` out; its number is free for reuse.
    pub fn remove(&mut self, number: u32) -> Option<Tree> {
        let tree = self.get_mut(number)?;
        let tree = std::mem::take(tree);
        self.len -= 1;
        self.vacant.push(number);
        Some(tree)
    }

    /// Gives back tree `number` once its last leaf has been taken out of
    /// its list (call once, right after emptying it).
    pub fn release(&mut self, number: u32) {
        if let Some(tree) = self.trees.get_mut(number as usize)
            && tree.leaves.is_empty()
        {
            *tree = Tree::default();
            self.len -= 1;
            self.vacant.push(number);
        }
    }

    /// Every tree in use.
    pub fn iter(&self) -> impl Iterator<Item = &Tree> + '_ {
        self.trees.iter().filter(|tree| !tree.leaves.is_empty())
    }

    /// Heap bytes of the slab (not of the leaf lists).
    pub fn heap_bytes(&self) -> usize {
        self.trees.capacity() * size_of::<Tree>() + self.vacant.capacity() * size_of::<u32>()
    }

    /// Gives back memory after many removals when most numbers are vacant:
    /// vacant numbers at the end go, the others are reused lowest first.
    pub fn release_spare(&mut self) {
        if self.trees.capacity() <= 4096 || self.len >= self.trees.capacity() / 4 {
            return;
        }
        while self.trees.last().is_some_and(|tree| tree.leaves.is_empty()) {
            self.trees.pop();
        }
        let end = self.trees.len();
        self.trees.shrink_to(end.max(self.len * 2));
        self.vacant.retain(|&number| (number as usize) < end);
        // Highest first: `pop` takes the lowest.
        self.vacant.sort_unstable_by(|a, b| b.cmp(a));
        self.vacant.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(leaves: &[NodeId]) -> Tree {
        let mut list = LeafList::default();
        for &leaf in leaves {
            list.push(leaf);
        }
        Tree {
            leaves: list,
            class_documents: leaves.len() as u64 + 1,
        }
    }

    #[test]
    fn a_list_of_one_leaf_is_held_in_the_tree_and_a_tree_is_32_bytes() {
        assert_eq!(size_of::<Tree>(), 32);
        let mut list = LeafList::default();
        list.push(7);
        assert_eq!((list.as_slice(), list.heap_capacity()), (&[7][..], 0));
        list.push(8);
        list.push(9);
        assert_eq!((list.as_slice(), list.heap_capacity()), (&[7, 8, 9][..], 4));
        assert_eq!(list.swap_remove(0), Some(7));
        assert_eq!(list.as_slice(), &[9, 8]);
        assert_eq!(list.swap_remove(2), None);
        assert_eq!(list.swap_remove(1), Some(8));
        // Back to one leaf: its vector is given back.
        assert_eq!(list, LeafList::One(9));
        assert_eq!(list.clone().into_iter().collect::<Vec<_>>(), vec![9]);
        assert_eq!(list.swap_remove(0), Some(9));
        assert!(list.is_empty());
        assert_eq!(list.len(), 0);
    }

    #[test]
    fn numbers_are_kept_and_reused_and_vacant_ones_read_as_none() {
        let mut trees = Trees::default();
        let first = trees.add(tree(&[1]));
        let second = trees.add(tree(&[2, 3]));
        assert_eq!((first, second, trees.len()), (0, 1, 2));
        assert_eq!(
            trees.remove(first).map(|tree| tree.leaves),
            Some(LeafList::One(1))
        );
        assert!(trees.get(first).is_none());
        assert!(trees.remove(first).is_none());
        assert_eq!(trees.get(second).map(|tree| tree.class_documents), Some(3));
        assert_eq!(trees.add(tree(&[4])), first);
        assert_eq!(trees.iter().count(), 2);
        assert!(trees.get(NO_TREE).is_none());
    }

    #[test]
    fn spare_numbers_at_the_end_are_given_back_and_the_rest_stay() {
        let mut trees = Trees::default();
        let numbers: Vec<u32> = (0..10_000).map(|leaf| trees.add(tree(&[leaf]))).collect();
        for &number in &numbers[100..] {
            trees.remove(number);
        }
        trees.remove(numbers[10]);
        trees.release_spare();
        assert_eq!(trees.len(), 99);
        assert!(trees.heap_bytes() < 1_000 * size_of::<Tree>());
        for &number in numbers[..100].iter().filter(|&&number| number != 10) {
            assert_eq!(
                trees.get(number).map(|tree| tree.leaves.as_slice()[0]),
                Some(number)
            );
        }
        assert_eq!(trees.add(tree(&[7])), 10);
        assert_eq!(trees.add(tree(&[8])), 100);
    }
}
