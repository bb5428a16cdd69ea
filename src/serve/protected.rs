//! The replica groups' indices are the sidecar's own: no client request
//! reaches them through the sidecar.
//!
//! Motivation: a replica group keeps its lease, its log and its snapshots
//! in indices of the cluster (`neardup-replica-{group}-…`, see
//! [`crate::replica::cluster`]). Pass-through would forward a client's
//! `DELETE /neardup-replica-news-control` (the leader is deposed), a
//! `_create` of the next record (the leader is fenced) or records of its
//! own, and with `--upstream-auth aws-sigv4`, a client certificate or
//! credentials in `--upstream` those requests carry the sidecar's identity,
//! which may do more than the client's. Every sidecar refuses them, in a
//! group or not: one sidecar's identity is often another member's.
//!
//! Design: a request is refused (403, `security_exception`, as the
//! cluster's security plugin answers) when an index expression it carries
//! reaches a name starting with `neardup-replica-`. Expressions are read
//! where the cluster reads them: the path's first segment (and the index
//! positions of `_cat`, `_cluster`, `_alias` … paths: every segment of a
//! path that starts with `_`), alias names after `_alias`/`_aliases`, the
//! `_index` of `_bulk` items ([`refuse_bulk_items`]), `_mget` and
//! `_mtermvectors` docs, `_msearch` headers, `_reindex` source and dest,
//! `_aliases` actions, a backfill's index ([`refuse_index_expression`]);
//! and any mention of the names in the strings of `_sql`/`_ppl` queries,
//! ingest pipelines and stored scripts. An item
//! reaches the group when
//!
//! - it is a name starting with `neardup-replica-` (an index or an alias;
//!   a remote `cluster:` prefix or a `::` selector is looked through, a date
//!   math name `<…{…}>` is read as its static part followed by `*`);
//! - it is a pattern other than `*` that can match one of the group's
//!   names (`neardup-*`, `n*`, `*-log-append`): the group's aliases are not
//!   hidden, and the cluster matches visible aliases against every
//!   wildcard, then resolves them to their hidden indices;
//! - it is `_all`, `*` or an empty target (`/_search`) and the request asks
//!   for hidden indices (`expand_wildcards=all|hidden`). Without that the
//!   cluster expands them to visible concrete indices only: hidden indices
//!   are left out of wildcard expansion (Elasticsearch since 7.7, hence
//!   OpenSearch), so `DELETE /_all` (which also needs
//!   `action.destructive_requires_name=false`) or `GET /_search` never
//!   reach the group.
//!
//! Exclusions (`-name`) never add. `_cat` listings are metadata the
//! cluster shows anyway and are not refused for an empty target. Bodies
//! are read whole (up to `max_content_length`) only for the endpoints
//! above, and forwarded as they came.
//!
//! Consequences: only requests that name the group are screened. An
//! ingest pipeline or a reindex script that builds the name at run time, or
//! an alias made directly in the cluster, is beyond what the sidecar can
//! see: the group's records and lease are authenticated with the group
//! secret, and the sidecar's cluster role should not be allowed to store
//! pipelines or scripts (docs/decisions.md, *Threat model*). The sidecar's
//! templates (`neardup-stamps`, `neardup`) are the operator's to edit and
//! stay open; the backfill checkpoint lives in the state directory, not in
//! the cluster.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde_json::Value;

use super::errors::SidecarError;
use super::route::decode;
use super::sidecar::Sidecar;

/// Every replica group's indices and aliases start with this.
pub const GROUP_PREFIX: &str = "neardup-replica-";

/// What follows `neardup-replica-{group}-` in the names a group creates
/// (indices and their aliases), for matching patterns against them.
pub const GROUP_SUFFIXES: [&str; 6] = [
    "control",
    "control-write",
    "log",
    "log-append",
    "snapshot",
    "snapshot-write",
];

