//! One shard of a [`super::KeyNodeTable`]: the sorted table of (key,
//! node) entries of the mixed keys that share its top bits, with its
//! directory, and how entries are laid out in order (see the parent's
//! module documentation).

use std::marker::PhantomData;

use super::format::KeyFormat;
use crate::units::NodeId;

/// Most top bits of the mixed key that choose a shard: at most 256 shards.
pub(super) const MAX_DEPTH: u32 = 8;

/// Bits of the key below a shard's own that its directory stands for
/// (summed over the shards) while node numbers fit the format's narrow
/// node field; one more for each bit an entry's node takes beyond those.
pub(super) const HIGH_BITS: u32 = 16;

/// The table fills to this fraction (percent) before it grows.
pub(super) const MAX_LOAD_PERCENT: usize = 92;

/// The table grows by its homes divided by this.
pub(super) const GROWTH_DIVISOR: usize = 8;

/// Places after the last home, for entries displaced past it.
pub(super) const TAIL_PLACES: usize = 64;

/// Homes of the smallest shard that holds anything.
pub(super) const MIN_HOMES: usize = 8;

/// Bits beyond `F`'s narrow node field an entry's node field needs to
/// hold `node` (as `node + 1`, 0 marking a vacant place).
pub(super) fn wide_for<F: KeyFormat>(node: NodeId) -> u32 {
    let stored = u64::from(node) + 1;
    (64 - stored.leading_zeros())
        .saturating_sub(F::NARROW_NODE_BITS)
        .min(32 - F::NARROW_NODE_BITS)
}

/// The place a shard's key starts from in a shard of `homes` homes: the
/// key scaled to the length (its high 32 bits choose).
pub(super) fn home(within: u64, homes: usize) -> usize {
    (((within >> 32) * homes as u64) >> 32) as usize
}

/// How a shard reads its keys and entries: the top `depth` bits of a
/// mixed key name the shard; of the bits below them, its directory stands
/// for the next [`Layout::high_bits`] and each entry keeps the rest
/// ([`Layout::low_bits`]) beside its node, in [`Layout::node_bits`]
/// (`wide` more than the format's narrow field: the node field widens as
/// the numbers grow, and the directory takes the bits the entry gives up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Layout<F> {
    pub(super) depth: u32,
    pub(super) wide: u32,
    format: PhantomData<F>,
}

impl<F: KeyFormat> Layout<F> {
    pub(super) fn new(depth: u32, wide: u32) -> Self {
        Layout {
            depth,
            wide,
            format: PhantomData,
        }
    }

    /// The mixed key as the shard orders it: its bits below the shard's,
    /// at the top.
    pub(super) fn within(self, mixed: u64) -> u64 {
        mixed << self.depth
    }

    /// The mixed key of a key `within` a shard of `prefix` (its top
    /// [`MAX_DEPTH`] bits, of which the shard's own are the first).
    pub(super) fn mixed(self, prefix: usize, within: u64) -> u64 {
        if self.depth == 0 {
            return within;
        }
        let own = (prefix as u64) >> (MAX_DEPTH - self.depth);
        (own << (64 - self.depth)) | (within >> self.depth)
    }

    /// Bits of the key the directory stands for.
    fn high_bits(self) -> u32 {
        HIGH_BITS + self.wide - self.depth
    }

    /// Bits of the key an entry keeps.
    fn low_bits(self) -> u32 {
        F::KEY_BITS - HIGH_BITS - self.wide
    }

    /// Bits of `within` below the key's last kept bit.
    fn below_low(self) -> u32 {
        64 - F::KEY_BITS + self.depth
    }

    pub(super) fn node_bits(self) -> u32 {
        F::NARROW_NODE_BITS + self.wide
    }

    pub(super) fn high(self, within: u64) -> usize {
        (within >> (64 - self.high_bits())) as usize
    }

    pub(super) fn low(self, within: u64) -> u64 {
        (within >> self.below_low()) & ((1 << self.low_bits()) - 1)
    }

    /// The key within the shard of an entry of directory part `high`.
    pub(super) fn within_of(self, high: usize, low: u64) -> u64 {
        ((high as u64) << (64 - self.high_bits())) | (low << self.below_low())
    }

    /// Positions of a shard's directory.
    pub(super) fn directory_len(self) -> usize {
        (1 << self.high_bits()) + 1
    }

    pub(super) fn entry(self, low: u64, node: NodeId) -> F::Entry {
        F::entry(low, node, self.node_bits())
    }

    pub(super) fn low_of(self, entry: F::Entry) -> u64 {
        F::low(entry, self.node_bits())
    }

