//! The group's own requests to the cluster, and their answers typed by
//! what the caller does next.
//!
//! Motivation: every decision two members could race on (bootstrap,
//! renewal, takeover, the next record) is one guarded write decided at a
//! primary shard; the caller must tell "someone else won" (409) from "the
//! index is gone" from "no answer, try again" without reading statuses.
//!
//! Design: two indices per group, created by the sidecar with an alias
//! each, every write through the alias with `require_alias=true` so that a
//! deleted index is never silently re-created empty (documented for
//! `require_alias` since Elasticsearch 7.10, hence OpenSearch):
//! `neardup-replica-{group}-control` (alias `…-control-write`) holds the
//! control document `control`; `neardup-replica-{group}-log` (alias
//! `…-log-append`) holds record *n* under `_id` *n*. Writes of the control
//! document carry `if_seq_no`/`if_primary_term` (a 409 when the document
//! changed since, or is missing); records are `_create`d (a 409 when the id
//! exists). Reads are realtime GET and `_mget` (documented as realtime by
//! default: a document is returned once indexed, refreshed or not).
//! Answers: [`Write::Done`] (with the document's new version),
//! [`Write::Conflict`], [`Write::Gone`] (404: the alias or index is gone),
//! or [`GroupError`] (no answer, 429/5xx: transient; anything else:
//! refused).
//!
//! Consequences: the group's indices are hidden, have one shard, a `1s`
//! refresh interval set explicitly and `_none` pipelines; the replica count
//! is the cluster's default. Deleting them by hand stops the group (see
//! docs/standby.md, *Failure cases*).

use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

use super::auth::GroupKey;
use crate::upstream::{Payload, Upstream, UpstreamError};

/// What a member reads as the holder of a control document whose `auth`
/// does not verify (written without the group's secret): nobody it may
/// forward to, and not itself.
pub const UNAUTHENTICATED_HOLDER: &str = "(unauthenticated)";

/// A version of a document, as the cluster numbers its changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub seq_no: u64,
    pub primary_term: u64,
}

/// The answer to a guarded write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Done(Version),
    /// Someone else's write came first (409).
    Conflict,
    /// The alias or index is gone (404).
    Gone,
}

/// A request of the group that did not get a usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GroupError {
    /// No answer, or 429 / 5xx: worth trying again.
    #[error("{0}")]
    Transient(String),
    /// Any other answer: a bug, or a cluster that refuses the group's
    /// requests (privileges, mappings).
    #[error("{0}")]
    Refused(String),
}

/// The group's indices on the cluster.
#[derive(Debug, Clone)]
pub struct GroupCluster {
    upstream: Upstream,
    /// `neardup-replica-{group}`.
    prefix: String,
    /// Bound on each record request and index creation (the upstream's
    /// own timeout is per byte): the lease.
    timeout: Duration,
    /// Bound on each request about the control document: a third of the
    /// lease, so that a renewal stuck on a slow answer is retried while
    /// the lease still holds.
    control_timeout: Duration,
    /// The group's key: the lease, records and manifest are tagged with it.
    key: GroupKey,
}

impl GroupCluster {
    /// The group's indices on the cluster `upstream`; `lease` bounds each
    /// request (a third of it for the control document).
    pub fn new(upstream: Upstream, group: &str, lease: Duration, key: GroupKey) -> GroupCluster {
        GroupCluster {
            upstream,
            prefix: format!("neardup-replica-{group}"),
            timeout: lease,
            control_timeout: lease / 3,
            key,
        }
    }

    /// The group's key.
    pub fn key(&self) -> &GroupKey {
        &self.key
    }

