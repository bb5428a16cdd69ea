//! Snapshots published to the group: a member's snapshot file, in chunks,
//! in the group's snapshot index; and the log truncated behind them.
//!
//! Motivation: without them the chain grows forever and a member that
//! joins reads all of it. A published snapshot bounds both: a joiner loads
//! it and reads only the chain after it, and the records it covers can go.
//!
//! Design: the bytes published are the snapshot file the store wrote
//! (`persist::snapshot`: one format, read back by the same code), cut into
//! chunks of [`CHUNK_BYTES`], each a document `{id}-{chunk}` of
//! `neardup-replica-{group}-snapshot` (base64 in a `binary` field), written
//! through its `-write` alias with `require_alias=true`. The id is
//! `{last_seq}-{writer}`, so two publishers never mix chunks. Once every
//! chunk is in, the *manifest* (`latest`) is moved to it by compare-and-set
//! (`if_seq_no`/`if_primary_term`, only forward: a larger `last_seq`): the
//! manifest names the chain's head the snapshot covers (record, digest),
//! its size and its SHA-256. Only then are older snapshots deleted
//! (`_delete_by_query` on `last_seq` below the previous manifest's: the
//! previous snapshot stays, for a joiner still reading it), and log
//! records below the manifest's record less [`TRUNCATE_MARGIN`]
//! (`_delete_by_query` on `record`; both APIs are documented alike by
//! Elasticsearch 8 and OpenSearch 2/3, and read only refreshed documents,
//! which old records and chunks are).
//!
//! Consequences: the manifest names only a snapshot whose every chunk was
//! acknowledged, and whose effects are all in the chain (the publisher
//! waits for that, `super::publish`); a joiner that finds a chunk gone or
//! the digest wrong starts over from the manifest. A standby more than the
//! margin behind the published head can no longer follow: it rejoins
//! (`super::join`).

use std::io::{Read, Write as _};
use std::path::Path;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::auth::GroupKey;
use super::cluster::{GroupCluster, GroupError, Version, Write};
use super::state::Head;
use crate::upstream::Payload;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// Bytes of the snapshot file per chunk document.
pub const CHUNK_BYTES: usize = 4 << 20;
/// Records kept below the published snapshot's head: a standby that far
/// behind still follows.
pub const TRUNCATE_MARGIN: u64 = 32;
/// The manifest's id.
const LATEST: &str = "latest";

/// What the manifest says of the newest published snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub id: String,
    /// The chain's head it covers (its `last_seq`: the snapshot's).
    pub head: Head,
    pub chunks: u64,
    pub bytes: u64,
    /// SHA-256 of the file, lower-case hex.
    pub sha256: String,
    pub writer: String,
}

impl Manifest {
    /// The manifest's tag: every field a joiner believes.
    fn tag(&self, key: &GroupKey) -> String {
        let numbers: Vec<u8> = [
            self.head.record,
            self.head.last_seq,
            self.chunks,
            self.bytes,
        ]
        .iter()
        .flat_map(|number| number.to_le_bytes())
        .collect();
        key.tag(
            "manifest",
            &[
                self.id.as_bytes(),
                self.head.group_uuid.as_bytes(),
                self.head.digest.as_bytes(),
                self.sha256.as_bytes(),
                self.writer.as_bytes(),
                &numbers,
            ],
        )
    }

    fn to_document(&self, key: &GroupKey) -> Value {
        json!({
            "kind": "manifest", "format": 2, "snapshot": self.id,
            "group_uuid": self.head.group_uuid, "record": self.head.record,
            "digest": self.head.digest, "last_seq": self.head.last_seq,
            "chunks": self.chunks, "bytes": self.bytes, "sha256": self.sha256,
            "writer": self.writer, "written_at_ms": crate::units::now_millis(),
            "auth": self.tag(key),
        })
    }

    /// The manifest of `source`, `None` when a field is missing or its tag
    /// does not verify.
    fn from_document(source: &Value, key: &GroupKey) -> Option<Manifest> {
        let text = |field: &str| source[field].as_str().map(str::to_string);
        let manifest = Manifest {
            id: text("snapshot")?,
            head: Head {
                group_uuid: text("group_uuid")?,
                record: source["record"].as_u64()?,
                digest: text("digest")?,
                last_seq: source["last_seq"].as_u64()?,
            },
            chunks: source["chunks"].as_u64()?,
            bytes: source["bytes"].as_u64()?,
            sha256: text("sha256")?,
            writer: text("writer")?,
        };
        let presented = text("auth")?;
        let expected = manifest.tag(key);
        aws_lc_rs::constant_time::verify_slices_are_equal(
            expected.as_bytes(),
            presented.as_bytes(),
        )
        .ok()?;
        Some(manifest)
    }

