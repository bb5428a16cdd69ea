//! `neardup rebuild`: the forest rebuilt from the stamped documents in the
//! cluster, so the index alone is enough to recover.
//!
//! Motivation: a lost or damaged state directory, a new machine, or state
//! written under old settings should not cost the classes of everything
//! indexed so far.
//!
//! Design: a scroll over the index in index order (supported by OpenSearch
//! and Elasticsearch alike; [`crate::upstream::scan`], the scanner backfill
//! uses too) reads every document's stamps (`simhash`,
//! `cluster_root`) and text. Each distinct `simhash` becomes a node under
//! its stamped root; the text is analysed again for the side data that
//! confirms later candidates. The result is written as a snapshot.
//!
//! How it can differ from the forest that stamped the documents:
//!
//! - a node's `born` and `touched` are the earliest and latest time of its
//!   documents (`--time-field`), or the rebuild time; the order of roots born
//!   in the same millisecond follows the scroll;
//! - nodes of expired or deleted documents are gone, except a root whose
//!   members are still indexed (it comes back with no document of its own);
//!   documents deleted from the index are no longer counted;
//! - documents without stamps are skipped (counted in the summary);
//! - side data is computed with the current settings: if they changed, new
//!   documents are compared under the new rules with the old fingerprints;
//! - a stamped root that is itself a member of another class (only possible
//!   after manual edits) is followed to that class's root.

use std::collections::HashMap;

use axum::http::HeaderMap;
use serde_json::Value;

use crate::engine::{Analyzer, SideRecord, indexing_of_texts};
use crate::fingerprint::values_at;
use crate::forest::{ForestCounters, Indexing, NodeRecord};
use crate::ledger::DocumentKey;
use crate::persist::SnapshotState;
use crate::units::parse_time;
use crate::units::{Fingerprint, Millis, parse_fingerprint};
use crate::upstream::scan::{Scan, ScanOrder, ScanRequest};
use crate::upstream::{StoredDocument, Upstream};
use serde::Deserialize;

/// Documents per scroll page.
const PAGE_SIZE: usize = 1000;

/// How long the cluster keeps the scroll between pages.
const KEEP_ALIVE: &str = "2m";

/// One stamped document as read from the index.
#[derive(Debug, Clone)]
pub struct StampedDocument {
    pub index: String,
    pub id: String,
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub time: Millis,
    pub side: Option<SideRecord>,
}

/// What a rebuild read and built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RebuildSummary {
    pub documents: u64,
    pub unstamped: u64,
    pub nodes: u64,
    pub roots: u64,
    /// Roots that no indexed document has as its own fingerprint.
    pub roots_without_document: u64,
}

/// Which fields to read.
#[derive(Debug, Clone)]
pub struct RebuildFields {
    pub root_field: String,
    pub simhash_field: String,
    pub time_field: Option<String>,
}

struct NodeBuild {
    root: Fingerprint,
    born: Millis,
    touched: Millis,
    documents: u32,
    side: Option<SideRecord>,
    first_seen: usize,
}

