//! The list page's numbers, read from the forest alone: the largest, the
//! newest and the fastest-growing classes, with their arrivals over time.
//!
//! Design: one pass over the nodes, in slices of node numbers
//! ([`OverviewScan`]): the sidecar takes the ledger's shared lock for one
//! slice at a time, so a write waits for one slice at most, never for the
//! whole walk. Roots are ranked in a heap bounded by the number of rows
//! asked for; nodes born in the growth window are counted per root in a
//! map that holds only the classes that grew. The members of the chosen
//! classes are then read (their `born` times are the arrivals of the
//! sparkline). Nothing is kept between requests and no node carries
//! anything more.
//!
//! Consequences: the pass costs time in the number of nodes (a few tens of
//! milliseconds per million) but holds the lock for a slice at a time; it
//! reads the forest as it changes, so a node placed during the walk may be
//! missed (a page for people, not for polling). The forest knows when a fingerprint first arrived, not
//! when each verbatim copy did: arrivals and growth count new variants
//! (distinct fingerprints), while sizes count documents, as `/_neardup/stats`
//! and `/_neardup/classes/{root}` do.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::forest::{Forest, ForestStats};
use crate::units::{Fingerprint, Millis};

/// Arrivals of the last hour make a class "growing".
pub const GROWTH_WINDOW: Millis = 60 * 60 * 1000;

/// Bars of a sparkline.
pub const SPARKLINE_BUCKETS: usize = 24;

/// Shortest time axis of the sparklines, so a freshly loaded forest does not
/// spread one second over the whole line.
const MIN_AXIS: Millis = 60 * 1000;

/// Which classes come first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Most documents.
    Largest,
    /// Most new variants in the last [`GROWTH_WINDOW`].
    Growing,
    /// Latest first arrival.
    Newest,
}

impl Order {
    pub fn parse(text: Option<&str>) -> Order {
        match text {
            Some("growing") => Order::Growing,
            Some("newest") => Order::Newest,
            _ => Order::Largest,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Largest => "largest",
            Order::Growing => "growing",
            Order::Newest => "newest",
        }
    }
}

/// One class as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSummary {
    pub root: Fingerprint,
    /// Documents in the class (the forest's count).
    pub documents: u64,
    /// Distinct fingerprints (variants).
    pub nodes: usize,
    pub first_arrival: Millis,
    pub last_arrival: Millis,
    /// Variants born in the last [`GROWTH_WINDOW`].
    pub recent_nodes: usize,
    /// Variants born in each bucket of the [`Overview`]'s axis.
    pub arrivals: Vec<u32>,
}

/// The forest's counters and the chosen classes.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub stats: ForestStats,
    pub classes: Vec<ClassSummary>,
    /// The sparklines' common time axis.
    pub axis: Range,
}

/// A time range, `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: Millis,
    pub end: Millis,
}

impl Range {
    /// The bucket of `time` among `buckets` equal parts (clamped).
    pub fn bucket(self, time: Millis, buckets: usize) -> usize {
        let span = (self.end - self.start).max(1);
        let offset = i128::from((time - self.start).clamp(0, span - 1));
        let span = i128::from(span);
        ((offset * buckets as i128 / span) as usize).min(buckets.saturating_sub(1))
    }
}

/// The `limit` first classes in `order`, restricted to the roots in `only`
/// when given (an index's classes), in one walk (the reference the sliced
/// walk is tested against).
#[cfg(test)]
pub fn overview(
    forest: &Forest,
    now: Millis,
    order: Order,
    limit: usize,
    only: Option<&HashMap<Fingerprint, u64>>,
) -> Overview {
    let mut scan = OverviewScan::new(now, order, limit, only);
    while !scan.scan(forest, u32::MAX) {}
    scan.finish(forest)
}

/// [`overview`] taken in parts: [`OverviewScan::scan`] reads a slice of
/// the node numbers at a time, so the caller can release its lock between
/// slices and a writer never waits for more than one; then
/// [`OverviewScan::finish`] reads the chosen classes. Nodes placed or
/// removed meanwhile may be seen or missed: a page for people, as of about
/// the moment it was asked for.
pub struct OverviewScan<'only> {
    now: Millis,
    order: Order,
    limit: usize,
    only: Option<&'only HashMap<Fingerprint, u64>>,
    /// Variants born in the growth window, per root.
    recent: HashMap<Fingerprint, usize>,
    /// Min-heap of the best `limit` so far: (primary key, tie-break, root).
    best: BinaryHeap<Reverse<(i64, i64, Fingerprint)>>,
    /// The next node number to read.
    next: u32,
}