    /// The lowest record number the log may still hold: below it, records
    /// are deleted (or being deleted) behind this snapshot, so a record
    /// read there may have been created again by a deposed leader.
    pub fn truncated_below(&self) -> u64 {
        self.head.record.saturating_sub(TRUNCATE_MARGIN)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The manifest and its version; `None` when nothing was published.
///
/// # Errors
///
/// No answer, or refused (a damaged manifest too).
pub async fn latest(cluster: &GroupCluster) -> Result<Option<(Manifest, Version)>, GroupError> {
    let path = format!("/{}/_doc/{LATEST}?realtime=true", cluster.snapshot_index());
    let (status, answer) = cluster.call(Method::GET, &path, Payload::Empty).await?;
    if status == StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(GroupError::Refused(format!(
            "GET {path}: {status} {answer}"
        )));
    }
    let manifest = Manifest::from_document(&answer["_source"], cluster.key()).ok_or_else(|| {
        tracing::error!(
            "the group's snapshot manifest is damaged or not authentic (written without the group's secret): not used"
        );
        GroupError::Refused(format!(
            "GET {path}: not an authentic manifest of this group"
        ))
    })?;
    let version = Version {
        seq_no: answer["_seq_no"].as_u64().unwrap_or(0),
        primary_term: answer["_primary_term"].as_u64().unwrap_or(0),
    };
    Ok(Some((manifest, version)))
}

/// Publishes the snapshot file at `path` (covering `head`) as `writer`;
/// the manifest it replaced, if any, or `None` when a newer one was there.
///
/// # Errors
///
/// The file unreadable, a chunk or the manifest not written.
pub async fn publish(
    cluster: &GroupCluster,
    path: &Path,
    head: Head,
    writer: &str,
) -> Result<Option<Option<Manifest>>, String> {
    let id = format!("{}-{writer}", head.last_seq);
    let index = format!("{}-write", cluster.snapshot_index());
    let mut file =
        std::fs::File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    let (mut chunks, mut bytes) = (0u64, 0u64);
    loop {
        // Read off the async workers: a chunk at a time, never the file.
        let (read, back) = tokio::task::spawn_blocking(move || {
            let mut chunk = Vec::with_capacity(CHUNK_BYTES);
            let read = (&mut file)
                .take(CHUNK_BYTES as u64)
                .read_to_end(&mut chunk)
                .map(|_| chunk);
            (read, file)
        })
        .await
        .map_err(|error| error.to_string())?;
        file = back;
        let chunk = read.map_err(|error| format!("{}: {error}", path.display()))?;
        if chunk.is_empty() {
            break;
        }
        context.update(&chunk);
        bytes += chunk.len() as u64;
        let document = json!({
            "kind": "chunk", "snapshot": id, "chunk": chunks,
            "group_uuid": head.group_uuid, "last_seq": head.last_seq,
            "data": BASE64.encode(&chunk),
        });
        let put = format!("/{index}/_doc/{id}-{chunks}?require_alias=true");
        match cluster.guarded(Method::PUT, &put, &document).await {
            Ok(Write::Done(_)) => {}
            other => return Err(format!("PUT {put}: {other:?}")),
        }
        chunks += 1;
    }
    let manifest = Manifest {
        id,
        head,
        chunks,
        bytes,
        sha256: hex(context.finish().as_ref()),
        writer: writer.to_string(),
    };
    // Only forward: a slower publisher of an older state loses.
    let previous = latest(cluster).await.map_err(|error| error.to_string())?;
    if let Some((found, _)) = &previous
        && found.head.last_seq >= manifest.head.last_seq
    {
        return Ok(None);
    }
    let put = match &previous {
        Some((_, version)) => format!(
            "/{index}/_doc/{LATEST}?if_seq_no={}&if_primary_term={}&require_alias=true",
            version.seq_no, version.primary_term
        ),
        None => format!("/{index}/_create/{LATEST}?require_alias=true"),
    };
    match cluster
        .guarded(Method::PUT, &put, &manifest.to_document(cluster.key()))
        .await
    {
        Ok(Write::Done(_)) => Ok(Some(previous.map(|(found, _)| found))),
        Ok(Write::Conflict) => Ok(None),
        other => Err(format!("PUT {put}: {other:?}")),
    }
}

/// Deletes what the manifest no longer needs: snapshots older than
/// `previous` (kept for a joiner still reading it) and records below the
/// new head less the margin. How many records were deleted.
///
/// # Errors
///
/// No answer, or refused.
pub async fn truncate(
    cluster: &GroupCluster,
    previous: Option<&Manifest>,
    head: &Head,
) -> Result<u64, GroupError> {
    if let Some(previous) = previous {
        let query = json!({"query": {"range": {"last_seq": {"lt": previous.head.last_seq}}}});
        delete_by_query(cluster, &cluster.snapshot_index(), &query).await?;
    }
    // The manifest naming `head` is written: readers below this see it.
    let below = head.record.saturating_sub(TRUNCATE_MARGIN);
    if below <= 1 {
        return Ok(0);
    }
    let query = json!({"query": {"range": {"record": {"lt": below}}}});
    delete_by_query(cluster, &cluster.log_index(), &query).await
}

async fn delete_by_query(
    cluster: &GroupCluster,
    index: &str,
    query: &Value,
) -> Result<u64, GroupError> {
    let path = format!("/{index}/_delete_by_query?conflicts=proceed");
    let (status, answer) = cluster
        .call(Method::POST, &path, Payload::Json(query))
        .await?;
    if !status.is_success() {
        return Err(GroupError::Refused(format!(
            "POST {path}: {status} {answer}"
        )));
    }
    Ok(answer["deleted"].as_u64().unwrap_or(0))
}

/// Test-only: a pause before each chunk of a download, in milliseconds
/// (so a test can stop the leader while a member reads the snapshot).
const DOWNLOAD_PAUSE_VARIABLE: &str = "NEARDUP_TEST_DOWNLOAD_PAUSE_MS";

/// Writes the snapshot `manifest` names to `path` (through a temporary
/// file beside it), checking its size and digest.
///
/// # Errors
///
/// A chunk missing (a newer snapshot replaced it: start over from the
/// manifest), damaged, or the file not written.
pub async fn download(
    cluster: &GroupCluster,
    manifest: &Manifest,
    path: &Path,
) -> Result<(), String> {
    let temporary = path.with_extension("download");
    let downloaded = download_to(cluster, manifest, &temporary).await;
    if downloaded.is_err() {
        // Nothing half-read stays in the state directory.
        let _ = std::fs::remove_file(&temporary);
    }
    downloaded?;
    std::fs::rename(&temporary, path).map_err(|error| format!("{}: {error}", path.display()))
}

async fn download_to(
    cluster: &GroupCluster,
    manifest: &Manifest,
    temporary: &Path,
) -> Result<(), String> {
    let temporary = temporary.to_path_buf();
    let mut out = std::fs::File::create(&temporary)
        .map_err(|error| format!("{}: {error}", temporary.display()))?;
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    let mut bytes = 0u64;
    let pause = super::test_pause(DOWNLOAD_PAUSE_VARIABLE);
    for chunk in 0..manifest.chunks {
        if let Some(pause) = pause {
            tracing::warn!(
                ?pause,
                chunk,
                "{DOWNLOAD_PAUSE_VARIABLE}: pausing the download (tests only)"
            );
            tokio::time::sleep(pause).await;
        }
        let get = format!(
            "/{}/_doc/{}-{chunk}?realtime=true",
            cluster.snapshot_index(),
            manifest.id
        );
        let (status, answer) = cluster
            .call(Method::GET, &get, Payload::Empty)
            .await
            .map_err(|error| error.to_string())?;
        if !status.is_success() || answer["found"] != true {
            return Err(format!("GET {get}: {status}: the chunk is gone"));
        }
        let data = BASE64
            .decode(answer["_source"]["data"].as_str().unwrap_or_default())
            .map_err(|error| format!("snapshot chunk {chunk} is not base64: {error}"))?;
        context.update(&data);
        bytes += data.len() as u64;
        out = tokio::task::spawn_blocking(move || out.write_all(&data).map(|()| out))
            .await
            .map_err(|error| error.to_string())?
            .map_err(|error| format!("{}: {error}", temporary.display()))?;
    }
    if bytes != manifest.bytes || hex(context.finish().as_ref()) != manifest.sha256 {
        return Err(format!(
            "snapshot {} does not match its manifest (size or SHA-256)",
            manifest.id
        ));
    }
    out.sync_all()
        .map_err(|error| format!("{}: {error}", temporary.display()))
}