/// Builds the state from stamped documents; `short_text_search` as the
/// server will run (it decides which nodes "within `k`" leaves out).
pub fn assemble(
    documents: Vec<StampedDocument>,
    now: Millis,
    short_text_search: bool,
) -> (SnapshotState, RebuildSummary) {
    let mut summary = RebuildSummary::default();
    let mut nodes: HashMap<Fingerprint, NodeBuild> = HashMap::new();
    let mut keys = Vec::with_capacity(documents.len());
    for (position, document) in documents.into_iter().enumerate() {
        summary.documents += 1;
        keys.push((
            DocumentKey::new(&document.index, &document.id),
            document.fingerprint,
        ));
        let node = nodes.entry(document.fingerprint).or_insert(NodeBuild {
            root: document.root,
            born: document.time,
            touched: document.time,
            documents: 0,
            side: None,
            first_seen: position,
        });
        node.born = node.born.min(document.time);
        node.touched = node.touched.max(document.time);
        node.documents = node.documents.saturating_add(1);
        if node.side.is_none() {
            node.side = document.side;
        }
    }
    // Roots no document carries as its own fingerprint come back empty.
    let claimed_roots: Vec<(Fingerprint, Millis, usize)> = nodes
        .values()
        .map(|node| (node.root, node.born, node.first_seen))
        .collect();
    for (root, born, first_seen) in claimed_roots {
        nodes.entry(root).or_insert_with(|| {
            summary.roots_without_document += 1;
            NodeBuild {
                root,
                born,
                touched: born,
                documents: 0,
                side: None,
                first_seen,
            }
        });
        if let Some(node) = nodes.get_mut(&root) {
            node.born = node.born.min(born);
        }
    }
    // A root must be a root: follow one step when a stamped root is a leaf.
    let root_of: HashMap<Fingerprint, Fingerprint> = nodes
        .iter()
        .map(|(&fingerprint, node)| (fingerprint, node.root))
        .collect();
    for (fingerprint, node) in nodes.iter_mut() {
        let stamped_root = node.root;
        let final_root = root_of.get(&stamped_root).copied().unwrap_or(stamped_root);
        node.root = if root_of.get(&final_root) == Some(&final_root) {
            final_root
        } else {
            *fingerprint
        };
    }
    let mut ordered: Vec<(Fingerprint, NodeBuild)> = nodes.into_iter().collect();
    ordered.sort_by_key(|(fingerprint, node)| (node.born, node.first_seen, *fingerprint));
    let mut state = SnapshotState {
        created: now,
        ..SnapshotState::default()
    };
    for (arrival, (fingerprint, node)) in ordered.into_iter().enumerate() {
        summary.nodes += 1;
        if node.root == fingerprint {
            summary.roots += 1;
        }
        state.nodes.push(NodeRecord {
            fingerprint,
            root: node.root,
            born: node.born,
            arrival: arrival as u64 + 1,
            touched: node.touched,
            documents: node.documents,
            indexing: node.side.as_ref().map_or(Indexing::WithinK, |side| {
                indexing_of_texts(
                    short_text_search,
                    side.short_text.as_ref(),
                    side.long_text.as_ref(),
                )
            }),
        });
        if let Some(mut side) = node.side {
            side.fingerprint = fingerprint;
            side.root = node.root;
            state.sides.push(&side);
        }
    }
    state.counters = ForestCounters {
        next_arrival: state.nodes.len() as u64,
        expired_nodes: 0,
    };
    keys.sort_unstable();
    keys.dedup_by_key(|(key, _)| *key);
    state.keys = keys;
    (state, summary)
}

/// Reads one hit into a stamped document; `None` without stamps.
pub fn read_hit(
    hit: &Value,
    fields: &RebuildFields,
    analyzer: &Analyzer,
    now: Millis,
) -> Option<StampedDocument> {
    let StoredDocument { index, id, source } = StoredDocument::deserialize(hit).ok()?;
    let source = &source;
    let stamp = |field: &str| {
        values_at(source, field)
            .into_iter()
            .find_map(|value| value.as_str().and_then(parse_fingerprint))
    };
    let fingerprint = stamp(&fields.simhash_field)?;
    let root = stamp(&fields.root_field)?;
    let time = fields
        .time_field
        .as_deref()
        .and_then(|field| values_at(source, field).into_iter().find_map(parse_time))
        .unwrap_or(now);
    let side = analyzer
        .analyze_document(source)
        .map(|analysis| analysis.side_record(fingerprint, root));
    Some(StampedDocument {
        index: index?,
        id: id?,
        fingerprint,
        root,
        time,
        side,
    })
}

/// Reads `index` in index order (a scroll, see [`crate::upstream::scan`])
/// and returns every stamped document and the count of unstamped ones;
/// calls `progress(read, total)` after each page.
///
/// # Errors
///
/// The cluster unreachable or answering an error.
pub async fn read_index(
    upstream: &Upstream,
    index: &str,
    headers: &HeaderMap,
    fields: &RebuildFields,
    analyzer: &Analyzer,
    now: Millis,
    mut progress: impl FnMut(u64, u64),
) -> anyhow::Result<(Vec<StampedDocument>, u64)> {
    let mut scan = Scan::open(
        upstream,
        ScanRequest {
            index: index.to_string(),
            order: ScanOrder::IndexOrder,
            page_size: PAGE_SIZE,
            keep_alive: KEEP_ALIVE,
            versions: false,
            headers: headers.clone(),
        },
    )
    .await?;
    let mut documents = Vec::new();
    let mut total = 0u64;
    let mut read = 0u64;
    let mut unstamped = 0u64;
    let outcome = loop {
        let page = match scan.next_page(upstream).await {
            Ok(page) => page,
            Err(error) => break Err(error),
        };
        if let Some(first_total) = page.total {
            total = first_total;
        }
        if page.hits.is_empty() {
            break Ok(());
        }
        for hit in &page.hits {
            read += 1;
            match read_hit(hit, fields, analyzer, now) {
                Some(document) => documents.push(document),
                None => unstamped += 1,
            }
        }
        progress(read, total);
    };
    scan.close(upstream).await;
    outcome?;
    Ok((documents, unstamped))
}

