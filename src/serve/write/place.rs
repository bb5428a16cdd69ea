//! Analysis of a write's sources (on the blocking pool, in parallel
//! slices) and their placement (decided in parallel under the shared lock,
//! applied in request order under the exclusive one, on the blocking pool),
//! with the stamps written into each source; and the placements taken back
//! when the documents never reached the cluster.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::missing_fields::MissingFields;
use crate::bulk::stamping::{StampTarget, class_of_its_own};
use crate::bulk::{self, ActionKind, BulkItem};
use crate::engine::{Analysis, Analyzer, EXPIRY_BUDGET_PER_DOCUMENT};
use crate::ledger::{Ledger, SentTo};
use crate::serve::errors::SidecarError;
use crate::serve::metrics::Metrics;
use crate::serve::sidecar::Sidecar;
use crate::units::{Fingerprint, format_fingerprint, now_millis};

/// Below this many sources a request is analysed in one piece.
const MIN_SOURCES_PER_SLICE: usize = 16;

/// One source stamped: its new bytes and where it was placed.
pub(super) struct Stamped {
    pub target: StampTarget,
    /// Its own fingerprint, placed in the forest; `None`: it had no text to
    /// fingerprint and got a class of its own, placed nowhere
    /// ([`crate::bulk::stamping::class_of_its_own`]).
    pub fingerprint: Option<Fingerprint>,
    /// The class stamped (`cluster_root`).
    pub root: String,
    pub bytes: Vec<u8>,
}

impl Stamped {
    /// Where it was placed, if it was (a class of its own is not).
    pub fn placed(&self) -> Option<(StampTarget, Fingerprint)> {
        Some((self.target, self.fingerprint?))
    }
}

/// One source to stamp, analysed.
pub(super) struct Analysed {
    target: StampTarget,
    /// The parsed source line (for an update, the whole update body).
    source: Map<String, Value>,
    /// The source line as sent.
    original: Bytes,
    /// `None`: no text in any fingerprinted field (a class of its own).
    analysis: Option<Analysis>,
    /// Where its document goes (what a read-back asks for if the answer
    /// never comes, even after a crash): the index as named and the id.
    sent_to: Option<SentTo>,
}

impl Analysed {
    /// The same, sent to `index` under `id` (when the request gives one).
    pub(super) fn sent_to(mut self, index: &str, id: Option<&str>) -> Self {
        self.sent_to = Some(SentTo {
            index: index.to_string(),
            id: id.map(str::to_string),
        });
        self
    }
}

/// Analyses every stampable source of a bulk body, in parallel slices on
/// the blocking pool.
/// `merged` holds, per item, the document a partial update makes (the
/// stored one merged with its `doc`, [`super::edits`]): that is what such
/// an item places.
pub(super) async fn analyse_items(
    sidecar: &Arc<Sidecar>,
    body: &Bytes,
    items: &Arc<Vec<BulkItem>>,
    path_index: Option<&str>,
    merged: Vec<Option<Value>>,
) -> Result<Vec<Option<Analysed>>, SidecarError> {
    let merged = Arc::new(merged);
    let workers = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let slice_len = items.len().div_ceil(workers).max(MIN_SOURCES_PER_SLICE);
    let mut handles = Vec::new();
    for start in (0..items.len()).step_by(slice_len) {
        let end = (start + slice_len).min(items.len());
        let sidecar = sidecar.clone();
        let body = body.clone();
        let items = items.clone();
        let path_index = path_index.map(str::to_string);
        let merged = merged.clone();
        handles.push(tokio::task::spawn_blocking(move || {
            items[start..end]
                .iter()
                .zip(&merged[start..end])
                .map(|(item, merged)| {
                    let source = body.slice(item.source.clone()?);
                    let index = item.index.as_deref().or(path_index.as_deref());
                    let analyzer = sidecar.analyzers.for_index(index);
                    let analysed = match merged {
                        Some(merged) => analyse_merged(analyzer, source, merged),
                        None => {
                            let (analysed, missing) = analyse(analyzer, item.kind, source);
                            if let Some(missing) = missing {
                                sidecar
                                    .missing_fields
                                    .note(&sidecar.metrics, index, &missing);
                            }
                            analysed
                        }
                    };
                    match index {
                        Some(index) => {
                            analysed.map(|analysed| analysed.sent_to(index, item.id.as_deref()))
                        }
                        None => analysed,
                    }
                })
                .collect::<Vec<_>>()
        }));
    }
    let mut analysed = Vec::with_capacity(items.len());
    for handle in handles {
        analysed.extend(handle.await.map_err(analysis_failed)?);
    }
    Ok(analysed)
}

