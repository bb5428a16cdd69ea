//! The classes that have leaves: each a list of its leaves' node numbers
//! and its document total, kept in a numbered slab whose number the root's
//! node holds.
//!
//! Motivation: a map from the root's fingerprint to its tree cost the
//! 8-byte key, a control byte and the map's empty places (it is 44–88 %
//! full) besides the 32-byte tree, and a leaf list of fingerprints 8 bytes
//! a leaf; at 10 M nodes trees and leaves were 13.7 bytes a node. The root
//! is always read before its tree, and its node has a spare field (a root
//! is in no leaf list), so that field names the tree instead. A tree that
//! held its list's vector was 32 bytes (6.7 a node at 10 M nodes); most
//! classes are pairs, whose one leaf needs no vector.
//!
//! Design: a vector of 16-byte trees, a removed tree's number reused
//! first. A tree holds its document total, its leaf count and either its
//! one leaf or the number of its list in a second slab of lists (two or
//! more leaves), each a boxed slice whose length is its room: it doubles
//! when full, halves when a quarter used, and goes back to the slab's
//! vacant numbers when one leaf is left. A tree in use always has a leaf
//! (a class whose last leaf goes gives its tree back), so a count of zero
//! marks a vacant number.
//!
//! Consequences: numbers are `u32` (fewer trees than nodes); the slabs grow
//! by doubling and give back only vacant numbers at their end. A class of
//! two or more leaves costs its tree, a 16-byte list entry and its room:
//! the 32 bytes of before.

use crate::units::NodeId;

/// A root's tree number when it has no leaves.
pub(super) const NO_TREE: u32 = u32::MAX;

/// A tree's leaves taken out of it: one, or a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum LeafList {
    #[default]
    Empty,
    One(NodeId),
    Many(Vec<NodeId>),
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

/// Room of a list when a tree's second leaf comes.
const FIRST_LIST: usize = 4;

/// A list's room is halved only above this many places.
const SHRINK_ABOVE: usize = 16;

/// One class with leaves: 16 bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Tree {
    /// Documents of the root plus all leaves.
    class_documents: u64,
    /// The one leaf (`leaves` 1), or the number of the list in
    /// [`Trees::lists`] (`leaves` 2 or more).
    leaf_or_list: u32,
    /// Leaves; 0 for a vacant number.
    leaves: u32,
}

/// What taking a leaf out of a tree did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LeafTaken {
    /// The leaf moved into the place taken out, and that place.
    pub moved: Option<(usize, NodeId)>,
    /// True when it was the last leaf: the tree's number is vacant now.
    pub tree_released: bool,
}

/// The numbered trees; see the module docs.
#[derive(Debug, Clone, Default)]
pub(super) struct Trees {
    trees: Vec<Tree>,
    vacant: Vec<u32>,
    len: usize,
    /// The lists of trees of two or more leaves; an empty slice is a
    /// vacant number.
    lists: Vec<Box<[NodeId]>>,
    vacant_lists: Vec<u32>,
    /// Places of all lists together.
    list_places: usize,
}