    /// The prefix of every index of the group (`neardup-replica-{group}`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn control_index(&self) -> String {
        format!("{}-control", self.prefix)
    }

    pub fn log_index(&self) -> String {
        format!("{}-log", self.prefix)
    }

    /// Where the leader publishes snapshots (`super::snapshots`).
    pub fn snapshot_index(&self) -> String {
        format!("{}-snapshot", self.prefix)
    }

    /// One request of the group, bounded in time; 429 and 5xx are
    /// [`GroupError::Transient`].
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        payload: Payload<'_>,
    ) -> Result<(StatusCode, Value), GroupError> {
        let timeout = if path.starts_with(&format!("/{}", self.control_index())) {
            self.control_timeout
        } else {
            self.timeout
        };
        let headers = HeaderMap::new();
        let sent = self.upstream.call(method.clone(), path, &headers, payload);
        let answer = match tokio::time::timeout(timeout, sent).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => return Err(GroupError::Transient(no_answer(&method, path, &error))),
            Err(_) => {
                return Err(GroupError::Transient(format!(
                    "{method} {path}: no answer within {timeout:?}"
                )));
            }
        };
        let status = answer.status;
        let body = answer.json_or_text();
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            return Err(GroupError::Transient(format!(
                "{method} {path}: {status} {body}"
            )));
        }
        Ok((status, body))
    }

    /// Creates both indices with their aliases (an index that exists is
    /// fine).
    ///
    /// # Errors
    ///
    /// The cluster refuses or does not answer.
    pub async fn ensure_indices(&self) -> Result<(), GroupError> {
        let control = json!({
            "type": {"type": "keyword"}, "holder": {"type": "keyword"},
            "epoch": {"type": "long"}, "renewals": {"type": "long"},
            "group_uuid": {"type": "keyword"}, "renewed_at_ms": {"type": "date", "format": "epoch_millis"},
        });
        let log = json!({
            "format": {"type": "integer"}, "group_uuid": {"type": "keyword"},
            "record": {"type": "long"}, "epoch": {"type": "long"},
            "writer": {"type": "keyword"}, "kind": {"type": "keyword"},
            "first_seq": {"type": "long"}, "last_seq": {"type": "long"},
            "prev_digest": {"type": "keyword", "index": false},
            "digest": {"type": "keyword", "index": false},
            "encoding": {"type": "keyword", "index": false},
            "effects": {"type": "binary"},
            "bytes": {"type": "long", "index": false},
            "written_at_ms": {"type": "date", "format": "epoch_millis"},
        });
        let snapshot = json!({
            "kind": {"type": "keyword"}, "snapshot": {"type": "keyword"},
            "group_uuid": {"type": "keyword"}, "last_seq": {"type": "long"},
            "record": {"type": "long"}, "chunk": {"type": "long"},
            "data": {"type": "binary"},
        });
        for (index, alias, properties) in [
            (
                self.control_index(),
                format!("{}-write", self.control_index()),
                control,
            ),
            (
                self.log_index(),
                format!("{}-append", self.log_index()),
                log,
            ),
            (
                self.snapshot_index(),
                format!("{}-write", self.snapshot_index()),
                snapshot,
            ),
        ] {
            let body = json!({
                "settings": {"index": {
                    "number_of_shards": 1, "hidden": true, "refresh_interval": "1s",
                    "default_pipeline": "_none", "final_pipeline": "_none",
                }},
                "mappings": {"dynamic": false, "properties": properties},
                "aliases": {alias: {"is_write_index": true}},
            });
            let (status, answer) = self
                .call(Method::PUT, &format!("/{index}"), Payload::Json(&body))
                .await?;
            let exists = answer["error"]["type"] == "resource_already_exists_exception";
            if !status.is_success() && !exists {
                return Err(GroupError::Refused(format!(
                    "creating {index}: {status} {answer}"
                )));
            }
        }
        Ok(())
    }

    /// The control document and its version (realtime GET); `None` when
    /// there is none yet. A document whose `auth` does not verify is
    /// logged and returned with its holder replaced by
    /// [`UNAUTHENTICATED_HOLDER`] and no URL: its version still counts
    /// (a takeover replaces it after a lease), its leader is believed by
    /// no one.
    ///
    /// # Errors
    ///
    /// No answer, or the control index missing (refused).
    pub async fn control(&self) -> Result<Option<(Value, Version)>, GroupError> {
        let path = format!("/{}/_doc/control?realtime=true", self.control_index());
        let (status, answer) = self.call(Method::GET, &path, Payload::Empty).await?;
        if status == StatusCode::NOT_FOUND && answer["found"] == false {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(GroupError::Refused(format!(
                "GET {path}: {status} {answer}"
            )));
        }
        let version = version_of(&answer)
            .ok_or_else(|| GroupError::Refused(format!("GET {path}: no _seq_no: {answer}")))?;
        let mut document = answer["_source"].clone();
        if !self.key.control_is_authentic(&document) {
            tracing::error!(
                index = self.control_index(),
                holder = %document["holder"],
                "the group's control document is not authentic (written without the group's secret): its holder and URL are ignored"
            );
            document["holder"] = json!(UNAUTHENTICATED_HOLDER);
            document["holder_url"] = Value::Null;
        }
        Ok(Some((document, version)))
    }

    /// `document` with its `auth` tag.
    fn tagged(&self, document: &Value) -> Value {
        let mut tagged = document.clone();
        tagged["auth"] = json!(self.key.control_tag(document));
        tagged
    }

    /// Creates the control document (bootstrap): one member wins.
    ///
    /// # Errors
    ///
    /// No answer, or refused.
    pub async fn create_control(&self, document: &Value) -> Result<Write, GroupError> {
        let path = format!(
            "/{}-write/_create/control?require_alias=true",
            self.control_index()
        );
        self.guarded(Method::PUT, &path, &self.tagged(document))
            .await
    }

    /// Replaces the control document if it is still at `version`.
    ///
    /// # Errors
    ///
    /// No answer, or refused.
    pub async fn replace_control(
        &self,
        document: &Value,
        version: Version,
    ) -> Result<Write, GroupError> {
        let path = format!(
            "/{}-write/_doc/control?if_seq_no={}&if_primary_term={}&require_alias=true",
            self.control_index(),
            version.seq_no,
            version.primary_term
        );
        self.guarded(Method::PUT, &path, &self.tagged(document))
            .await
    }

    /// Creates record `number` (the fence: one create of a number wins).
    ///
    /// A record already at that number that is not authentic (written
    /// without the group's secret: a forgery, nothing any member wrote) is
    /// logged and replaced, guarded by its version, so that whoever can
    /// write the log index cannot stop the chain by taking the next number;
    /// of two members replacing one forgery, one wins and the other sees a
    /// conflict, as for any create. An authentic record there is a
    /// [`Write::Conflict`].
    ///
    /// # Errors
    ///
    /// No answer, or refused.
    pub async fn create_record(&self, number: u64, document: &Value) -> Result<Write, GroupError> {
        let path = format!(
            "/{}-append/_create/{number}?require_alias=true",
            self.log_index()
        );
        match self.guarded(Method::PUT, &path, document).await? {
            Write::Conflict => {}
            other => return Ok(other),
        }
        let get = format!("/{}/_doc/{number}?realtime=true", self.log_index());
        let (status, found) = self.call(Method::GET, &get, Payload::Empty).await?;
        let group_uuid = document["group_uuid"].as_str().unwrap_or_default();
        let authentic =
            super::record::Record::from_document(&found["_source"], group_uuid, &self.key).is_ok();
        let Some(version) = version_of(&found).filter(|_| status.is_success() && !authentic) else {
            return Ok(Write::Conflict);
        };
        tracing::error!(
            record = number,
            writer = %found["_source"]["writer"],
            "a record of the group's log is not authentic (written without the group's secret): refused, and replaced"
        );
        let replace = format!(
            "/{}-append/_doc/{number}?if_seq_no={}&if_primary_term={}&require_alias=true",
            self.log_index(),
            version.seq_no,
            version.primary_term
        );
        self.guarded(Method::PUT, &replace, document).await
    }

    pub(super) async fn guarded(
        &self,
        method: Method,
        path: &str,
        document: &Value,
    ) -> Result<Write, GroupError> {
        let (status, answer) = self
            .call(method.clone(), path, Payload::Json(document))
            .await?;
        if status.is_success() {
            let version = version_of(&answer).ok_or_else(|| {
                GroupError::Refused(format!("{method} {path}: no _seq_no: {answer}"))
            })?;
            return Ok(Write::Done(version));
        }
        match status {
            StatusCode::CONFLICT => Ok(Write::Conflict),
            StatusCode::NOT_FOUND => Ok(Write::Gone),
            _ => Err(GroupError::Refused(format!(
                "{method} {path}: {status} {answer}"
            ))),
        }
    }

    /// Records `from..from + count` by realtime `_mget`: the `_source` of
    /// each, `None` for those not (yet) written.
    ///
    /// # Errors
    ///
    /// No answer, or refused.
    pub async fn records(&self, from: u64, count: u64) -> Result<Vec<Option<Value>>, GroupError> {
        let index = self.log_index();
        let ids: Vec<String> = (from..from + count).map(|n| n.to_string()).collect();
        let body = json!({ "ids": ids });
        let path = format!("/{index}/_mget?realtime=true");
        let (status, answer) = self.call(Method::POST, &path, Payload::Json(&body)).await?;
        if !status.is_success() {
            return Err(GroupError::Refused(format!(
                "POST {path}: {status} {answer}"
            )));
        }
        let docs = answer["docs"].as_array().cloned().unwrap_or_default();
        if docs.len() != ids.len() {
            return Err(GroupError::Refused(format!(
                "POST {path}: {} documents for {} ids",
                docs.len(),
                ids.len()
            )));
        }
        Ok(docs
            .into_iter()
            .map(|doc| (doc["found"] == true).then(|| doc["_source"].clone()))
            .collect())
    }

    /// Record `number` by realtime GET, `None` when not written.
    ///
    /// # Errors
    ///
    /// No answer, or refused.
    pub async fn record(&self, number: u64) -> Result<Option<Value>, GroupError> {
        Ok(self.records(number, 1).await?.pop().flatten())
    }
}

fn version_of(answer: &Value) -> Option<Version> {
    Some(Version {
        seq_no: answer["_seq_no"].as_u64()?,
        primary_term: answer["_primary_term"].as_u64()?,
    })
}

fn no_answer(method: &Method, path: &str, error: &UpstreamError) -> String {
    format!("{method} {path}: {error}")
}