/// The request, as it came (its body too), when it may go on; otherwise
/// the refusal to answer. While the sidecar holds an identity towards the
/// cluster, a request must also name a trusted `Host` ([`super::hosts`]).
pub(super) async fn screen(sidecar: &Sidecar, request: Request) -> Result<Request, Response> {
    if sidecar.upstream.holds_identity() && !sidecar.admin.hosts().trusts(&request) {
        return Err(SidecarError::Forbidden(
            "the Host of this request is not one the sidecar is called by: while it signs requests to the cluster, a request must name an address, localhost or a host of --allowed-host (a defence against DNS rebinding)".into(),
        )
        .into_response());
    }
    let path = request.uri().path().to_string();
    let hidden = asks_for_hidden(request.uri().query());
    let segments: Vec<&str> = path
        .trim_start_matches('/')
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    if let Some(name) = path_reaches_group(&segments, hidden) {
        return Err(refusal(&name));
    }
    let Some(kind) = BodyKind::of(request.method(), &segments) else {
        return Ok(request);
    };
    let path_has_target = segments
        .first()
        .is_some_and(|first| !first.starts_with('_'));
    let (parts, body) = request.into_parts();
    let raw = axum::body::to_bytes(body, sidecar.limits.max_content_length)
        .await
        .map_err(|_| {
            SidecarError::TooLarge {
                limit: sidecar.limits.max_content_length,
            }
            .into_response()
        })?;
    // An unreadable body goes on: the cluster answers it in its own words.
    if let Some(decoded) = decoded(&parts.headers, &raw, sidecar.limits.max_content_length)
        && let Some(name) = kind.reaches_group(&decoded, hidden, path_has_target)
    {
        return Err(refusal(&name));
    }
    Ok(Request::from_parts(parts, Body::from(raw)))
}

/// `_bulk` items naming the group's indices (the path's index is screened
/// with the path): the refusal, else `None`. Most bodies are let through
/// by one scan for the name and for a `\u00XX` escape of an ASCII
/// character, which is how JSON could spell the name otherwise.
pub(super) fn refuse_bulk_items(body: &[u8]) -> Option<Response> {
    if !may_name_the_group(body) {
        return None;
    }
    let reaching = match crate::bulk::parse_bulk(body) {
        Ok(items) => items
            .into_iter()
            .filter_map(|item| item.index)
            .find(|index| item_reaches_group(index, false)),
        // The cluster rejects a malformed body whole; still, look at every
        // line that reads as an action.
        Err(_) => body
            .split(|&byte| byte == b'\n')
            .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
            .filter_map(|line| {
                let (_, metadata) = line.as_object()?.iter().next()?;
                metadata.get("_index")?.as_str().map(str::to_string)
            })
            .find(|index| item_reaches_group(index, false)),
    };
    reaching.map(|name| refusal(&name))
}

/// Whether `body` holds the group's prefix, or `\u00` followed by a digit
/// from 2 to 7 (a printable ASCII character written as an escape, the
/// other way JSON could spell the prefix): one pass.
fn may_name_the_group(body: &[u8]) -> bool {
    static FINDER: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| {
        let escapes = (b'2'..=b'7').map(|digit| format!("\\u00{}", char::from(digit)));
        aho_corasick::AhoCorasick::new(std::iter::once(GROUP_PREFIX.to_string()).chain(escapes))
            .ok()
    });
    finder.as_ref().is_none_or(|finder| finder.is_match(body))
}

/// An index expression (a backfill's) that reaches the group: the
/// refusal, else `None`.
pub(super) fn refuse_index_expression(expression: &str) -> Option<Response> {
    expression
        .split(',')
        .find(|item| item_reaches_group(item, false))
        .map(refusal)
}

/// Whether `expand_wildcards` in the query asks for hidden indices.
fn asks_for_hidden(query: Option<&str>) -> bool {
    query.unwrap_or_default().split('&').any(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        decode(name) == "expand_wildcards" && hidden_in(&decode(&value.replace('+', " ")))
    })
}

fn hidden_in(value: &str) -> bool {
    value
        .split(',')
        .any(|option| matches!(option.trim(), "all" | "hidden"))
}