impl Trees {
    /// Trees in use.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    fn tree(&self, number: u32) -> Option<&Tree> {
        self.trees
            .get(number as usize)
            .filter(|tree| tree.leaves != 0)
    }

    fn tree_mut(&mut self, number: u32) -> Option<&mut Tree> {
        self.trees
            .get_mut(number as usize)
            .filter(|tree| tree.leaves != 0)
    }

    /// True when tree `number` is in use.
    pub fn contains(&self, number: u32) -> bool {
        self.tree(number).is_some()
    }

    /// The leaves of tree `number`, in no particular order (a leaf's node
    /// holds its position); none for a vacant number.
    pub fn leaves(&self, number: u32) -> &[NodeId] {
        let Some(tree) = self.trees.get(number as usize) else {
            return &[];
        };
        match tree.leaves {
            0 => &[],
            1 => std::slice::from_ref(&tree.leaf_or_list),
            count => self
                .lists
                .get(tree.leaf_or_list as usize)
                .and_then(|list| list.get(..count as usize))
                .unwrap_or(&[]),
        }
    }

    /// Leaves of tree `number` (0 for a vacant number).
    pub fn leaf_count(&self, number: u32) -> usize {
        self.tree(number).map_or(0, |tree| tree.leaves as usize)
    }

    /// Documents of the class of tree `number`; `None` for a vacant number.
    pub fn class_documents(&self, number: u32) -> Option<u64> {
        self.tree(number).map(|tree| tree.class_documents)
    }

    /// Adds `documents` to tree `number`'s total; the new total.
    pub fn add_documents(&mut self, number: u32, documents: u64) -> Option<u64> {
        let tree = self.tree_mut(number)?;
        tree.class_documents += documents;
        Some(tree.class_documents)
    }

    /// Takes `documents` from tree `number`'s total.
    pub fn take_documents(&mut self, number: u32, documents: u64) {
        if let Some(tree) = self.tree_mut(number) {
            tree.class_documents -= documents;
        }
    }

    /// Stores a tree of one leaf and gives its number.
    pub fn add(&mut self, leaf: NodeId, class_documents: u64) -> u32 {
        let tree = Tree {
            class_documents,
            leaf_or_list: leaf,
            leaves: 1,
        };
        self.len += 1;
        if let Some(number) = self.vacant.pop() {
            self.trees[number as usize] = tree;
            return number;
        }
        self.trees.push(tree);
        // Fewer trees than nodes, and nodes have u32 numbers.
        u32::try_from(self.trees.len() - 1).unwrap_or(NO_TREE)
    }

    /// Stores a tree of these leaves (one or more, in this order) and
    /// gives its number: the tree that [`Self::add`] and then
    /// [`Self::push_leaf`] of each further leaf build, its list's room as
    /// they leave it, without the copies of each doubling (recovery).
    pub fn add_with_leaves(&mut self, leaves: &[NodeId], class_documents: u64) -> u32 {
        let [first, further @ ..] = leaves else {
            return NO_TREE;
        };
        let number = self.add(*first, class_documents);
        if further.is_empty() {
            return number;
        }
        let mut list = vec![0; leaves.len().next_power_of_two().max(FIRST_LIST)].into_boxed_slice();
        list[..leaves.len()].copy_from_slice(leaves);
        let list = self.store_list(list);
        if let Some(tree) = self.tree_mut(number) {
            tree.leaf_or_list = list;
            tree.leaves = u32::try_from(leaves.len()).unwrap_or(u32::MAX);
        }
        number
    }

    /// Appends `leaf` to tree `number` and adds `documents` to its total:
    /// the leaf's position and the new total.
    pub fn push_leaf(&mut self, number: u32, leaf: NodeId, documents: u64) -> Option<(usize, u64)> {
        let tree = *self.tree(number)?;
        let position = tree.leaves as usize;
        let leaf_or_list = match tree.leaves {
            1 => {
                let mut list = vec![0; FIRST_LIST].into_boxed_slice();
                list[..2].copy_from_slice(&[tree.leaf_or_list, leaf]);
                self.store_list(list)
            }
            _ => {
                let list = self.lists.get_mut(tree.leaf_or_list as usize)?;
                if position == list.len() {
                    let grown = resized(list, position, position * 2);
                    self.list_places += grown.len() - list.len();
                    *list = grown;
                }
                list[position] = leaf;
                tree.leaf_or_list
            }
        };
        let tree = self.tree_mut(number)?;
        tree.leaf_or_list = leaf_or_list;
        tree.leaves = tree.leaves.saturating_add(1);
        tree.class_documents += documents;
        Some((position, tree.class_documents))
    }

    /// Takes out the leaf at `position` of tree `number`, the last one
    /// taking its place, and `documents` from the tree's total.
    pub fn take_leaf_at(
        &mut self,
        number: u32,
        position: usize,
        documents: u64,
    ) -> Option<LeafTaken> {
        let tree = *self.tree(number)?;
        let count = tree.leaves as usize;
        if position >= count {
            return None;
        }
        let last = count - 1;
        let (leaf_or_list, moved) = match count {
            1 => (0, None),
            _ => {
                let list_number = tree.leaf_or_list;
                let list = self.lists.get_mut(list_number as usize)?;
                list[position] = list[last];
                let moved = (position < last).then(|| (position, list[position]));
                if last == 1 {
                    // One leaf left: held in the tree, the list given back.
                    let only = list[0];
                    self.release_list(list_number);
                    (only, moved)
                } else {
                    if list.len() > SHRINK_ABOVE && last * 4 < list.len() {
                        let shrunk = resized(list, last, last * 2);
                        self.list_places -= list.len() - shrunk.len();
                        *list = shrunk;
                    }
                    (list_number, moved)
                }
            }
        };
        let tree = self.tree_mut(number)?;
        tree.leaves -= 1;
        tree.leaf_or_list = leaf_or_list;
        tree.class_documents -= documents;
        let tree_released = tree.leaves == 0;
        if tree_released {
            self.trees[number as usize] = Tree::default();
            self.len -= 1;
            self.vacant.push(number);
        }
        Some(LeafTaken {
            moved,
            tree_released,
        })
    }

    /// Takes tree `number` out: its leaves and its document total; its
    /// number is free for reuse.
    pub fn remove(&mut self, number: u32) -> Option<(LeafList, u64)> {
        let tree = *self.tree(number)?;
        let leaves = match tree.leaves {
            1 => LeafList::One(tree.leaf_or_list),
            count => {
                let list = self.release_list(tree.leaf_or_list);
                let mut leaves = list.into_vec();
                leaves.truncate(count as usize);
                LeafList::Many(leaves)
            }
        };
        self.trees[number as usize] = Tree::default();
        self.len -= 1;
        self.vacant.push(number);
        Some((leaves, tree.class_documents))
    }

    fn store_list(&mut self, list: Box<[NodeId]>) -> u32 {
        self.list_places += list.len();
        if let Some(number) = self.vacant_lists.pop() {
            self.lists[number as usize] = list;
            return number;
        }
        self.lists.push(list);
        // Fewer lists than trees.
        u32::try_from(self.lists.len() - 1).unwrap_or(NO_TREE)
    }

    /// Takes list `number` out of its slab (an empty slice if vacant).
    fn release_list(&mut self, number: u32) -> Box<[NodeId]> {
        let Some(slot) = self.lists.get_mut(number as usize) else {
            return Box::default();
        };
        let list = std::mem::take(slot);
        if !list.is_empty() {
            self.list_places -= list.len();
            self.vacant_lists.push(number);
        }
        list
    }

    /// Heap bytes of the trees' slab.
    pub fn heap_bytes(&self) -> usize {
        self.trees.capacity() * size_of::<Tree>() + self.vacant.capacity() * size_of::<u32>()
    }

    /// Heap bytes of the lists (classes of two or more leaves) and their slab.
    pub fn list_heap_bytes(&self) -> usize {
        self.list_places * size_of::<NodeId>()
            + self.lists.capacity() * size_of::<Box<[NodeId]>>()
            + self.vacant_lists.capacity() * size_of::<u32>()
    }

    /// Places of all lists, counted again (tests of the running count).
    #[cfg(test)]
    pub fn recounted_list_places(&self) -> usize {
        self.lists.iter().map(|list| list.len()).sum()
    }

    /// Places of all lists, as counted while they changed.
    #[cfg(test)]
    pub fn list_places(&self) -> usize {
        self.list_places
    }

    /// Gives back memory after many removals when most numbers are vacant:
    /// vacant numbers at the end go, the others are reused lowest first.
    pub fn release_spare(&mut self) {
        release_spare_numbers(&mut self.trees, &mut self.vacant, self.len, |tree| {
            tree.leaves == 0
        });
        let lists_in_use = self.lists.len() - self.vacant_lists.len();
        release_spare_numbers(
            &mut self.lists,
            &mut self.vacant_lists,
            lists_in_use,
            |list| list.is_empty(),
        );
    }
}