/// Analyses the source of one single-document request on the blocking pool.
pub(super) async fn analyse_one(
    sidecar: &Sidecar,
    index: &str,
    kind: ActionKind,
    source: Bytes,
) -> Result<Option<Analysed>, SidecarError> {
    let analyzer = sidecar.analyzers.for_index(Some(index)).clone();
    let (analysed, missing) = tokio::task::spawn_blocking(move || analyse(&analyzer, kind, source))
        .await
        .map_err(analysis_failed)?;
    if let Some(missing) = missing {
        sidecar
            .missing_fields
            .note(&sidecar.metrics, Some(index), &missing);
    }
    Ok(analysed)
}

/// [`analyse_merged`] for a single `_update` request, on the blocking pool.
pub(super) async fn analyse_merged_one(
    sidecar: &Sidecar,
    index: &str,
    body: Bytes,
    merged: Value,
) -> Result<Option<Analysed>, SidecarError> {
    let analyzer = sidecar.analyzers.for_index(Some(index)).clone();
    tokio::task::spawn_blocking(move || analyse_merged(&analyzer, body, &merged))
        .await
        .map_err(analysis_failed)
}

fn analysis_failed(error: tokio::task::JoinError) -> SidecarError {
    tracing::error!(%error, "analysis failed");
    SidecarError::Internal(
        "the sidecar failed to analyse the request; nothing was sent to the cluster".into(),
    )
}

/// The analysis of a source that gets stamped ([`StampTarget::of`]);
/// `None` for sources that are not stamped. One with no text in any
/// fingerprinted field has no analysis (it gets a class of its own).
/// Beside it, the fingerprinted fields a stamped document lacks.
fn analyse(
    analyzer: &Analyzer,
    kind: ActionKind,
    original: Bytes,
) -> (Option<Analysed>, Option<MissingFields>) {
    let Some(source) = bulk::parse_source(&original) else {
        return (None, None);
    };
    let Some(target) = StampTarget::of(kind, &source) else {
        return (None, None);
    };
    let source = Value::Object(source);
    let Some(document) = target.document(&source) else {
        return (None, None);
    };
    let (analysis, gaps) = analyzer.analyze_document_noting_gaps(document);
    let missing = MissingFields::of(gaps, document, analysis.is_none());
    if analysis.is_none() && !document.is_object() {
        return (None, missing);
    }
    let Value::Object(source) = source else {
        return (None, missing);
    };
    let analysed = Analysed {
        target,
        source,
        original,
        analysis,
        sent_to: None,
    };
    (Some(analysed), missing)
}

/// The analysis of an update body (`original`) whose stamps go into its
/// `doc`, placed as `document` (the stored document merged with the
/// `doc`); `None` when it holds no text.
pub(super) fn analyse_merged(
    analyzer: &Analyzer,
    original: Bytes,
    document: &Value,
) -> Option<Analysed> {
    let source = bulk::parse_source(&original)?;
    let analysis = Some(analyzer.analyze_document(document)?);
    Some(Analysed {
        target: StampTarget::MergedDoc,
        source,
        original,
        analysis,
        sent_to: None,
    })
}