    pub(super) fn node_of(self, entry: F::Entry) -> NodeId {
        F::node(entry, self.node_bits())
    }
}

/// Whether a place holds no entry.
pub(super) fn is_vacant<F: KeyFormat>(entry: &F::Entry) -> bool {
    *entry == F::VACANT
}

/// Entries a table of `homes` holds before it grows.
pub(super) fn max_len(homes: usize) -> usize {
    homes * MAX_LOAD_PERCENT / 100
}

/// Homes for `needed` entries: `from` (at least [`MIN_HOMES`]) grown by
/// an eighth at a time.
pub(super) fn homes_for(needed: usize, from: usize) -> usize {
    let mut homes = from.max(MIN_HOMES);
    while max_len(homes) < needed {
        homes += homes / GROWTH_DIVISOR;
    }
    homes
}

/// Bytes of the places of a shard of `homes` homes.
pub(super) fn place_bytes<F: KeyFormat>(homes: usize) -> usize {
    (homes + TAIL_PLACES) * size_of::<F::Entry>()
}

/// One shard: the table of the mixed keys that share its top `depth`
/// bits, ordered by the bits below ([`Layout::within`]).
#[derive(Debug, Clone)]
pub(super) struct Shard<F: KeyFormat> {
    /// `homes` places that keys scale to, then [`TAIL_PLACES`].
    pub(super) places: Vec<F::Entry>,
    pub(super) homes: usize,
    /// Empty while `places` is; then [`Layout::directory_len`] positions
    /// (module docs).
    pub(super) starts: Vec<u32>,
    pub(super) len: usize,
    pub(super) layout: Layout<F>,
}

impl<F: KeyFormat> Default for Shard<F> {
    fn default() -> Self {
        Shard {
            places: Vec::new(),
            homes: 0,
            starts: Vec::new(),
            len: 0,
            layout: Layout::default(),
        }
    }
}

/// Where a walk for a key ended.
enum Walk {
    /// At an entry of the key.
    Found(usize),
    /// Where the key would go: a vacant place or the first entry of a
    /// larger key (`None`: past the last place).
    Absent(Option<usize>),
}

impl<F: KeyFormat> Shard<F> {
    /// Gives the entry at `place` the node `node`.
    fn set_node(&mut self, place: usize, node: NodeId) {
        let layout = self.layout;
        self.places[place] = layout.entry(layout.low_of(self.places[place]), node);
    }

    pub(super) fn allocation_size(&self) -> usize {
        self.places.capacity() * size_of::<F::Entry>() + self.starts.capacity() * size_of::<u32>()
    }

    /// True when making room for `additional` more entries would grow the
    /// shard past `split_bytes` and it can split instead.
    pub(super) fn splits_for(&self, additional: usize, split_bytes: usize) -> bool {
        let needed = self.len.saturating_add(additional);
        self.layout.depth < MAX_DEPTH
            && needed > max_len(self.homes)
            && place_bytes::<F>(homes_for(needed, self.homes)) > split_bytes
    }

    pub(super) fn home(&self, within: u64) -> usize {
        home(within, self.homes)
    }

    pub(super) fn start(&self, high: usize) -> usize {
        self.starts[high] as usize
    }