/// A list of room `room` holding the first `used` places of `list`.
fn resized(list: &[NodeId], used: usize, room: usize) -> Box<[NodeId]> {
    let mut resized = vec![0; room.max(used)].into_boxed_slice();
    resized[..used].copy_from_slice(&list[..used]);
    resized
}

/// A slab's vacant numbers at its end given back, the rest reused lowest
/// first, once fewer than a quarter of its places are in use.
fn release_spare_numbers<T>(
    slab: &mut Vec<T>,
    vacant: &mut Vec<u32>,
    in_use: usize,
    is_vacant: impl Fn(&T) -> bool,
) {
    if slab.capacity() <= 4096 || in_use >= slab.capacity() / 4 {
        return;
    }
    while slab.last().is_some_and(&is_vacant) {
        slab.pop();
    }
    let end = slab.len();
    slab.shrink_to(end.max(in_use * 2));
    vacant.retain(|&number| (number as usize) < end);
    // Highest first: `pop` takes the lowest.
    vacant.sort_unstable_by(|a, b| b.cmp(a));
    vacant.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_of(trees: &mut Trees, leaves: &[NodeId]) -> u32 {
        let number = trees.add(leaves[0], 1 + leaves.len() as u64);
        for &leaf in &leaves[1..] {
            trees.push_leaf(number, leaf, 0);
        }
        number
    }

    #[test]
    fn a_tree_is_16_bytes_and_one_leaf_needs_no_list() {
        assert_eq!(size_of::<Tree>(), 16);
        let mut trees = Trees::default();
        let number = trees.add(7, 2);
        assert_eq!((trees.leaves(number), trees.list_places()), (&[7][..], 0));
        assert_eq!(trees.push_leaf(number, 8, 1), Some((1, 3)));
        assert_eq!(trees.push_leaf(number, 9, 1), Some((2, 4)));
        assert_eq!(
            (trees.leaves(number), trees.list_places()),
            (&[7, 8, 9][..], 4)
        );
        let taken = trees.take_leaf_at(number, 0, 1);
        assert_eq!(
            taken,
            Some(LeafTaken {
                moved: Some((0, 9)),
                tree_released: false
            })
        );
        assert_eq!(trees.leaves(number), &[9, 8]);
        assert_eq!(trees.take_leaf_at(number, 2, 1), None);
        assert_eq!(
            trees.take_leaf_at(number, 1, 1),
            Some(LeafTaken {
                moved: None,
                tree_released: false
            })
        );
        // Back to one leaf: its list is given back.
        assert_eq!((trees.leaves(number), trees.list_places()), (&[9][..], 0));
        assert_eq!(trees.class_documents(number), Some(2));
        assert_eq!(
            trees.take_leaf_at(number, 0, 1),
            Some(LeafTaken {
                moved: None,
                tree_released: true
            })
        );
        assert!(!trees.contains(number));
        assert_eq!((trees.len(), trees.leaf_count(number)), (0, 0));
    }

    #[test]
    fn a_tree_added_with_its_leaves_is_the_one_pushed_leaf_by_leaf() {
        for count in [1usize, 2, 3, 4, 5, 8, 9, 17, 64] {
            let leaves: Vec<NodeId> = (10..10 + count as NodeId).collect();
            let (mut pushed, mut added) = (Trees::default(), Trees::default());
            let by_push = tree_of(&mut pushed, &leaves);
            let at_once = added.add_with_leaves(&leaves, 1 + count as u64);
            assert_eq!(added.leaves(at_once), pushed.leaves(by_push), "{count}");
            assert_eq!(
                added.class_documents(at_once),
                pushed.class_documents(by_push)
            );
            // The same room: lists shrink and grow from it as they would.
            assert_eq!(added.list_places(), pushed.list_places(), "{count}");
            assert_eq!(added.list_places(), added.recounted_list_places());
            assert_eq!(
                added.push_leaf(at_once, 99, 1),
                pushed.push_leaf(by_push, 99, 1)
            );
            assert_eq!(added.list_places(), pushed.list_places(), "{count}");
        }
        assert_eq!(Trees::default().add_with_leaves(&[], 1), NO_TREE);
    }

    #[test]
    fn numbers_are_kept_and_reused_and_vacant_ones_read_as_none() {
        let mut trees = Trees::default();
        let first = tree_of(&mut trees, &[1]);
        let second = tree_of(&mut trees, &[2, 3]);
        assert_eq!((first, second, trees.len()), (0, 1, 2));
        assert_eq!(trees.remove(first), Some((LeafList::One(1), 2)));
        assert!(!trees.contains(first));
        assert!(trees.remove(first).is_none());
        assert_eq!(trees.class_documents(second), Some(3));
        assert_eq!(tree_of(&mut trees, &[4]), first);
        assert_eq!(trees.remove(second), Some((LeafList::Many(vec![2, 3]), 3)));
        assert_eq!(trees.list_places(), 0);
        // The list's number is reused too.
        let third = tree_of(&mut trees, &[5, 6, 7]);
        assert_eq!(
            (trees.leaves(third), trees.lists.len()),
            (&[5, 6, 7][..], 1)
        );
        assert!(trees.leaves(NO_TREE).is_empty());
        assert_eq!(trees.class_documents(NO_TREE), None);
    }

    #[test]
    fn lists_follow_a_model_through_growth_and_shrinking() {
        // Leaves pushed and taken at pseudo-random places of a few trees;
        // each tree's leaves must match a vector that does the same.
        let mut trees = Trees::default();
        let mut models: Vec<(u32, Vec<NodeId>)> = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for step in 0..20_000u32 {
            let choice = next();
            if models.is_empty() || choice % 7 == 0 {
                models.push((trees.add(step, 1), vec![step]));
                continue;
            }
            let which = (choice >> 8) as usize % models.len();
            let (number, model) = &mut models[which];
            // Grow for the first half, then mostly shrink.
            if (choice >> 20) % 10 < if step < 10_000 { 7 } else { 2 } {
                let pushed = trees.push_leaf(*number, step, 1);
                assert_eq!(pushed.map(|(position, _)| position), Some(model.len()));
                model.push(step);
            } else {
                let position = (choice >> 32) as usize % model.len();
                let taken = trees.take_leaf_at(*number, position, 1).expect("a leaf");
                model.swap_remove(position);
                assert_eq!(
                    taken.moved,
                    model.get(position).map(|&leaf| (position, leaf))
                );
                assert_eq!(taken.tree_released, model.is_empty());
                if model.is_empty() {
                    models.swap_remove(which);
                    continue;
                }
            }
            let (number, model) = &models[which];
            assert_eq!(trees.leaves(*number), model.as_slice());
        }
        for (number, model) in &models {
            assert_eq!(trees.leaves(*number), model.as_slice());
            assert_eq!(trees.class_documents(*number), Some(model.len() as u64));
        }
        assert_eq!(trees.list_places(), trees.recounted_list_places());
        assert_eq!(trees.len(), models.len());
    }

    #[test]
    fn spare_numbers_at_the_end_are_given_back_and_the_rest_stay() {
        let mut trees = Trees::default();
        let numbers: Vec<u32> = (0..10_000)
            .map(|leaf| tree_of(&mut trees, &[leaf]))
            .collect();
        for &number in &numbers[100..] {
            trees.remove(number);
        }
        trees.remove(numbers[10]);
        trees.release_spare();
        assert_eq!(trees.len(), 99);
        assert!(trees.heap_bytes() < 1_000 * size_of::<Tree>());
        for &number in numbers[..100].iter().filter(|&&number| number != 10) {
            assert_eq!(trees.leaves(number), &[number]);
        }
        assert_eq!(tree_of(&mut trees, &[7]), 10);
        assert_eq!(tree_of(&mut trees, &[8]), 100);
    }
}