/// Places the analysed sources and writes the stamps, on the blocking pool
/// (the async workers never wait for placement). Returns them and the log
/// position to persist before forwarding.
pub(super) async fn place_and_stamp(
    sidecar: &Arc<Sidecar>,
    analysed: Vec<Option<Analysed>>,
) -> Result<(Vec<Option<Stamped>>, u64), SidecarError> {
    let placing = sidecar.clone();
    tokio::task::spawn_blocking(move || place_and_stamp_now(&placing, analysed))
        .await
        .map_err(|error| {
            tracing::error!(%error, "placement failed");
            SidecarError::Internal(
                "the sidecar failed to place the request; nothing was sent to the cluster".into(),
            )
        })
}

/// Decides every source's place under the shared lock, on the machine's
/// cores, then applies the decisions in request order under the exclusive
/// lock, checking each against what changed meanwhile
/// ([`crate::engine::batch`]): the answers of placing them one by one.
fn place_and_stamp_now(
    sidecar: &Sidecar,
    analysed: Vec<Option<Analysed>>,
) -> (Vec<Option<Stamped>>, u64) {
    let now = now_millis();
    let count = analysed
        .iter()
        .flatten()
        .filter(|analysed| analysed.analysis.is_some())
        .count();
    let (sources, analyses): (Vec<_>, Vec<_>) = analysed
        .into_iter()
        .map(|entry| match entry {
            Some(analysed) => (
                Some((
                    analysed.target,
                    analysed.source,
                    analysed.original,
                    analysed.sent_to,
                )),
                analysed.analysis,
            ),
            None => (None, None),
        })
        .unzip();
    let mut batch = sidecar
        .ledger
        .read()
        .plan_batch(analyses, placement_threads());
    let (placed, seq) = sidecar.ledger.write(|ledger| {
        if count > 0 {
            let (removed, _) = ledger.expire(now, EXPIRY_BUDGET_PER_DOCUMENT * count);
            Metrics::add(&sidecar.metrics.expired_nodes, removed as u64);
        }
        sources
            .into_iter()
            .map(|source| {
                let placement = ledger.place_next(&mut batch, now);
                let (target, source, original, sent_to) = source?;
                if let (Some(placement), Some(sent_to)) = (&placement, sent_to) {
                    ledger.sending(placement.fingerprint, sent_to);
                }
                Some((target, source, original, placement))
            })
            .collect::<Vec<_>>()
    });
    let stamped = placed
        .into_iter()
        .map(|entry| {
            let (target, source, original, placement) = entry?;
            let Some(placement) = placement else {
                // No text to fingerprint: a class of its own, no simhash.
                let root = class_of_its_own();
                let stamps = [(sidecar.root_field.as_str(), root.as_str())];
                Metrics::add(&sidecar.metrics.not_fingerprinted_documents, 1);
                return Some(Stamped {
                    target,
                    fingerprint: None,
                    bytes: target.stamp(source, &original, &stamps),
                    root,
                });
            };
            let root = format_fingerprint(placement.root);
            let own = format_fingerprint(placement.fingerprint);
            let stamps = [
                (sidecar.root_field.as_str(), root.as_str()),
                (sidecar.simhash_field.as_str(), own.as_str()),
            ];
            Some(Stamped {
                target,
                fingerprint: Some(placement.fingerprint),
                bytes: target.stamp(source, &original, &stamps),
                root,
            })
        })
        .collect();
    (stamped, seq)
}

/// Threads that decide a request's placements: the machine's cores.
fn placement_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Takes back every stamped document: none of them reached the cluster.
pub(super) fn take_back(ledger: &mut Ledger, stamped: &[Option<Stamped>]) {
    for fingerprint in stamped
        .iter()
        .flatten()
        .filter_map(|stamp| stamp.fingerprint)
    {
        ledger.not_stored(fingerprint);
    }
}
