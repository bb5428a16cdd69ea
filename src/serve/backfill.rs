//! `/_neardup/backfill`: start (`POST`), report (`GET`), cancel (`DELETE`,
//! or `POST /_neardup/backfill/_cancel`) the sidecar's backfill job (see
//! [`crate::backfill`]). Starting and cancelling pass the admin guard
//! ([`super::admin`]); the report is open like the other reading endpoints.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use futures_util::StreamExt;
use serde_json::json;

use super::errors::{SidecarError, json_response};
use super::sidecar::Sidecar;
use crate::backfill::{BackfillRequest, LiveForest, StartError};
use crate::engine::Analyzer;
use crate::ledger::Ledger;
use crate::units::Millis;
use crate::upstream::{ClusterError, Upstream};

/// Largest request body accepted by `POST /_neardup/backfill`.
const MAX_REQUEST_BODY: usize = 64 << 10;

impl LiveForest for Sidecar {
    fn change(&self, change: &mut dyn FnMut(&mut Ledger)) -> u64 {
        self.ledger.write(|ledger| change(ledger)).1
    }

    fn persist(&self, seq: u64) -> Result<(), crate::persist::store::StoreError> {
        crate::backfill::sync_store(self.ledger.store(), seq)
    }

    fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    fn analyzer(&self, index: &str) -> Analyzer {
        self.analyzers.for_index(Some(index)).clone()
    }

    fn retention(&self) -> Option<Millis> {
        self.ledger.read().retention()
    }
}

/// Every `/_neardup/backfill…` request.
pub async fn handle(sidecar: Arc<Sidecar>, request: Request) -> axum::response::Response {
    let Some(controller) = sidecar.backfill.get() else {
        return SidecarError::Unavailable("backfill is not available in this sidecar".into())
            .into_response();
    };
    let cancel_path = request
        .uri()
        .path()
        .trim_end_matches('/')
        .ends_with("/_cancel");
    let method = request.method().clone();
    if method == Method::GET && !cancel_path {
        return json_response(StatusCode::OK, &controller.progress().to_json());
    }
    if let Some(refused) = sidecar.admin.check(&request) {
        return refused;
    }
    if method == Method::DELETE || (method == Method::POST && cancel_path) {
        let cancelled = controller.cancel();
        let mut body = controller.progress().to_json();
        body["cancel_requested"] = json!(cancelled);
        return json_response(StatusCode::OK, &body);
    }
    if method != Method::POST {
        return SidecarError::MethodNotAllowed(format!(
            "Incorrect HTTP method for uri [{}] and method [{method}], allowed: [GET, POST, DELETE]",
            request.uri().path()
        ))
        .into_response();
    }
    let credentials = crate::upstream::credentials(request.headers());
    let body = match read_small_body(request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let parsed: BackfillRequest = match serde_json::from_slice(&body) {
        Ok(parsed) => parsed,
        Err(error) => {
            return SidecarError::ContentParse(format!(
                "cannot read the backfill request: {error}"
            ))
            .into_response();
        }
    };
    // A backfill rewrites what it reads: never a replica group's records.
    if let Some(refused) = super::protected::refuse_index_expression(&parsed.index) {
        return refused;
    }
    let live: Arc<dyn LiveForest> = sidecar.clone();
    match controller.start(live, parsed, credentials).await {
        Ok(progress) => json_response(StatusCode::OK, &progress.to_json()),
        Err(StartError::AlreadyRunning(index)) => SidecarError::AlreadyExists(format!(
            "a backfill of [{index}] is already running; cancel it first"
        ))
        .into_response(),
        Err(StartError::Invalid(reason)) => SidecarError::IllegalArgument(reason).into_response(),
        Err(StartError::Cluster(error)) => cluster_refusal(&error),
    }
}

/// A start the cluster refused or could not be asked about: its own
/// answer and status when it gave one (no such index: 404; no right to
/// change the mapping: 403), else 502.
fn cluster_refusal(error: &ClusterError) -> axum::response::Response {
    let status = crate::backfill::preflight::cluster_status(error);
    let own_answer = match error {
        ClusterError::Refused { answer, .. } | ClusterError::NoIndex { answer, .. } => {
            serde_json::from_str::<serde_json::Value>(answer)
                .ok()
                .filter(|body| body.get("error").is_some())
        }
        _ => None,
    };
    match (own_answer, error) {
        (Some(body), _) => json_response(status, &body),
        (None, ClusterError::Unanswered { error, .. }) => {
            SidecarError::Upstream(error.clone()).into_response()
        }
        (None, _) => SidecarError::UpstreamAnswer(error.to_string()).into_response(),
    }
}

async fn read_small_body(request: Request) -> Result<Vec<u8>, axum::response::Response> {
    let mut stream = request.into_body().into_data_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return Err(
                SidecarError::UnreadableBody("cannot read the request body".into()).into_response(),
            );
        };
        if body.len() + chunk.len() > MAX_REQUEST_BODY {
            return Err(SidecarError::TooLarge {
                limit: MAX_REQUEST_BODY,
            }
            .into_response());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