impl<'only> OverviewScan<'only> {
    pub fn new(
        now: Millis,
        order: Order,
        limit: usize,
        only: Option<&'only HashMap<Fingerprint, u64>>,
    ) -> Self {
        OverviewScan {
            now,
            order,
            limit,
            only,
            recent: HashMap::new(),
            best: BinaryHeap::new(),
            next: 0,
        }
    }

    fn keep(&mut self, key: (i64, i64, Fingerprint)) {
        if self.best.len() < self.limit {
            self.best.push(Reverse(key));
        } else if self.best.peek().is_some_and(|Reverse(worst)| key > *worst) {
            self.best.pop();
            self.best.push(Reverse(key));
        }
    }

    /// Reads the nodes of the next `numbers` node numbers. Returns whether
    /// every node has been read.
    pub fn scan(&mut self, forest: &Forest, numbers: u32) -> bool {
        let start = self.next;
        let bound = u32::try_from(forest.number_bound()).unwrap_or(u32::MAX);
        let end = start.saturating_add(numbers).min(bound);
        let recent_since = self.now - GROWTH_WINDOW;
        for node in forest.iter_nodes_numbered(start..end) {
            if self.only.is_some_and(|only| !only.contains_key(&node.root)) {
                continue;
            }
            if node.born >= recent_since {
                *self.recent.entry(node.root).or_default() += 1;
            }
            if node.is_root {
                let documents = forest.class_documents(node.root).unwrap_or(node.documents);
                match self.order {
                    Order::Largest => self.keep((clamp(documents), node.touched, node.root)),
                    Order::Newest => self.keep((node.born, clamp(documents), node.root)),
                    Order::Growing => {}
                }
            }
        }
        self.next = end;
        end >= bound
    }

    /// The chosen classes, read from `forest` as it is now (a class merged
    /// into another since it was chosen is left out).
    pub fn finish(mut self, forest: &Forest) -> Overview {
        if self.order == Order::Growing {
            let grown: Vec<(Fingerprint, usize)> = self
                .recent
                .iter()
                .map(|(&root, &count)| (root, count))
                .collect();
            for (root, count) in grown {
                let documents = forest.class_documents(root).unwrap_or(0);
                self.keep((count as i64, clamp(documents), root));
            }
        }
        let now = self.now;
        let mut chosen: Vec<Fingerprint> = std::mem::take(&mut self.best)
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((_, _, root))| root)
            .collect();
        chosen.truncate(self.limit);
        let mut classes: Vec<ClassSummary> = chosen
            .iter()
            .filter_map(|&root| summary(forest, root, self.recent.get(&root).copied().unwrap_or(0)))
            .collect();
        let retention_start = forest.config().retention.map(|retention| now - retention);
        let earliest = classes
            .iter()
            .map(|class| class.first_arrival)
            .min()
            .unwrap_or(now);
        let start = retention_start.map_or(earliest, |start| start.max(earliest));
        let axis = Range {
            start: start.min(now - MIN_AXIS),
            end: now + 1,
        };
        for class in &mut classes {
            class.arrivals = arrivals(forest, class.root, axis);
        }
        Overview {
            stats: forest.stats(),
            classes,
            axis,
        }
    }
}

/// One class's sizes and times (arrivals left empty).
pub fn summary(forest: &Forest, root: Fingerprint, recent_nodes: usize) -> Option<ClassSummary> {
    let class = forest.class(root)?;
    let mut first_arrival = Millis::MAX;
    let mut last_arrival = Millis::MIN;
    for node in class
        .members
        .iter()
        .filter_map(|&member| forest.node(member))
    {
        first_arrival = first_arrival.min(node.born);
        last_arrival = last_arrival.max(node.touched);
    }
    Some(ClassSummary {
        root,
        documents: class.documents,
        nodes: class.nodes,
        first_arrival,
        last_arrival,
        recent_nodes,
        arrivals: Vec::new(),
    })
}

/// Variants of the class born in each of [`SPARKLINE_BUCKETS`] parts of `axis`.
pub fn arrivals(forest: &Forest, root: Fingerprint, axis: Range) -> Vec<u32> {
    let mut counts = vec![0u32; SPARKLINE_BUCKETS];
    if let Some(class) = forest.class(root) {
        for node in class
            .members
            .iter()
            .filter_map(|&member| forest.node(member))
        {
            let bucket = axis.bucket(node.born, SPARKLINE_BUCKETS);
            counts[bucket] = counts[bucket].saturating_add(1);
        }
    }
    counts
}