    /// Every entry, as its key within the shard and its node, in order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        self.entries_from_place(0)
    }

    /// The entries of key `within` and after, as [`Self::entries`].
    pub(super) fn entries_from(&self, within: u64) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        let place = match self.walk(within, |_| true) {
            Walk::Found(place) | Walk::Absent(Some(place)) => place,
            Walk::Absent(None) => self.places.len(),
        };
        self.entries_from_place(place)
    }

    /// The entries from `place` on, as [`Self::entries`].
    fn entries_from_place(&self, place: usize) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        let mut high = self.high_at(place);
        self.places
            .iter()
            .enumerate()
            .skip(place)
            .filter(|(_, entry)| !is_vacant::<F>(entry))
            .map(move |(place, &entry)| {
                while self.start(high + 1) <= place {
                    high += 1;
                }
                (
                    self.layout.within_of(high, self.layout.low_of(entry)),
                    self.layout.node_of(entry),
                )
            })
    }

    /// The directory's part of an entry at `place` (the last whose start
    /// is at or before it).
    fn high_at(&self, place: usize) -> usize {
        self.starts
            .partition_point(|&start| start as usize <= place)
            .saturating_sub(1)
    }

    /// From the key's home: past the entries of smaller keys, then each
    /// entry of the key until `accept` takes one.
    fn walk(&self, within: u64, mut accept: impl FnMut(NodeId) -> bool) -> Walk {
        if self.places.is_empty() {
            return Walk::Absent(None);
        }
        let layout = self.layout;
        let (key_high, key_low) = (layout.high(within), layout.low(within));
        let (first, after) = (self.start(key_high), self.start(key_high + 1));
        let mut place = self.home(within);
        while place < self.places.len() {
            let entry = self.places[place];
            if is_vacant::<F>(&entry) || place >= after {
                return Walk::Absent(Some(place));
            }
            if place >= first {
                let low = layout.low_of(entry);
                if low > key_low {
                    return Walk::Absent(Some(place));
                }
                if low == key_low && accept(layout.node_of(entry)) {
                    return Walk::Found(place);
                }
            }
            place += 1;
        }
        Walk::Absent(None)
    }

    pub(super) fn find(&self, within: u64, accept: impl FnMut(NodeId) -> bool) -> Option<NodeId> {
        match self.walk(within, accept) {
            Walk::Found(place) => Some(self.layout.node_of(self.places[place])),
            Walk::Absent(_) => None,
        }
    }

    pub(super) fn replace(
        &mut self,
        within: u64,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> bool {
        self.widen_for(node);
        match self.walk(within, accept) {
            Walk::Found(place) => {
                self.set_node(place, node);
                true
            }
            Walk::Absent(_) => false,
        }
    }

    /// Drops the first entry of `within` and adds `node` after its last,
    /// in the places the key's entries hold (side by side): the entries
    /// after them do not move. Whether the key had an entry.
    pub(super) fn shift_in(&mut self, within: u64, node: NodeId) -> bool {
        self.widen_for(node);
        let Walk::Found(first) = self.walk(within, |_| true) else {
            return false;
        };
        let layout = self.layout;
        let low = layout.low_of(self.places[first]);
        let after = self.start(layout.high(within) + 1);
        let mut last = first;
        while last + 1 < after.min(self.places.len()) {
            let next = self.places[last + 1];
            if is_vacant::<F>(&next) || layout.low_of(next) != low {
                break;
            }
            self.places[last] = next;
            last += 1;
        }
        self.places[last] = layout.entry(low, node);
        true
    }

    pub(super) fn insert(&mut self, within: u64, node: NodeId) {
        self.widen_for(node);
        if let Err(room) = self.find_or_room(within, |_| false) {
            self.put(room, within, node);
        }
    }

    /// The directory after an entry of high half `key_high` went to `place`
    /// and the entries from there to `vacant` moved one place on.
    fn moved_on(&mut self, key_high: usize, place: usize, vacant: usize) {
        let (place, vacant) = (place as u32, vacant as u32);
        // Entries of this high half and below start by `place` at the latest
        // (the positions are in order: those past it are a run that ends
        // here; in a small shard, a run of many high halves).
        let below = &mut self.starts[..=key_high];
        let past = run_from_end(below, |start| start > place);
        let below_len = below.len();
        below[below_len - past..].fill(place);
        // Those above: after the new entry, and one on where they moved.
        let above = &mut self.starts[key_high + 1..];
        let moved = run_from_start(above, |start| start <= vacant);
        for start in &mut above[..moved] {
            *start = if *start <= place {
                place + 1
            } else {
                *start + 1
            };
        }
    }

    pub(super) fn remove_if(
        &mut self,
        within: u64,
        accept: impl FnMut(NodeId) -> bool,
    ) -> Option<NodeId> {
        let Walk::Found(place) = self.walk(within, accept) else {
            return None;
        };
        let removed = self.layout.node_of(self.places[place]);
        // The entries after it that are not at their home move one back.
        let mut entry_high = self.layout.high(within);
        let mut next = place + 1;
        while next < self.places.len() && !is_vacant::<F>(&self.places[next]) {
            while self.start(entry_high + 1) <= next {
                entry_high += 1;
            }
            let entry = self.places[next];
            if self.home(self.layout.within_of(entry_high, self.layout.low_of(entry))) == next {
                break;
            }
            next += 1;
        }
        self.places.copy_within(place + 1..next, place);
        self.places[next - 1] = F::VACANT;
        self.len -= 1;
        // Positions among the entries moved back move back with them.
        let above = &mut self.starts[self.layout.high(within) + 1..];
        let moved = run_from_start(above, |start| (start as usize) < next);
        for start in &mut above[..moved] {
            *start -= 1;
        }
        Some(removed)
    }

    /// Makes room for `additional` more entries, growing by an eighth (or
    /// more, when asked for more) at once.
    pub(super) fn reserve(&mut self, additional: usize) {
        let needed = self.len.saturating_add(additional);
        if needed > max_len(self.homes) {
            self.place_over(homes_for(needed, self.homes));
        }
    }

    /// Gives back room beyond what `capacity` entries (at least those
    /// held) need.
    pub(super) fn shrink_to(&mut self, capacity: usize) {
        let needed = capacity.max(self.len);
        if needed == 0 {
            (self.places, self.starts, self.homes) = (Vec::new(), Vec::new(), 0);
            return;
        }
        let homes = homes_for(needed, MIN_HOMES);
        if homes < self.homes {
            self.place_over(homes);
        }
    }

    /// The entries placed again over `homes` homes, in their order.
    fn place_over(&mut self, homes: usize) {
        self.place_over_as(homes, self.layout);
    }

    /// [`Self::place_over`], the entries written in `layout`.
    fn place_over_as(&mut self, homes: usize, layout: Layout<F>) {
        let mut builder = InOrder::new(homes, layout);
        for (within, node) in self.entries() {
            builder.push(within, node);
        }
        builder.finish(self);
    }

    /// Entries wide enough for `node`: when its number needs more bits
    /// than the node field has, the shard is laid out again with a wider
    /// one, its directory standing for the bits each entry gives up (a
    /// shard's copy, once per bit, from 2^24 nodes on).
    fn widen_for(&mut self, node: NodeId) {
        let wide = wide_for::<F>(node);
        if wide <= self.layout.wide || node == NodeId::MAX {
            return;
        }
        let layout = Layout::new(self.layout.depth, wide);
        if self.places.is_empty() {
            self.layout = layout;
        } else {
            self.place_over_as(self.homes, layout);
        }
    }

    pub(super) fn find_or_insert(
        &mut self,
        within: u64,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> Option<NodeId> {
        self.widen_for(node);
        match self.find_or_room(within, accept) {
            Ok(place) => Some(self.layout.node_of(self.places[place])),
            Err(room) => {
                self.put(room, within, node);
                None
            }
        }
    }

    pub(super) fn replace_or_insert(
        &mut self,
        within: u64,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> Option<NodeId> {
        self.widen_for(node);
        match self.find_or_room(within, accept) {
            Ok(place) => {
                let replaced = self.layout.node_of(self.places[place]);
                self.set_node(place, node);
                Some(replaced)
            }
            Err(room) => {
                self.put(room, within, node);
                None
            }
        }
    }

    /// Keeps the entries whose node `keep` takes, laid out again over the
    /// same homes.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(NodeId) -> bool) {
        if self.places.is_empty() {
            return;
        }
        let mut builder = InOrder::new(self.homes, self.layout);
        for (within, node) in self.entries() {
            if keep(node) {
                builder.push(within, node);
            }
        }
        builder.finish(self);
    }

    /// Looks at the entries from key `within` on, about `budget` places
    /// (on to the end of the last key's entries, and past vacant places
    /// to an entry), and takes out those whose node `keep` refuses. Gives
    /// the places looked at, and the key to go on from (`None`: the
    /// shard's end was reached). A key, not a place, because the removals
    /// move entries back.
    pub(super) fn sweep_from(
        &mut self,
        within: u64,
        budget: usize,
        mut keep: impl FnMut(NodeId) -> bool,
    ) -> (usize, Option<u64>) {
        let mut place = match self.walk(within, |_| true) {
            Walk::Found(place) | Walk::Absent(Some(place)) => place,
            Walk::Absent(None) => return (0, None),
        };
        let layout = self.layout;
        let first = place;
        let mut high = self
            .starts
            .partition_point(|&start| start as usize <= place);
        high = high.saturating_sub(1);
        let mut refused = Vec::new();
        let mut last = None;
        let mut stop = None;
        while place < self.places.len() {
            let entry = self.places[place];
            if !is_vacant::<F>(&entry) {
                while self.start(high + 1) <= place {
                    high += 1;
                }
                let key = layout.within_of(high, layout.low_of(entry));
                // Past the budget, at the first entry of another key.
                if place - first >= budget && last.is_some_and(|last| last != key) {
                    stop = Some(key);
                    break;
                }
                let node = layout.node_of(entry);
                if !keep(node) {
                    refused.push((key, node));
                }
                last = Some(key);
            }
            place += 1;
        }
        for (key, node) in refused {
            self.remove_if(key, |held| held == node);
        }
        ((place - first).max(1), stop)
    }

    /// With room for one more entry: the place of the first entry of
    /// `within` that `accept` takes, or where one would go and the first
    /// vacant place from there. `accept` sees each entry of the key at
    /// most once, in order (a caller may count with it): when the run
    /// reaches past the last place, the tail gets more places and the walk
    /// is made again with nothing taken, as the first one took nothing.
    /// (More homes would not help: the entries of the last home, up to a
    /// key's 64 nodes of the sketch index, all start there whatever the
    /// homes, as [`InOrder::push`] knows.)
    fn find_or_room(
        &mut self,
        within: u64,
        accept: impl FnMut(NodeId) -> bool,
    ) -> Result<usize, (usize, usize)> {
        self.reserve(1);
        let mut walk = self.walk(within, accept);
        loop {
            match walk {
                Walk::Found(place) => return Ok(place),
                Walk::Absent(Some(place)) => {
                    if let Some(vacant) =
                        (place..self.places.len()).find(|&at| is_vacant::<F>(&self.places[at]))
                    {
                        return Err((place, vacant));
                    }
                }
                Walk::Absent(None) => {}
            }
            // The run reaches past the last place: a longer tail. No
            // position of the directory moves.
            self.places
                .resize(self.places.len() + TAIL_PLACES, F::VACANT);
            walk = self.walk(within, |_| false);
        }
    }

    /// Adds an entry at `place`, the entries from there to `vacant` moving
    /// one place on; `NodeId::MAX` is no node and is not added.
    fn put(&mut self, (place, vacant): (usize, usize), within: u64, node: NodeId) {
        if node == NodeId::MAX {
            return;
        }
        self.places.copy_within(place..vacant, place + 1);
        self.places[place] = self.layout.entry(self.layout.low(within), node);
        self.len += 1;
        self.moved_on(self.layout.high(within), place, vacant);
    }
}

/// How many positions from the start of `starts` (in order) `inside`
/// takes: doubling steps, then halving, so a run of a few is found in a
/// few reads (a large table's usual case) and one of thousands in a few
/// dozen.
fn run_from_start(starts: &[u32], inside: impl Fn(u32) -> bool) -> usize {
    let mut outside = 1;
    while outside <= starts.len() && inside(starts[outside - 1]) {
        outside *= 2;
    }
    let inside_len = outside / 2;
    let end = outside.min(starts.len() + 1) - 1;
    inside_len + starts[inside_len..end].partition_point(|&start| inside(start))
}

/// As [`run_from_start`], from the end of `starts` back.
fn run_from_end(starts: &[u32], inside: impl Fn(u32) -> bool) -> usize {
    let mut outside = 1;
    while outside <= starts.len() && inside(starts[starts.len() - outside]) {
        outside *= 2;
    }
    let inside_len = outside / 2;
    let end = outside.min(starts.len() + 1) - 1;
    let window = &starts[starts.len() - end..starts.len() - inside_len];
    inside_len + (window.len() - window.partition_point(|&start| !inside(start)))
}

/// Places entries given in the order of their keys (within a shard) into
/// fresh places: each at its home or right after the one before, the directory
/// written as the high halves go by.
pub(super) struct InOrder<F: KeyFormat> {
    places: Vec<F::Entry>,
    starts: Vec<u32>,
    homes: usize,
    layout: Layout<F>,
    /// The next place free after the last entry placed.
    cursor: usize,
    /// The next high half whose start is not written yet.
    next_high: usize,
    len: usize,
}

impl<F: KeyFormat> InOrder<F> {
    pub(super) fn new(homes: usize, layout: Layout<F>) -> Self {
        InOrder {
            places: vec![F::VACANT; homes + TAIL_PLACES],
            starts: vec![0; layout.directory_len()],
            homes,
            layout,
            cursor: 0,
            next_high: 0,
            len: 0,
        }
    }

    pub(super) fn push(&mut self, within: u64, node: NodeId) {
        let place = home(within, self.homes).max(self.cursor);
        if place >= self.places.len() {
            // A run past the tail (not seen with mixed keys): room for it.
            self.places.resize(place + TAIL_PLACES, F::VACANT);
        }
        self.places[place] = self.layout.entry(self.layout.low(within), node);
        while self.next_high <= self.layout.high(within) {
            self.starts[self.next_high] = place as u32;
            self.next_high += 1;
        }
        self.cursor = place + 1;
        self.len += 1;
    }

    pub(super) fn finish(mut self, shard: &mut Shard<F>) {
        for start in &mut self.starts[self.next_high..] {
            *start = self.cursor as u32;
        }
        self.places.shrink_to_fit();
        shard.places = self.places;
        shard.starts = self.starts;
        shard.homes = self.homes;
        shard.len = self.len;
        shard.layout = self.layout;
    }
}