/// What a rebuild into a state directory needs, validated.
#[derive(Debug)]
pub struct RebuildOptions {
    /// URL of the cluster.
    pub upstream: String,
    /// Index, alias or pattern to read.
    pub index: String,
    /// Headers every request to the cluster carries (its authorization).
    pub headers: axum::http::HeaderMap,
    /// TLS towards the cluster.
    pub tls: crate::upstream::UpstreamTls,
    pub fields: RebuildFields,
    /// The engine the documents' texts are analysed with again (side data).
    pub parts: crate::ledger::EngineParts,
    /// The store written; its settings digest goes into the snapshot.
    pub store: crate::persist::StoreOptions,
    /// Show a progress bar on standard error.
    pub show_progress: bool,
}

/// Reads `options.index` and writes its forest as a snapshot into the
/// store's directory (`neardup rebuild`, and `serve --rebuild-index` when
/// the state directory holds no state). The caller decides what happens to
/// a state already there.
///
/// # Errors
///
/// The cluster unreachable or refusing the scroll, or the state directory
/// unusable.
pub fn rebuild_into(
    runtime: &tokio::runtime::Runtime,
    options: RebuildOptions,
) -> anyhow::Result<RebuildSummary> {
    let parts = options.parts;
    let analyzer = Analyzer::new(parts.fingerprinter.clone(), &parts.confirmation);
    let upstream = Upstream::new(
        &options.upstream,
        crate::config::defaults::JOB_UPSTREAM_TIMEOUT,
        &options.tls,
    )?;
    let now = crate::units::now_millis();
    let bar = options.show_progress.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} documents {wide_bar} {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let (documents, unstamped) = runtime.block_on(read_index(
        &upstream,
        &options.index,
        &options.headers,
        &options.fields,
        &analyzer,
        now,
        |read, total| {
            if let Some(bar) = &bar {
                bar.set_length(total);
                bar.set_position(read);
            }
        },
    ))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let short_text_search = parts.confirmation.short_text_search;
    let (mut state, mut summary) = assemble(documents, now, short_text_search);
    summary.unstamped = unstamped;
    state.settings_digest = options.store.settings_digest.clone();
    let opened = crate::persist::open_state(
        Some(options.store),
        parts,
        crate::persist::StateOrigin::Given(Box::new(state)),
    )?;
    // Always a store: one was asked for.
    if let Some(store) = &opened.store {
        store.snapshot(&opened.ledger, now)?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(
        id: &str,
        fingerprint: Fingerprint,
        root: Fingerprint,
        time: Millis,
    ) -> StampedDocument {
        StampedDocument {
            index: "news".into(),
            id: id.into(),
            fingerprint,
            root,
            time,
            side: None,
        }
    }

    #[test]
    fn classes_come_back_from_stamps() {
        let (state, summary) = assemble(
            vec![
                document("1", 10, 10, 100),
                document("2", 11, 10, 200),
                document("3", 11, 10, 300),
                document("4", 20, 20, 150),
            ],
            999,
            true,
        );
        assert_eq!((summary.nodes, summary.roots, summary.documents), (3, 2, 4));
        let node = |fingerprint| {
            state
                .nodes
                .iter()
                .find(|node| node.fingerprint == fingerprint)
                .copied()
                .expect("node")
        };
        assert_eq!(node(11).root, 10);
        assert_eq!(
            (node(11).documents, node(11).born, node(11).touched),
            (2, 200, 300)
        );
        assert_eq!(state.keys.len(), 4);
        // Arrival follows birth.
        assert!(node(10).arrival < node(20).arrival && node(20).arrival < node(11).arrival);
    }

    #[test]
    fn a_root_without_its_document_comes_back_empty() {
        let (state, summary) = assemble(vec![document("2", 11, 10, 200)], 999, true);
        assert_eq!(summary.roots_without_document, 1);
        let root = state
            .nodes
            .iter()
            .find(|node| node.fingerprint == 10)
            .expect("root");
        assert_eq!((root.root, root.documents), (10, 0));
    }

    #[test]
    fn a_root_stamped_as_a_leaf_is_followed_to_its_class() {
        let (state, _) = assemble(
            vec![
                document("1", 10, 10, 1),
                document("2", 11, 10, 2),
                document("3", 12, 11, 3),
            ],
            999,
            true,
        );
        let node = state
            .nodes
            .iter()
            .find(|node| node.fingerprint == 12)
            .expect("node");
        assert_eq!(node.root, 10);
    }
}