fn clamp(documents: u64) -> i64 {
    i64::try_from(documents).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::ForestConfig;

    const HOUR: Millis = 60 * 60 * 1000;

    /// Three classes: a big old one, a small new one growing fast, a
    /// singleton in between; documents counted as the forest counts them.
    fn forest() -> (Forest, [Fingerprint; 3], Millis) {
        let mut forest = Forest::new(ForestConfig::default()).expect("valid");
        let big = 0xff00_0000_0000_0000;
        let fresh = 0x00ff_0000_0000_0000;
        let single = 0x0000_ff00_0000_0000;
        for (time, fingerprint) in [
            (0, big),
            (HOUR, big),
            (HOUR, big | 1),
            (2 * HOUR, big | 2),
            (3 * HOUR, single),
            (10 * HOUR, fresh),
            (10 * HOUR + 1, fresh | 1),
            (10 * HOUR + 2, fresh | 2),
        ] {
            forest.assign(fingerprint, time);
        }
        (forest, [big, fresh, single], 10 * HOUR + 10)
    }

    /// A walk in slices of one node number sees what one walk sees, and a
    /// class placed during the walk under a number ahead of it is read.
    #[test]
    fn a_walk_in_slices_reads_what_one_walk_reads() {
        let (mut forest, _, now) = forest();
        for order in [Order::Largest, Order::Growing, Order::Newest] {
            let whole = overview(&forest, now, order, 10, None);
            let mut scan = OverviewScan::new(now, order, 10, None);
            let mut slices = 0;
            while !scan.scan(&forest, 1) {
                slices += 1;
            }
            assert_eq!(slices, forest.number_bound() - 1);
            assert_eq!(scan.finish(&forest), whole, "{order:?}");
        }
        let mut scan = OverviewScan::new(now, Order::Largest, 10, None);
        assert!(!scan.scan(&forest, 4));
        let late = 0x0000_0000_00ff_0000;
        forest.assign(late, now);
        while !scan.scan(&forest, 4) {}
        let listed = scan.finish(&forest);
        assert_eq!(
            listed.classes.len(),
            4,
            "the new class is read: its number is after the walk's"
        );
    }

    #[test]
    fn each_order_puts_its_class_first_and_sizes_match_the_forest() {
        let (forest, [big, fresh, single], now) = forest();
        let largest = overview(&forest, now, Order::Largest, 10, None);
        let roots: Vec<Fingerprint> = largest.classes.iter().map(|c| c.root).collect();
        assert_eq!(roots, [big, fresh, single]);
        assert_eq!(largest.classes[0].documents, 4);
        assert_eq!(largest.classes[0].nodes, 3);
        assert_eq!(largest.classes[0].first_arrival, 0);
        assert_eq!(largest.classes[0].last_arrival, 2 * HOUR);
        let documents: u64 = largest.classes.iter().map(|c| c.documents).sum();
        assert_eq!(documents, largest.stats.documents);

        let growing = overview(&forest, now, Order::Growing, 10, None);
        assert_eq!(
            growing.classes.len(),
            1,
            "only one class grew in the last hour"
        );
        assert_eq!(growing.classes[0].root, fresh);
        assert_eq!(growing.classes[0].recent_nodes, 3);

        let newest = overview(&forest, now, Order::Newest, 2, None);
        let roots: Vec<Fingerprint> = newest.classes.iter().map(|c| c.root).collect();
        assert_eq!(roots, [fresh, single]);
    }

    #[test]
    fn sparklines_count_variants_by_arrival() {
        let (forest, [big, ..], now) = forest();
        let largest = overview(&forest, now, Order::Largest, 1, None);
        assert_eq!(largest.axis.start, 0);
        let arrivals = &largest.classes[0].arrivals;
        assert_eq!(arrivals.len(), SPARKLINE_BUCKETS);
        assert_eq!(arrivals.iter().sum::<u32>(), 3, "three variants of {big:x}");
        assert_eq!(arrivals[0], 1);
        assert_eq!(arrivals[largest.axis.bucket(HOUR, SPARKLINE_BUCKETS)], 1);
    }

    #[test]
    fn a_filter_keeps_only_the_classes_given() {
        let (forest, [_, fresh, _], now) = forest();
        let only = HashMap::from([(fresh, 3)]);
        let filtered = overview(&forest, now, Order::Largest, 10, Some(&only));
        let roots: Vec<Fingerprint> = filtered.classes.iter().map(|c| c.root).collect();
        assert_eq!(roots, [fresh]);
    }

    #[test]
    fn buckets_are_clamped_to_the_axis() {
        let axis = Range {
            start: 100,
            end: 200,
        };
        assert_eq!(axis.bucket(0, 10), 0);
        assert_eq!(axis.bucket(150, 10), 5);
        assert_eq!(axis.bucket(10_000, 10), 9);
        let empty = Range { start: 5, end: 5 };
        assert_eq!(empty.bucket(7, 10), 0);
    }
}
