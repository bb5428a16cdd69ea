//! Which requests the sidecar handles itself and which it passes through.
//!
//! Design: the cluster's REST paths are matched by hand on the raw path
//! (segments between `/`), since everything not matched must be proxied
//! byte for byte, and an index may be named like any of our words.

use axum::http::Method;

use crate::bulk::ActionKind;

/// What the sidecar does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `POST|PUT /_bulk`, `/{index}/_bulk`.
    Bulk {
        index: Option<String>,
    },
    /// `PUT|POST /{index}/_doc/{id}`, `POST /{index}/_doc` (index),
    /// `PUT|POST /{index}/_create/{id}` (create), `POST /{index}/_update/{id}`
    /// (update), `DELETE /{index}/_doc/{id}` (delete): one document. `id`
    /// is decoded, and `None` only for `POST /{index}/_doc`.
    Document {
        index: String,
        id: Option<String>,
        kind: ActionKind,
    },
    /// Readiness: 503 while writes are refused.
    Health,
    /// Liveness: the process answers.
    Live,
    /// `/_neardup/backfill` (GET, POST, DELETE) and `…/_cancel` (POST).
    Backfill,
    Stats,
    Metrics,
    Fingerprint,
    Class {
        root: String,
    },
    Similar {
        index: String,
        id: String,
    },
    /// `GET /_neardup/ui/…`: the Explorer's pages; `rest` is the path after `ui/`.
    Explorer {
        rest: String,
    },
    /// `GET /_neardup/replica` (this member's status), `…/leader` (200 on
    /// the acting leader only), `…/standby` (200 on a standby caught up):
    /// role endpoints for load balancers.
    Replica {
        endpoint: ReplicaEndpoint,
    },
    /// Another path or method under `/_neardup/`: the sidecar's own 404
    /// (the cluster has no such endpoints, so it is never asked).
    UnknownOwn,
    /// Everything else: proxied unchanged.
    PassThrough,
}

/// Which of the replica group's endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaEndpoint {
    Status,
    Leader,
    Standby,
}

/// Classifies a request by method and path (without the query string).
pub fn classify(method: &Method, path: &str) -> Route {
    // The cluster reads `/_bulk/` as `/_bulk`: one trailing slash is not a
    // segment of its own.
    let trimmed = path.trim_start_matches('/');
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let segments: Vec<&str> = trimmed.split('/').collect();
    let is_get = method == Method::GET;
    let is_write = method == Method::POST || method == Method::PUT;
    match segments.as_slice() {
        ["_bulk"] if is_write => Route::Bulk { index: None },
        [index, "_bulk"] if is_write && is_index_name(index) => Route::Bulk {
            index: Some(decode(index)),
        },
        // The typed form of older clients (`/{index}/{type}/_bulk`), which
        // clusters that still take it read as a bulk into `index`.
        [index, doc_type, "_bulk"]
            if is_write && is_index_name(index) && is_index_name(doc_type) =>
        {
            Route::Bulk {
                index: Some(decode(index)),
            }
        }
        [index, "_doc"] if method == Method::POST && is_index_name(index) => Route::Document {
            index: decode(index),
            id: None,
            kind: ActionKind::Index,
        },
        [index, "_doc", id] if is_index_name(index) && !id.is_empty() => {
            let kind = if is_write {
                ActionKind::Index
            } else if method == Method::DELETE {
                ActionKind::Delete
            } else {
                return Route::PassThrough;
            };
            Route::Document {
                index: decode(index),
                id: Some(decode(id)),
                kind,
            }
        }
        [index, "_create", id] if is_write && is_index_name(index) && !id.is_empty() => {
            Route::Document {
                index: decode(index),
                id: Some(decode(id)),
                kind: ActionKind::Create,
            }
        }
        [index, "_update", id]
            if method == Method::POST && is_index_name(index) && !id.is_empty() =>
        {
            Route::Document {
                index: decode(index),
                id: Some(decode(id)),
                kind: ActionKind::Update,
            }
        }
        ["_neardup", "health"] | ["_neardup", "health", "ready"] if is_get => Route::Health,
        ["_neardup", "health", "live"] if is_get => Route::Live,
        ["_neardup", "backfill"] if is_get || is_write || method == Method::DELETE => {
            Route::Backfill
        }
        ["_neardup", "backfill", "_cancel"] if method == Method::POST => Route::Backfill,
        ["_neardup", "stats"] if is_get => Route::Stats,
        ["_neardup", "replica"] if is_get => Route::Replica {
            endpoint: ReplicaEndpoint::Status,
        },
        ["_neardup", "replica", "leader"] if is_get => Route::Replica {
            endpoint: ReplicaEndpoint::Leader,
        },
        ["_neardup", "replica", "standby"] if is_get => Route::Replica {
            endpoint: ReplicaEndpoint::Standby,
        },
        ["_neardup", "metrics"] | ["metrics"] if is_get => Route::Metrics,
        ["_neardup", "fingerprint"] if is_write => Route::Fingerprint,
        ["_neardup", "classes", root] if is_get && !root.is_empty() => {
            Route::Class { root: decode(root) }
        }
        ["_neardup", "ui", rest @ ..] if is_get => Route::Explorer {
            rest: rest.join("/"),
        },
        [index, "_neardup", "similar", id] if is_get && is_index_name(index) && !id.is_empty() => {
            Route::Similar {
                index: decode(index),
                id: decode(id),
            }
        }
        ["_neardup", ..] => Route::UnknownOwn,
        _ => Route::PassThrough,
    }
}

