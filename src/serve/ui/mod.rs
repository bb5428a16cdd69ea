//! The Explorer: pages that show the classes and why their copies were
//! grouped, served by the sidecar itself under `/_neardup/ui/`.
//!
//! # Motivation
//!
//! Whoever runs neardup has to trust its classes and tune its settings, and
//! until now that meant reading JSON (`/_neardup/stats`, `/_neardup/classes/…`,
//! `POST /_neardup/fingerprint` with two texts). Search engineers and editors
//! checking "N similar" would rather look: which stories are big and growing,
//! which outlets carried one, and for any copy what changed and which rule
//! let it in.
//!
//! # Design
//!
//! - `GET /_neardup/ui/`: the largest, fastest-growing or newest classes of
//!   the retention window ([`overview`], one pass over the forest), with the
//!   forest's own counters, so the numbers are those of `/_neardup/stats`.
//!   `?index=` keeps the classes the cluster has in that index (a `terms`
//!   aggregation on the stamp); titles come from the cluster (the documents
//!   whose own `simhash` is a class's root), and the page still shows the
//!   forest's figures when the cluster will not say.
//! - `GET /_neardup/ui/classes/{root}`: the class's documents from the
//!   cluster (a `term` query on `cluster_root`), a timeline, and every
//!   document against the root document: a word diff and the figures and
//!   rule of [`crate::explain`], computed on the blocking pool.
//! - The compare box posts two texts to `POST /_neardup/fingerprint`, whose
//!   answer carries the same explanation, and draws it (the only script).
//! - Requests to the cluster (searches, through
//!   [`crate::upstream::Upstream::search`]) carry the viewer's headers
//!   exactly as `similar` forwards them (`Authorization` included), with
//!   JSON asked for in place of the browser's `Accept` and no cookies. A refusal comes back as the
//!   cluster's own error with its status and `WWW-Authenticate`, so a browser
//!   asks for credentials and the sidecar never uses any of its own.
//! - Pages are drawn on the server ([`render`]), every document text
//!   escaped; CSS and the script are compiled into the binary
//!   (`include_str!`): no CDN, no web font, no build step. Fonts are the
//!   system's (a CJK stack first), so Chinese renders where the viewer's
//!   system has any CJK font.
//! - Language: labels in English, or in Chinese with `?lang=zh` (a link on
//!   every page switches), the figures' requirements included; document
//!   text is shown as written, and the JSON API stays in English.
//!
//! # Consequences
//!
//! - The list page walks every node under the ledger's read lock, off the
//!   async runtime (writes wait that long: tens of milliseconds per million
//!   nodes); it is for people, not for polling.
//! - Nothing is stored for the Explorer: arrivals over time are the
//!   variants' `born` times, so growth counts new variants, not verbatim
//!   copies of a known one.
//! - A class page lists at most [`MAX_MEMBERS_LISTED`] documents and
//!   compares at most [`MAX_MEMBERS_COMPARED`] of them with the root.

mod class_page;
mod list_page;
mod overview;
mod render;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::errors::{SidecarError, response_from};
use super::off_runtime::off_the_runtime;
use super::sidecar::Sidecar;
use crate::explain::{Explanation, diff, explain};
use crate::fingerprint::{FieldSpec, Fingerprinter, values_at};
use crate::units::{Fingerprint, Millis, format_fingerprint, now_millis, parse_fingerprint};
use crate::upstream;
use class_page::{ClassPageView, Comparison, FieldDiff, MemberView};
use list_page::ListView;
use overview::Order;
use render::Lang;

/// Classes on the list page unless `size` says otherwise, and at most.
const DEFAULT_CLASSES_LISTED: usize = 50;
const MAX_CLASSES_LISTED: usize = 500;

/// Documents of a class asked of the cluster for its page.
pub const MAX_MEMBERS_LISTED: usize = 200;

/// Documents compared with the root on a class page (each costs a
/// fingerprinting and an alignment).
pub const MAX_MEMBERS_COMPARED: usize = 60;

