//! The backfill's bulk-update writer: a page's stamps as `update` actions
//! (a partial `doc` with the two fields) guarded by the `if_seq_no` /
//! `if_primary_term` the scan read, so a document a client rewrote
//! meanwhile is left alone (409). Items the cluster pushed back (429, 5xx)
//! are sent again; a 409 on a document that already holds exactly these
//! stamps is this job's own earlier attempt whose answer was lost.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::checkpoint::Counts;
use super::decide::{Entry, Outcome, Planned, Prepared, settle, stamp_of};
use super::settings::{JobConfig, LiveForest};
use crate::fingerprint::values_at;
use crate::units::Millis;
use crate::units::format_fingerprint;
use crate::upstream::{Payload, Upstream};

/// Sends of one page's updates before the items still refused with 429 or
/// 5xx count as errors.
const MAX_SEND_ATTEMPTS: u32 = 5;

/// A page whose stamps were written and settled.
pub(super) struct PageDone {
    pub(super) counts: Counts,
    /// Sort key and time of its last document.
    pub(super) last: Option<(Vec<Value>, Millis)>,
}

/// Writes a prepared page's stamps and settles its live placements.
pub(super) async fn stamp_page(
    live: Arc<dyn LiveForest>,
    config: JobConfig,
    prepared: Prepared,
) -> anyhow::Result<PageDone> {
    let Prepared {
        entries,
        planned,
        mut counts,
    } = prepared;
    let outcomes = match send_stamps(live.upstream(), &config, &entries, &planned).await {
        Ok(outcomes) => outcomes,
        Err(error) => {
            settle(&live, &entries, &planned, None).await;
            return Err(error);
        }
    };
    for (planned, outcome) in planned.iter().zip(&outcomes) {
        match outcome {
            Outcome::Stamped => {
                counts.stamped += 1;
                if planned.own_class.is_some() {
                    counts.stamped_not_fingerprinted += 1;
                } else if !planned.live {
                    counts.stamped_history += 1;
                }
            }
            Outcome::Conflict => counts.skipped_conflict += 1,
            Outcome::Error => counts.skipped_error += 1,
        }
    }
    settle(&live, &entries, &planned, Some(&outcomes)).await;
    Ok(PageDone {
        counts,
        last: entries.last().map(|entry| (entry.key.clone(), entry.time)),
    })
}

