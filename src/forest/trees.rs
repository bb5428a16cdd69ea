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
//! Consequences: numbers are `u32` (fewer trees than nodes); the slab grows
//! by doubling and gives back only vacant numbers at its end.

use crate::units::NodeId;

/// A root's tree number when it has no leaves.
pub(super) const NO_TREE: u32 = u32::MAX;

/// One class with leaves.
#[derive(Debug, Clone, Default)]
pub(super) struct Tree {
    /// The leaves' node numbers, in no particular order (a leaf's node
    /// holds its position).
    pub leaves: Vec<NodeId>,
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
        Tree {
            leaves: leaves.to_vec(),
            class_documents: leaves.len() as u64 + 1,
        }
    }

    #[test]
    fn numbers_are_kept_and_reused_and_vacant_ones_read_as_none() {
        let mut trees = Trees::default();
        let first = trees.add(tree(&[1]));
        let second = trees.add(tree(&[2, 3]));
        assert_eq!((first, second, trees.len()), (0, 1, 2));
        assert_eq!(trees.remove(first).map(|tree| tree.leaves), Some(vec![1]));
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
            assert_eq!(trees.get(number).map(|tree| tree.leaves[0]), Some(number));
        }
        assert_eq!(trees.add(tree(&[7])), 10);
        assert_eq!(trees.add(tree(&[8])), 100);
    }
}