/// Index names (and aliases, patterns) never start with `_`; paths that do
/// are cluster APIs (`/_search/…`).
fn is_index_name(segment: &str) -> bool {
    !segment.is_empty() && !segment.starts_with('_')
}

/// Percent-decodes a path segment (ids may contain `/` as `%2F`).
pub fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        if bytes[position] == b'%'
            && let Some(hex) = bytes.get(position + 1..position + 3)
            && let Ok(text) = std::str::from_utf8(hex)
            && let Ok(byte) = u8::from_str_radix(text, 16)
        {
            out.push(byte);
            position += 3;
            continue;
        }
        out.push(bytes[position]);
        position += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_is_recognised_with_a_trailing_slash_and_a_type() {
        assert_eq!(
            classify(&Method::POST, "/_bulk/"),
            Route::Bulk { index: None }
        );
        assert_eq!(
            classify(&Method::POST, "/news/_bulk/"),
            Route::Bulk {
                index: Some("news".into())
            }
        );
        assert_eq!(
            classify(&Method::POST, "/news/article/_bulk"),
            Route::Bulk {
                index: Some("news".into())
            }
        );
        assert_eq!(classify(&Method::POST, "/_bulk//"), Route::PassThrough);
        assert_eq!(
            classify(&Method::POST, "/news/_search/_bulk"),
            Route::PassThrough
        );
    }

    #[test]
    fn write_apis_are_recognised() {
        assert_eq!(
            classify(&Method::POST, "/_bulk"),
            Route::Bulk { index: None }
        );
        assert_eq!(
            classify(&Method::PUT, "/news/_bulk"),
            Route::Bulk {
                index: Some("news".into())
            }
        );
        let document = |id: Option<&str>, kind| Route::Document {
            index: "news".into(),
            id: id.map(str::to_string),
            kind,
        };
        assert_eq!(
            classify(&Method::PUT, "/news/_doc/a%2Fb"),
            document(Some("a/b"), ActionKind::Index)
        );
        assert_eq!(
            classify(&Method::POST, "/news/_doc"),
            document(None, ActionKind::Index)
        );
        assert_eq!(
            classify(&Method::POST, "/news/_create/1"),
            document(Some("1"), ActionKind::Create)
        );
        assert_eq!(
            classify(&Method::POST, "/news/_update/1"),
            document(Some("1"), ActionKind::Update)
        );
        assert_eq!(
            classify(&Method::DELETE, "/news/_doc/1"),
            document(Some("1"), ActionKind::Delete)
        );
    }

    #[test]
    fn reads_and_other_apis_pass_through() {
        for (method, path) in [
            (Method::GET, "/_bulk"),
            (Method::GET, "/news/_doc/1"),
            (Method::PUT, "/news/_doc"),
            (Method::PUT, "/news/_update/1"),
            (Method::DELETE, "/news"),
            (Method::POST, "/_search/_bulk"),
            (Method::POST, "/news/_search"),
            (Method::GET, "/"),
            (Method::HEAD, "/news"),
        ] {
            assert_eq!(
                classify(&method, path),
                Route::PassThrough,
                "{method} {path}"
            );
        }
    }

    #[test]
    fn own_endpoints() {
        assert_eq!(classify(&Method::GET, "/_neardup/health"), Route::Health);
        assert_eq!(
            classify(&Method::GET, "/_neardup/health/ready"),
            Route::Health
        );
        assert_eq!(classify(&Method::GET, "/_neardup/health/live"), Route::Live);
        assert_eq!(
            classify(&Method::POST, "/_neardup/backfill"),
            Route::Backfill
        );
        assert_eq!(
            classify(&Method::DELETE, "/_neardup/backfill"),
            Route::Backfill
        );
        assert_eq!(
            classify(&Method::POST, "/_neardup/backfill/_cancel"),
            Route::Backfill
        );
        assert_eq!(classify(&Method::GET, "/metrics"), Route::Metrics);
        assert_eq!(
            classify(&Method::GET, "/_neardup/replica/leader"),
            Route::Replica {
                endpoint: ReplicaEndpoint::Leader
            }
        );
        assert_eq!(
            classify(&Method::GET, "/_neardup/replica/standby"),
            Route::Replica {
                endpoint: ReplicaEndpoint::Standby
            }
        );
        assert_eq!(
            classify(&Method::POST, "/_neardup/replica/leader"),
            Route::UnknownOwn
        );
        assert_eq!(
            classify(&Method::GET, "/_neardup/classes/00ff"),
            Route::Class {
                root: "00ff".into()
            }
        );
        assert_eq!(
            classify(&Method::GET, "/news/_neardup/similar/x%20y"),
            Route::Similar {
                index: "news".into(),
                id: "x y".into()
            }
        );
    }

    #[test]
    fn explorer_pages() {
        let explorer = |rest: &str| Route::Explorer { rest: rest.into() };
        assert_eq!(classify(&Method::GET, "/_neardup/ui"), explorer(""));
        assert_eq!(classify(&Method::GET, "/_neardup/ui/"), explorer(""));
        assert_eq!(
            classify(&Method::GET, "/_neardup/ui/classes/00ff"),
            explorer("classes/00ff")
        );
        assert_eq!(classify(&Method::POST, "/_neardup/ui/"), Route::UnknownOwn);
        assert_eq!(
            classify(&Method::GET, "/_neardup/classes"),
            Route::UnknownOwn
        );
        assert_eq!(
            classify(&Method::GET, "/_neardup/nothing"),
            Route::UnknownOwn
        );
    }

    #[test]
    fn percent_decoding_keeps_broken_escapes() {
        assert_eq!(decode("a%2Fb%zz%4"), "a/b%zz%4");
    }
}