/// Classes of one index considered by the `?index=` filter (the largest,
/// by the cluster's count).
const MAX_INDEX_CLASSES: usize = 10_000;

/// Node numbers the list reads per hold of the ledger's shared lock: about
/// a millisecond of walk, the longest a write waits for the list page.
const LIST_SLICE_NODES: u32 = 32_768;

/// Fields that name a document's outlet, time and address, first found wins.
const OUTLET_FIELDS: [&str; 6] = [
    "source",
    "outlet",
    "site",
    "site_name",
    "publisher",
    "author",
];
const TIME_FIELDS: [&str; 7] = [
    "published_at",
    "publish_time",
    "pub_date",
    "@timestamp",
    "timestamp",
    "date",
    "created_at",
];
const URL_FIELDS: [&str; 2] = ["url", "link"];

const STYLESHEET: &str = include_str!("assets/explorer.css");
const SCRIPT: &str = include_str!("assets/explorer.js");

/// Answers `GET /_neardup/ui/{rest}`.
pub async fn serve(sidecar: Arc<Sidecar>, request: Request, rest: &str) -> Response {
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        [""] if !request.uri().path().ends_with('/') => redirect(render::BASE),
        [""] => list_page(&sidecar, request).await,
        ["classes", root] if !root.is_empty() => class_page(sidecar, request, root).await,
        ["explorer.css"] => asset(STYLESHEET, "text/css; charset=utf-8"),
        ["explorer.js"] => asset(SCRIPT, "text/javascript; charset=utf-8"),
        _ => SidecarError::NotFound(format!("no Explorer page [{rest}]")).into_response(),
    }
}