/// The first index expression of the path that reaches the group.
fn path_reaches_group(segments: &[&str], hidden: bool) -> Option<String> {
    let first = segments.first()?;
    let mut expressions: Vec<&str> = Vec::new();
    if first.starts_with('_') {
        if *first == "_neardup" {
            return None;
        }
        // Cluster APIs: their index positions differ; every name segment.
        expressions.extend(segments.iter().filter(|segment| !segment.starts_with('_')));
        let lists_only = *first == "_cat";
        let data_api = !lists_only && !segments.iter().skip(1).any(|s| !s.starts_with('_'));
        if hidden && data_api {
            return Some("_all".to_string());
        }
    } else {
        expressions.push(first);
        // Alias names: `/{index}/_alias/{name}`.
        for pair in segments.windows(2) {
            if matches!(pair[0], "_alias" | "_aliases") {
                expressions.push(pair[1]);
            }
        }
    }
    expressions
        .into_iter()
        .flat_map(|expression| {
            decode(expression)
                .split(',')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .find(|item| item_reaches_group(item, hidden))
}

/// Whether one item of an index expression reaches a group's index.
pub fn item_reaches_group(item: &str, hidden: bool) -> bool {
    let item = item.trim();
    if item.starts_with('-') || item.is_empty() {
        return false;
    }
    // `remote:index`, `index::selector`: each part.
    if item.contains(':') {
        return item
            .split(':')
            .filter(|part| !part.is_empty())
            .any(|part| item_reaches_group(part, hidden));
    }
    if let Some(inner) = item
        .strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
    {
        let fixed = inner.split('{').next().unwrap_or_default();
        return item_reaches_group(&format!("{fixed}*"), hidden);
    }
    if item == "_all" || item.bytes().all(|byte| byte == b'*') {
        return hidden;
    }
    if item.contains('*') {
        return GROUP_SUFFIXES
            .iter()
            .any(|suffix| pattern_meets_group(item, suffix));
    }
    item.starts_with(GROUP_PREFIX)
}

/// Whether the wildcard `pattern` matches some name
/// `neardup-replica-{group}-{suffix}` (`group` of `[a-z0-9_]`, as
/// [`crate::config`] allows): a search over pairs of positions in the
/// pattern and in that name's shape.
fn pattern_meets_group(pattern: &str, suffix: &str) -> bool {
    #[derive(Clone, Copy)]
    enum Shape {
        Char(u8),
        GroupChar,
        GroupChars,
    }
    let mut shape: Vec<Shape> = GROUP_PREFIX.bytes().map(Shape::Char).collect();
    shape.push(Shape::GroupChar);
    shape.push(Shape::GroupChars);
    shape.push(Shape::Char(b'-'));
    shape.extend(suffix.bytes().map(Shape::Char));
    let in_group = |byte: u8| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_';
    let glob = pattern.as_bytes();
    let mut seen = vec![false; (glob.len() + 1) * (shape.len() + 1)];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((g, s)) = stack.pop() {
        let slot = g * (shape.len() + 1) + s;
        if seen[slot] {
            continue;
        }
        seen[slot] = true;
        if g == glob.len() && s == shape.len() {
            return true;
        }
        let star = glob.get(g) == Some(&b'*');
        if star {
            // `*` matching nothing, or one more character of the name.
            stack.push((g + 1, s));
            if s < shape.len() {
                stack.push((g, s + 1));
            }
        }
        match shape.get(s) {
            Some(Shape::GroupChars) => {
                stack.push((g, s + 1));
                if let Some(&byte) = glob.get(g)
                    && byte != b'*'
                    && in_group(byte)
                {
                    stack.push((g + 1, s));
                }
            }
            Some(Shape::GroupChar) => {
                if let Some(&byte) = glob.get(g)
                    && byte != b'*'
                    && in_group(byte)
                {
                    stack.push((g + 1, s + 1));
                }
            }
            Some(Shape::Char(expected)) if glob.get(g) == Some(expected) => {
                stack.push((g + 1, s + 1));
            }
            Some(Shape::Char(_)) | None => {}
        }
    }
    false
}

/// Pass-through endpoints whose bodies name indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    /// `_mget`, `_mtermvectors`: `docs[]._index`.
    Docs,
    /// `_msearch`, `_msearch/template`: NDJSON headers.
    MultiSearch,
    /// `_reindex`: `source.index`, `dest.index`.
    Reindex,
    /// `_aliases`: the actions' indices and aliases.
    Aliases,
    /// `_sql`, `_ppl`, ingest pipelines, stored scripts: any string of the
    /// body that mentions the group's prefix.
    Mentions,
}

impl BodyKind {
    fn of(method: &axum::http::Method, segments: &[&str]) -> Option<BodyKind> {
        if method == axum::http::Method::GET && segments.first() == Some(&"_ingest")
            || method == axum::http::Method::HEAD
            || method == axum::http::Method::DELETE
        {
            return None;
        }
        segments.iter().find_map(|segment| match *segment {
            "_mget" | "_mtermvectors" => Some(BodyKind::Docs),
            "_msearch" => Some(BodyKind::MultiSearch),
            "_reindex" => Some(BodyKind::Reindex),
            "_aliases" if segments.first() == Some(&"_aliases") => Some(BodyKind::Aliases),
            "_sql" | "_ppl" | "_scripts" => Some(BodyKind::Mentions),
            "pipeline" if segments.first() == Some(&"_ingest") => Some(BodyKind::Mentions),
            _ => None,
        })
    }

    /// The first item of `body` that reaches the group.
    fn reaches_group(self, body: &[u8], hidden: bool, path_has_target: bool) -> Option<String> {
        let items_of = |value: &Value| -> Vec<String> {
            match value {
                Value::String(text) => text.split(',').map(str::to_string).collect(),
                Value::Array(values) => values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let first_reaching = |items: Vec<String>, hidden: bool| {
            items
                .into_iter()
                .find(|item| item_reaches_group(item, hidden))
        };
        match self {
            BodyKind::MultiSearch => {
                let lines: Vec<Value> = body
                    .split(|&byte| byte == b'\n')
                    .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
                    .map(|line| serde_json::from_slice(line).unwrap_or(Value::Null))
                    .collect();
                for (position, line) in lines.iter().enumerate() {
                    let line_hidden = hidden
                        || line
                            .get("expand_wildcards")
                            .is_some_and(|value| items_of(value).iter().any(|v| hidden_in(v)));
                    if let Some(index) = line.get("index") {
                        if let Some(name) = first_reaching(items_of(index), line_hidden) {
                            return Some(name);
                        }
                    } else if position % 2 == 0 && line_hidden && !path_has_target {
                        return Some("_all".to_string());
                    }
                }
                None
            }
            BodyKind::Docs => {
                let value: Value = serde_json::from_slice(body).ok()?;
                let docs = value.get("docs")?.as_array()?;
                docs.iter()
                    .filter_map(|doc| doc.get("_index"))
                    .find_map(|index| first_reaching(items_of(index), false))
            }
            BodyKind::Reindex => {
                let value: Value = serde_json::from_slice(body).ok()?;
                let source = value.get("source");
                let source_hidden = hidden
                    || source
                        .and_then(|source| source.get("expand_wildcards"))
                        .is_some_and(|value| items_of(value).iter().any(|v| hidden_in(v)));
                let from = source
                    .and_then(|source| source.get("index"))
                    .map(|index| first_reaching(items_of(index), source_hidden));
                let to = value
                    .get("dest")
                    .and_then(|dest| dest.get("index"))
                    .map(|index| first_reaching(items_of(index), false));
                let script = mentions(value.get("script").unwrap_or(&Value::Null));
                from.flatten().or(to.flatten()).or(script)
            }
            BodyKind::Aliases => {
                let value: Value = serde_json::from_slice(body).ok()?;
                let actions = value.get("actions")?.as_array()?;
                actions
                    .iter()
                    .filter_map(Value::as_object)
                    .flat_map(|action| action.values())
                    .flat_map(|details| {
                        ["index", "indices", "alias", "aliases"]
                            .into_iter()
                            .filter_map(|field| details.get(field))
                            .flat_map(items_of)
                            .collect::<Vec<_>>()
                    })
                    .find(|item| item_reaches_group(item, false))
            }
            BodyKind::Mentions => match serde_json::from_slice::<Value>(body) {
                Ok(value) => mentions(&value),
                Err(_) => String::from_utf8_lossy(body)
                    .to_ascii_lowercase()
                    .contains(GROUP_PREFIX)
                    .then(|| GROUP_PREFIX.to_string()),
            },
        }
    }
}

/// A string anywhere in `value` that mentions the group's prefix.
fn mentions(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => text
            .to_ascii_lowercase()
            .contains(GROUP_PREFIX)
            .then(|| text.clone()),
        Value::Array(values) => values.iter().find_map(mentions),
        Value::Object(map) => map.iter().find_map(|(key, value)| {
            mentions(&Value::String(key.clone())).or_else(|| mentions(value))
        }),
        _ => None,
    }
}

/// The body decompressed as `Content-Encoding` says; `None` when it
/// cannot be.
fn decoded(headers: &HeaderMap, raw: &Bytes, limit: usize) -> Option<Bytes> {
    use std::io::Read;
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_ascii_lowercase());
    let mut out = Vec::new();
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    match encoding.as_deref() {
        None | Some("" | "identity") => return Some(raw.clone()),
        Some("gzip" | "x-gzip") => flate2::read::MultiGzDecoder::new(raw.as_ref())
            .take(limit)
            .read_to_end(&mut out)
            .ok()?,
        Some("deflate") => flate2::read::ZlibDecoder::new(raw.as_ref())
            .take(limit)
            .read_to_end(&mut out)
            .ok()?,
        Some(_) => return None,
    };
    Some(Bytes::from(out))
}

fn refusal(name: &str) -> Response {
    SidecarError::Forbidden(format!(
        "no permissions for [{name}]: the indices of neardup replica groups ({GROUP_PREFIX}*) are reachable only by the sidecar itself"
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_of_a_group_are_refused() {
        for name in [
            "neardup-replica-news-control",
            "neardup-replica-news-log-append",
            "neardup-replica-x-snapshot",
            "remote:neardup-replica-news-log",
            "neardup-replica-news-log::failures",
            "<neardup-replica-news-{now/d}>",
            "<neardup-{now/d}>",
        ] {
            assert!(item_reaches_group(name, false), "{name}");
        }
        for name in [
            "news",
            "neardup-stamps",
            "neardup",
            "-neardup-replica-news-log",
        ] {
            assert!(!item_reaches_group(name, false), "{name}");
        }
    }

    #[test]
    fn patterns_that_can_match_a_group_name_are_refused() {
        for pattern in [
            "neardup-*",
            "n*",
            "neardup-replica-*",
            "*-log-append",
            "*-control",
            "neardup-replica-news-*",
            "*replica*",
            "neardup-replica-*-log",
        ] {
            assert!(item_reaches_group(pattern, false), "{pattern}");
        }
        for pattern in [
            "news-*",
            "*-logs",
            "*2024",
            "*-articles",
            "neardup-x*",
            "neardup-replica-*-logs",
        ] {
            assert!(!item_reaches_group(pattern, false), "{pattern}");
        }
    }

    #[test]
    fn everything_reaches_the_group_only_with_hidden_indices() {
        for item in ["_all", "*", "**"] {
            assert!(!item_reaches_group(item, false), "{item}");
            assert!(item_reaches_group(item, true), "{item}");
        }
        assert!(asks_for_hidden(Some("expand_wildcards=open,hidden")));
        assert!(asks_for_hidden(Some("q=x&expand_wildcards=all")));
        assert!(asks_for_hidden(Some("expand_wildcards=open%2Chidden")));
        assert!(!asks_for_hidden(Some("expand_wildcards=open,closed")));
        assert!(!asks_for_hidden(None));
    }

    fn path(path: &str, hidden: bool) -> Option<String> {
        let segments: Vec<&str> = path
            .trim_start_matches('/')
            .split('/')
            .filter(|segment| !segment.is_empty())
            .collect();
        path_reaches_group(&segments, hidden)
    }

    #[test]
    fn paths_are_read_where_the_cluster_reads_index_expressions() {
        assert!(path("/neardup-replica-news-control", false).is_some());
        assert!(path("/news,neardup-replica-news-log/_search", false).is_some());
        assert!(path("/news%2Cneardup-replica-news-log/_search", false).is_some());
        assert!(path("/news/_alias/neardup-replica-news-log-append", false).is_some());
        assert!(path("/_cat/indices/neardup-*", false).is_some());
        assert!(path("/_search", true).is_some());
        assert!(path("/_all/_delete_by_query", true).is_some());
        assert!(path("/_cat/indices", true).is_none());
        assert!(path("/_search", false).is_none());
        assert!(path("/_all", false).is_none());
        assert!(path("/news/_doc/neardup-replica-news-log", false).is_none());
        assert!(path("/_neardup/stats", true).is_none());
        assert!(path("/", true).is_none());
    }

    #[test]
    fn bodies_that_name_the_group() {
        let docs = br#"{"docs":[{"_index":"news","_id":"1"},{"_index":"neardup-replica-a-log","_id":"1"}]}"#;
        assert!(BodyKind::Docs.reaches_group(docs, false, false).is_some());
        let search = b"{\"index\":\"news\"}\n{}\n{\"index\":[\"neardup-replica-a-log\"]}\n{}\n";
        assert!(
            BodyKind::MultiSearch
                .reaches_group(search, false, false)
                .is_some()
        );
        let hidden = b"{\"expand_wildcards\":\"all\"}\n{}\n";
        assert!(
            BodyKind::MultiSearch
                .reaches_group(hidden, false, false)
                .is_some()
        );
        assert!(
            BodyKind::MultiSearch
                .reaches_group(hidden, false, true)
                .is_none()
        );
        let reindex =
            br#"{"source":{"index":"news"},"dest":{"index":"neardup-replica-a-log-append"}}"#;
        assert!(
            BodyKind::Reindex
                .reaches_group(reindex, false, false)
                .is_some()
        );
        let aliases = br#"{"actions":[{"add":{"index":"neardup-replica-a-log","alias":"mine"}}]}"#;
        assert!(
            BodyKind::Aliases
                .reaches_group(aliases, false, false)
                .is_some()
        );
        let sql = br#"{"query":"SELECT * FROM \u006eeardup-replica-a-log"}"#;
        assert!(
            BodyKind::Mentions
                .reaches_group(sql, false, false)
                .is_some()
        );
        let fine = br#"{"actions":[{"add":{"index":"news-*","alias":"news"}}]}"#;
        assert!(
            BodyKind::Aliases
                .reaches_group(fine, false, false)
                .is_none()
        );
    }

    #[test]
    fn bulk_items_naming_the_group_are_refused() {
        let plain = b"{\"index\":{\"_index\":\"news\"}}\n{\"a\":1}\n";
        assert!(refuse_bulk_items(plain).is_none());
        let named = b"{\"index\":{\"_index\":\"news\"}}\n{\"a\":1}\n{\"delete\":{\"_index\":\"neardup-replica-a-control\",\"_id\":\"control\"}}\n";
        assert!(refuse_bulk_items(named).is_some());
        let escaped =
            b"{\"create\":{\"_index\":\"\\u006eeardup-replica-a-log\",\"_id\":\"9\"}}\n{}\n";
        assert!(refuse_bulk_items(escaped).is_some());
        // A document that merely mentions the name is fine.
        let mention = b"{\"index\":{\"_index\":\"news\"}}\n{\"body\":\"neardup-replica-a-log\"}\n";
        assert!(refuse_bulk_items(mention).is_none());
    }

    #[test]
    fn the_suffixes_are_the_names_a_group_creates() {
        let upstream = crate::upstream::Upstream::new(
            "http://127.0.0.1:9",
            std::time::Duration::from_secs(1),
            &crate::upstream::UpstreamTls::default(),
        )
        .expect("an upstream");
        let group = crate::replica::cluster::GroupCluster::new(
            upstream,
            "news",
            std::time::Duration::from_secs(5),
            crate::replica::auth::GroupKey::new(&crate::config::GroupSecret::new(
                b"a secret of sixteen bytes or more".to_vec(),
            )),
        );
        for index in [
            group.control_index(),
            group.log_index(),
            group.snapshot_index(),
        ] {
            let suffix = index.trim_start_matches("neardup-replica-news-");
            assert!(GROUP_SUFFIXES.contains(&suffix), "{index}");
        }
    }
}