/// Writes the stamps with bulk `update` guarded by `if_seq_no`, retrying
/// items the cluster pushed back (429, 5xx). One outcome per planned stamp.
async fn send_stamps(
    upstream: &Upstream,
    config: &JobConfig,
    entries: &[Entry],
    planned: &[Planned],
) -> anyhow::Result<Vec<Outcome>> {
    let mut outcomes: Vec<Option<Outcome>> = planned.iter().map(|_| None).collect();
    let mut waiting: Vec<usize> = (0..planned.len()).collect();
    for attempt in 1..=MAX_SEND_ATTEMPTS {
        if waiting.is_empty() {
            break;
        }
        let mut body = String::new();
        for &position in &waiting {
            let stamp = &planned[position];
            let entry = &entries[stamp.entry];
            body.push_str(&update_action(entry).to_string());
            body.push('\n');
            let mut doc = Map::new();
            if let Some(own_class) = &stamp.own_class {
                doc.insert(config.root_field.clone(), Value::from(own_class.as_str()));
            } else {
                doc.insert(
                    config.root_field.clone(),
                    Value::from(format_fingerprint(stamp.root)),
                );
                doc.insert(
                    config.simhash_field.clone(),
                    Value::from(format_fingerprint(stamp.fingerprint)),
                );
            }
            body.push_str(&json!({ "doc": doc }).to_string());
            body.push('\n');
        }
        let answer = upstream
            .call(
                Method::POST,
                "/_bulk",
                &config.headers,
                Payload::NdJson(&body),
            )
            .await;
        // One item per update, in order, or the answer is not read at all.
        let items = match &answer {
            Ok(answer) if answer.status == StatusCode::OK => {
                match answer
                    .json()
                    .as_mut()
                    .and_then(|value| value.get_mut("items"))
                {
                    Some(Value::Array(items)) if items.len() == waiting.len() => {
                        Some(std::mem::take(items))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(items) = items else {
            if attempt == MAX_SEND_ATTEMPTS {
                let reason = match answer {
                    Ok(answer) => format!("status {}: {}", answer.status, answer.json_or_text()),
                    Err(error) => format!("POST /_bulk: {error}"),
                };
                anyhow::bail!("the cluster did not take the stamps: {reason}");
            }
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            continue;
        };
        let mut retry = Vec::new();
        for (&position, item) in waiting.iter().zip(&items) {
            let status = item
                .get("update")
                .and_then(|inner| inner.get("status"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            outcomes[position] = match status {
                200..=299 => Some(Outcome::Stamped),
                409 => Some(Outcome::Conflict),
                429 | 500.. if attempt < MAX_SEND_ATTEMPTS => {
                    retry.push(position);
                    None
                }
                _ => {
                    tracing::warn!(%item, "the cluster refused a backfill stamp");
                    Some(Outcome::Error)
                }
            };
        }
        waiting = retry;
        if !waiting.is_empty() {
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
        }
    }
    let mut outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or(Outcome::Error))
        .collect();
    confirm_conflicts(upstream, config, entries, planned, &mut outcomes).await;
    Ok(outcomes)
}

/// A 409 means the document changed since it was read: a client rewrote
/// it, or an earlier attempt of this very update went through although its
/// answer was lost (a timeout, then the retry). Reads the conflicting
/// documents back: one that is the source read plus exactly the planned
/// stamps was stamped by this job.
async fn confirm_conflicts(
    upstream: &Upstream,
    config: &JobConfig,
    entries: &[Entry],
    planned: &[Planned],
    outcomes: &mut [Outcome],
) {
    let conflicted: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, outcome)| matches!(outcome, Outcome::Conflict))
        .map(|(position, _)| position)
        .collect();
    if conflicted.is_empty() {
        return;
    }
    let documents: Vec<Value> = conflicted
        .iter()
        .map(|&position| {
            let entry = &entries[planned[position].entry];
            let mut document = json!({"_index": entry.index, "_id": entry.id});
            if let Some(routing) = &entry.routing {
                document["routing"] = Value::from(routing.as_str());
            }
            document
        })
        .collect();
    let body = json!({ "docs": documents });
    let Ok(answer) = upstream
        .call(
            Method::POST,
            "/_mget",
            &config.headers,
            Payload::Json(&body),
        )
        .await
    else {
        return;
    };
    if !answer.status.is_success() {
        return;
    }
    let Some(answer) = answer.json() else {
        return;
    };
    let Some(found) = answer
        .get("docs")
        .and_then(Value::as_array)
        .filter(|found| found.len() == conflicted.len())
    else {
        return;
    };
    for (&position, document) in conflicted.iter().zip(found) {
        let source = &document["_source"];
        let stamp = &planned[position];
        let read = &entries[stamp.entry].source;
        let stamped_ours = match &stamp.own_class {
            Some(own_class) => values_at(source, &config.root_field)
                .into_iter()
                .any(|value| value.as_str() == Some(own_class.as_str())),
            None => {
                stamp_of(source, &config.simhash_field) == Some(stamp.fingerprint)
                    && stamp_of(source, &config.root_field) == Some(stamp.root)
            }
        };
        let ours = stamped_ours && without_stamps(source, config) == without_stamps(read, config);
        if ours {
            outcomes[position] = Outcome::Stamped;
        }
    }
}

/// A source without the two stamped (top-level) fields.
fn without_stamps(source: &Value, config: &JobConfig) -> Value {
    let mut source = source.clone();
    if let Value::Object(object) = &mut source {
        object.remove(&config.root_field);
        object.remove(&config.simhash_field);
    }
    source
}

fn update_action(entry: &Entry) -> Value {
    let mut meta = Map::new();
    meta.insert("_index".into(), Value::from(entry.index.as_str()));
    meta.insert("_id".into(), Value::from(entry.id.as_str()));
    if let (Some(seq_no), Some(primary_term)) = (entry.seq_no, entry.primary_term) {
        meta.insert("if_seq_no".into(), Value::from(seq_no));
        meta.insert("if_primary_term".into(), Value::from(primary_term));
    }
    if let Some(routing) = &entry.routing {
        meta.insert("routing".into(), Value::from(routing.as_str()));
    }
    json!({ "update": meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_are_guarded_by_the_sequence_number_read() {
        let entry = Entry {
            key: vec![],
            index: "news".into(),
            id: "7".into(),
            seq_no: Some(12),
            primary_term: Some(3),
            routing: Some("r".into()),
            time: 0,
            in_history: false,
            stamps: None,
            alone: false,
            warm: false,
            source: Value::Null,
        };
        assert_eq!(
            update_action(&entry),
            json!({"update": {"_index": "news", "_id": "7", "if_seq_no": 12, "if_primary_term": 3, "routing": "r"}})
        );
    }
}