fn asset(text: &'static str, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// A class the forest and the index do not know: a page a browser shows,
/// with the way back, and the status a client can read.
fn not_found_page(lang: Lang, root_hex: &str) -> Response {
    let back = render::link("", lang, None, &[]);
    let body = format!(
        "<h1>{}</h1>\n<p>{} <code>{}</code>. {}</p>\n<p><a href=\"{}\">{}</a></p>\n",
        lang.t("No such class", "没有这个类"),
        lang.t(
            "Neither the forest nor the index has a class with root",
            "森林和索引里都没有以此为根的类："
        ),
        render::escape(root_hex),
        lang.t(
            "It may have expired (see the retention), or the id was mistyped.",
            "它可能已过期（见保留时长），或编号有误。"
        ),
        render::escape(&back),
        lang.t("All classes", "所有类"),
    );
    let title = lang.t("No such class", "没有这个类");
    let mut response = html(render::layout(lang, title, &back, &body));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

fn html(page: String) -> Response {
    let mut response = Response::new(Body::from(page));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Only our own script and style; document text can never run.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn redirect(to: &'static str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    response
}

fn bad_request(reason: &str) -> Response {
    SidecarError::IllegalArgument(reason.to_string()).into_response()
}

/// The query-string parameters the pages read.
struct Params {
    lang: Lang,
    order: Order,
    index: Option<String>,
    size: usize,
}

impl Params {
    /// The parameters, or why they are refused.
    fn parse(query: Option<&str>) -> Result<Params, String> {
        let value = |name: &str| -> Option<String> {
            query?
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| *key == name)
                .map(|(_, value)| super::route::decode(&value.replace('+', " ")))
        };
        let index = value("index")
            .map(|index| index.trim().to_string())
            .filter(|index| !index.is_empty());
        if let Some(index) = &index
            && !is_index_expression(index)
        {
            return Err(format!(
                "invalid index expression [{index}]: names, wildcards and commas only"
            ));
        }
        let size = value("size")
            .and_then(|size| size.parse::<usize>().ok())
            .unwrap_or(DEFAULT_CLASSES_LISTED)
            .clamp(1, MAX_CLASSES_LISTED);
        Ok(Params {
            lang: Lang::parse(value("lang").as_deref()),
            order: Order::parse(value("sort").as_deref()),
            index,
            size,
        })
    }
}

/// An index name, alias or pattern list that can stand in a path: no
/// characters the cluster forbids in names (but `*` and `,`), not a `_` API.
fn is_index_expression(text: &str) -> bool {
    !text.starts_with('_')
        && !text.starts_with('-')
        && text.len() <= 1024
        && text.chars().all(|c| {
            !c.is_control()
                && !matches!(
                    c,
                    '/' | '\\' | '?' | '#' | '"' | '<' | '>' | '|' | ' ' | '%'
                )
        })
}

async fn list_page(sidecar: &Sidecar, request: Request) -> Response {
    let params = match Params::parse(request.uri().query()) {
        Ok(params) => params,
        Err(reason) => return bad_request(&reason),
    };
    let (parts, _) = request.into_parts();
    // With an index: only the classes the cluster holds there.
    let in_index = match &params.index {
        Some(index) => {
            let query = json!({
                "size": 0,
                "aggs": { "classes": { "terms": {
                    "field": sidecar.root_field.as_str(),
                    "size": MAX_INDEX_CLASSES,
                }}}
            });
            match search(sidecar, &parts.headers, Some(index), &query).await {
                Ok(answer) => Some(class_counts(&answer)),
                Err(refused) => return *refused,
            }
        }
        None => None,
    };
    let now = now_millis();
    // A walk of every node: off the async runtime, the lock taken for one
    // slice of nodes at a time so that writes go on between slices.
    let (overview, retention, max_distance) = off_the_runtime(|| {
        let mut scan =
            overview::OverviewScan::new(now, params.order, params.size, in_index.as_ref());
        loop {
            let ledger = sidecar.ledger.read();
            let forest = ledger.engine().forest();
            if scan.scan(forest, LIST_SLICE_NODES) {
                return (
                    scan.finish(forest),
                    forest.config().retention,
                    forest.max_distance(),
                );
            }
        }
    });
    let title_field = headline_field(sidecar, params.index.as_deref());
    let mut notice = None;
    let mut titles = HashMap::new();
    if !overview.classes.is_empty() {
        let roots: Vec<String> = overview
            .classes
            .iter()
            .map(|class| format_fingerprint(class.root))
            .collect();
        let query = json!({
            "size": (roots.len() * 3).min(1_000),
            "_source": [title_field.as_str(), sidecar.simhash_field.as_str()],
            "query": { "terms": { sidecar.simhash_field.as_str(): roots } }
        });
        match search(sidecar, &parts.headers, params.index.as_deref(), &query).await {
            Ok(answer) => {
                for hit in upstream::hits(&answer) {
                    let source = &hit["_source"];
                    let (Some(root), Some(title)) = (
                        source
                            .get(&sidecar.simhash_field)
                            .and_then(Value::as_str)
                            .and_then(parse_fingerprint),
                        first_text(source, &[title_field.as_str()]),
                    ) else {
                        continue;
                    };
                    titles.entry(root).or_insert(title);
                }
            }
            Err(refused) => {
                notice = Some(format!(
                    "titles not shown: the cluster answered {} to their search",
                    refused.status()
                ));
            }
        }
    }
    html(list_page::list_page(&ListView {
        lang: params.lang,
        overview: &overview,
        order: params.order,
        index: params.index.as_deref(),
        in_index: in_index.as_ref(),
        titles: &titles,
        notice,
        retention,
        max_distance,
    }))
}

async fn class_page(sidecar: Arc<Sidecar>, request: Request, root_text: &str) -> Response {
    let params = match Params::parse(request.uri().query()) {
        Ok(params) => params,
        Err(reason) => return bad_request(&reason),
    };
    if crate::bulk::stamping::is_class_of_its_own(root_text) {
        return SidecarError::NotFound(super::own::not_fingerprinted_class(root_text))
            .into_response();
    }
    let Some(root) = parse_fingerprint(root_text) else {
        return bad_request("a class id is 16 hexadecimal digits");
    };
    let (parts, _) = request.into_parts();
    let root_hex = format_fingerprint(root);
    let query = json!({
        "size": MAX_MEMBERS_LISTED,
        "track_total_hits": true,
        "query": { "term": { sidecar.root_field.as_str(): root_hex } }
    });
    let answer = match search(&sidecar, &parts.headers, params.index.as_deref(), &query).await {
        Ok(answer) => answer,
        Err(refused) => return *refused,
    };
    let cluster_total = upstream::hits_total(&answer).unwrap_or(0);
    let (summary, confirmation, max_distance, borns) = {
        let ledger = sidecar.ledger.read();
        let forest = ledger.engine().forest();
        let borns: HashMap<Fingerprint, Millis> = upstream::hits(&answer)
            .iter()
            .filter_map(|hit| stamp(&hit["_source"], &sidecar.simhash_field))
            .filter_map(|simhash| forest.node(simhash).map(|node| (simhash, node.born)))
            .collect();
        (
            overview::summary(forest, root, 0),
            ledger.engine().confirmation().clone(),
            forest.max_distance(),
            borns,
        )
    };
    if summary.is_none() && cluster_total == 0 {
        return not_found_page(params.lang, &root_hex);
    }
    let documents: Vec<Document> = upstream::hits(&answer)
        .iter()
        .map(|hit| Document::read(&sidecar, hit, &borns))
        .collect();
    let lang = params.lang;
    let compare_sidecar = sidecar.clone();
    let compared = tokio::task::spawn_blocking(move || {
        compare_with_root(
            &compare_sidecar,
            documents,
            root,
            lang,
            &confirmation,
            max_distance,
        )
    })
    .await;
    let Ok((members, notice)) = compared else {
        return SidecarError::Internal("comparing the class's documents failed".into())
            .into_response();
    };
    html(class_page::class_page(&ClassPageView {
        lang,
        root,
        index: params.index.as_deref(),
        summary: summary.as_ref(),
        cluster_total,
        members: &members,
        notice,
    }))
}

/// One hit of a class, with what the page needs from its source.
struct Document {
    index: String,
    id: String,
    source: Value,
    simhash: Option<Fingerprint>,
    time: Option<Millis>,
    /// `time` is the variant's arrival: the source has no time of its own.
    time_is_arrival: bool,
}

impl Document {
    fn read(sidecar: &Sidecar, hit: &Value, borns: &HashMap<Fingerprint, Millis>) -> Document {
        let source = hit["_source"].clone();
        let simhash = stamp(&source, &sidecar.simhash_field);
        let written = TIME_FIELDS
            .iter()
            .find_map(|field| source.get(*field).and_then(document_time));
        let (time, time_is_arrival) = match written {
            Some(time) => (Some(time), false),
            None => match simhash.and_then(|simhash| borns.get(&simhash)) {
                Some(&born) => (Some(born), true),
                None => (None, false),
            },
        };
        Document {
            index: hit["_index"].as_str().unwrap_or_default().to_string(),
            id: hit["_id"].as_str().unwrap_or_default().to_string(),
            source,
            simhash,
            time,
            time_is_arrival,
        }
    }
}

/// Orders the documents by time, finds the root document (the earliest
/// whose own fingerprint is the root, else the earliest) and compares the
/// others with it.
fn compare_with_root(
    sidecar: &Sidecar,
    mut documents: Vec<Document>,
    root: Fingerprint,
    lang: Lang,
    confirmation: &crate::confirm::ConfirmationConfig,
    max_distance: u32,
) -> (Vec<MemberView>, Option<String>) {
    documents
        .sort_by(|a, b| (a.time.is_none(), a.time, &a.id).cmp(&(b.time.is_none(), b.time, &b.id)));
    let mut notice = None;
    let root_position = match documents
        .iter()
        .position(|document| document.simhash == Some(root))
    {
        Some(position) => Some(position),
        None if documents.is_empty() => None,
        None => {
            notice = Some(match lang {
                Lang::En => "The root's own document is not in the search results: documents are compared with the earliest one.".to_string(),
                Lang::Zh => "根文档不在搜索结果中：改为与最早的文档比较。".to_string(),
            });
            Some(0)
        }
    };
    let root_document = root_position.and_then(|position| documents.get(position));
    let mut compared = 0;
    let members = documents
        .iter()
        .enumerate()
        .map(|(position, document)| {
            let comparison = match root_document {
                _ if Some(position) == root_position => Comparison::Root,
                Some(_) if compared >= MAX_MEMBERS_COMPARED => Comparison::NotCompared(format!(
                    "not compared: the page compares the first {MAX_MEMBERS_COMPARED}"
                )),
                Some(root_document) => {
                    compared += 1;
                    let analyzer = sidecar.analyzers.for_index(Some(&document.index));
                    compare(
                        analyzer.fingerprinter(),
                        confirmation,
                        max_distance,
                        root_document,
                        document,
                    )
                }
                None => Comparison::NotCompared(String::new()),
            };
            member_view(sidecar, document, comparison)
        })
        .collect();
    (members, notice)
}

fn compare(
    fingerprinter: &Fingerprinter,
    confirmation: &crate::confirm::ConfirmationConfig,
    max_distance: u32,
    root: &Document,
    member: &Document,
) -> Comparison {
    let (Some(root_text), Some(member_text)) = (
        fingerprinter.prepare_document(&root.source),
        fingerprinter.prepare_document(&member.source),
    ) else {
        return Comparison::NotCompared("no text in the fingerprinted fields".to_string());
    };
    let explanation: Explanation = match explain(
        fingerprinter,
        confirmation,
        max_distance,
        &root_text,
        &member_text,
    ) {
        Ok(explanation) => explanation,
        Err(error) => return Comparison::NotCompared(error.to_string()),
    };
    let options = fingerprinter.config().normalize;
    let fields = fingerprinter
        .config()
        .fields
        .iter()
        .filter_map(|field| field.parse::<FieldSpec>().ok())
        .map(|field| {
            let (root_spans, member_spans) = diff(
                options,
                &field_text(&root.source, &field.path),
                &field_text(&member.source, &field.path),
            );
            FieldDiff {
                field: field.path,
                root: root_spans,
                member: member_spans,
            }
        })
        .collect();
    Comparison::Compared {
        explanation: Box::new(explanation),
        fields,
    }
}

fn member_view(sidecar: &Sidecar, document: &Document, comparison: Comparison) -> MemberView {
    let headline = headline_field(sidecar, Some(&document.index));
    let title = first_text(&document.source, &[headline.as_str()])
        .or_else(|| {
            let analyzer = sidecar.analyzers.for_index(Some(&document.index));
            let fields = &analyzer.fingerprinter().config().fields;
            fields
                .iter()
                .filter_map(|field| field.parse::<FieldSpec>().ok())
                .map(|field| field_text(&document.source, &field.path))
                .find(|text| !text.trim().is_empty())
                .map(|text| text.chars().take(80).collect())
        })
        .unwrap_or_else(|| document.id.clone());
    MemberView {
        index: document.index.clone(),
        id: document.id.clone(),
        title,
        outlet: first_text(&document.source, &OUTLET_FIELDS),
        url: first_text(&document.source, &URL_FIELDS),
        time: document.time,
        time_is_arrival: document.time_is_arrival,
        simhash: document.simhash,
        comparison,
    }
}

/// The headline field of an index's analyzer (`title` when none is set).
fn headline_field(sidecar: &Sidecar, index: Option<&str>) -> String {
    sidecar
        .analyzers
        .for_index(index)
        .fingerprinter()
        .config()
        .headline_field
        .clone()
        .unwrap_or_else(|| "title".to_string())
}

/// A stamped fingerprint field of a source.
fn stamp(source: &Value, field: &str) -> Option<Fingerprint> {
    source
        .get(field)
        .and_then(Value::as_str)
        .and_then(parse_fingerprint)
}

/// The text of a (dotted) field, values joined by line breaks.
fn field_text(source: &Value, path: &str) -> String {
    values_at(source, path)
        .into_iter()
        .filter_map(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first of `fields` that holds text.
fn first_text(source: &Value, fields: &[&str]) -> Option<String> {
    fields
        .iter()
        .map(|field| field_text(source, field))
        .find(|text| !text.trim().is_empty())
}

/// A document's own time: RFC 3339 text or epoch milliseconds.
fn document_time(value: &Value) -> Option<Millis> {
    match value {
        Value::String(text) => chrono::DateTime::parse_from_rfc3339(text.trim())
            .ok()
            .map(|time| time.timestamp_millis()),
        Value::Number(number) => number.as_i64(),
        _ => None,
    }
}

/// Documents per class from a `terms` aggregation named `classes`.
fn class_counts(answer: &Value) -> HashMap<Fingerprint, u64> {
    answer["aggregations"]["classes"]["buckets"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|bucket| {
            let root = bucket["key"].as_str().and_then(parse_fingerprint)?;
            Some((root, bucket["doc_count"].as_u64().unwrap_or(0)))
        })
        .collect()
}

/// A search in the cluster with the viewer's headers (as `similar` sends
/// them, JSON asked for). A refusal is the cluster's own answer (status,
/// body and `WWW-Authenticate`); no answer is 502/504.
async fn search(
    sidecar: &Sidecar,
    viewer: &HeaderMap,
    index: Option<&str>,
    query: &Value,
) -> Result<Value, Box<Response>> {
    let mut headers = upstream::request_headers(viewer, true);
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    headers.remove(header::COOKIE);
    let answer = sidecar
        .upstream
        .search(index, &headers, query)
        .await
        .map_err(|error| Box::new(SidecarError::from(error).into_response()))?;
    if !answer.status.is_success() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=UTF-8"),
        );
        if let Some(challenge) = answer.headers.get(header::WWW_AUTHENTICATE) {
            headers.insert(header::WWW_AUTHENTICATE, challenge.clone());
        }
        return Err(Box::new(response_from(
            answer.status,
            headers,
            Body::from(answer.body),
        )));
    }
    answer.json().ok_or_else(|| {
        Box::new(
            SidecarError::UpstreamAnswer(format!(
                "the cluster's answer to POST {} is not JSON",
                index.map_or_else(
                    || "/_search".to_string(),
                    |index| format!("/{index}/_search")
                )
            ))
            .into_response(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_expressions_cannot_leave_the_path_segment() {
        assert!(is_index_expression("news-*"));
        assert!(is_index_expression("news-2026.03,blogs"));
        assert!(!is_index_expression("news/_doc"));
        assert!(!is_index_expression("_cat"));
        assert!(!is_index_expression("a b"));
        assert!(!is_index_expression("news?x=1"));
        assert!(!is_index_expression("a%2Fb"));
    }

    #[test]
    fn parameters_fall_back_to_defaults() {
        let params = Params::parse(Some("lang=zh&sort=growing&index=news%2A&size=9999"))
            .unwrap_or_else(|_| panic!("valid"));
        assert_eq!(params.lang, Lang::Zh);
        assert_eq!(params.order, Order::Growing);
        assert_eq!(params.index.as_deref(), Some("news*"));
        assert_eq!(params.size, MAX_CLASSES_LISTED);
        let defaults = Params::parse(None).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(defaults.lang, Lang::En);
        assert_eq!(defaults.order, Order::Largest);
        assert_eq!(defaults.size, DEFAULT_CLASSES_LISTED);
        assert!(Params::parse(Some("index=..%2F_cat")).is_err());
    }

    #[test]
    fn document_times_are_read_as_written() {
        let millis = document_time(&json!("2026-03-10T09:35:00+08:00")).expect("RFC 3339");
        assert_eq!(millis, 1_773_106_500_000);
        assert_eq!(document_time(&json!(0)), Some(0));
        assert!(document_time(&json!("yesterday")).is_none());
    }

    #[test]
    fn class_counts_read_the_aggregation() {
        let answer = json!({"aggregations": {"classes": {"buckets": [
            {"key": "00000000000000ab", "doc_count": 4},
            {"key": "not hex", "doc_count": 1}
        ]}}});
        assert_eq!(class_counts(&answer), HashMap::from([(0xab, 4)]));
    }
}
