//! Admission of a write: the in-flight budget, the size limit, and the
//! body read whole and decompressed.
//!
//! Motivation: a write is read whole before it is stamped, so the bytes
//! being stamped at once must be bounded, or a burst of large bulk requests
//! exhausts memory. The cluster answers such pressure with 429
//! (`es_rejected_execution_exception`); clients retry it.
//!
//! Design: a request reserves its declared length (or 1 MiB when it
//! declares none) from [`Admission`] before its body is read; the
//! reservation grows to what was actually read and decompressed
//! ([`InFlight::cover`]) and is given back when the request ends (drop).
//! One request alone is always let in, however big (it is below
//! `max_content_length`), so nothing is starved. Refusals are answered by
//! [`refused`].

use crate::serve::off_runtime::off_the_runtime;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;

use crate::config::Limits;
use crate::serve::errors::SidecarError;
use crate::serve::metrics::Metrics;

/// The in-flight budget and the body limit of writes.
pub struct Admission {
    in_flight_bytes: AtomicUsize,
    max_in_flight_bytes: usize,
    max_content_length: usize,
    /// Writes running in their own task, and a wake-up when one ends
    /// (shutdown waits for them: [`Admission::writes_finished`]).
    running_writes: AtomicUsize,
    write_ended: tokio::sync::Notify,
}

impl Admission {
    pub fn new(limits: &Limits) -> Self {
        Admission {
            in_flight_bytes: AtomicUsize::new(0),
            max_in_flight_bytes: limits.max_in_flight_bytes,
            max_content_length: limits.max_content_length,
            running_writes: AtomicUsize::new(0),
            write_ended: tokio::sync::Notify::new(),
        }
    }

    /// Counts a write that runs in its own task until the guard drops.
    pub(super) fn write_started(&self) -> RunningWrite<'_> {
        self.running_writes.fetch_add(1, Ordering::AcqRel);
        RunningWrite { admission: self }
    }

    /// Waits until no write is running (at shutdown, after the listener
    /// stopped taking requests), at most `limit`; whether they all ended.
    pub async fn writes_finished(&self, limit: std::time::Duration) -> bool {
        let all_ended = async {
            loop {
                let ended = self.write_ended.notified();
                if self.running_writes.load(Ordering::Acquire) == 0 {
                    return;
                }
                ended.await;
            }
        };
        tokio::time::timeout(limit, all_ended).await.is_ok()
    }

    /// Bytes of writes being stamped now (a gauge).
    pub fn in_flight_bytes(&self) -> usize {
        self.in_flight_bytes.load(Ordering::Relaxed)
    }

    /// Reserves in-flight bytes for the request and reads its body.
    pub(super) async fn admit_and_read(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(InFlight<'_>, Bytes), SidecarError> {
        let limit = self.max_content_length;
        let declared = declared_length(headers).map_or(limit.min(1 << 20), |length| {
            usize::try_from(length).unwrap_or(usize::MAX)
        });
        let Some(mut in_flight) = self.reserve(declared.min(limit)) else {
            return Err(SidecarError::TooManyRequests);
        };
        let body = read_body(headers, body, limit).await?;
        in_flight.cover(body.len());
        Ok((in_flight, body))
    }

    /// Reserves `bytes` of the in-flight budget; `None` when it is spent.
    fn reserve(&self, bytes: usize) -> Option<InFlight<'_>> {
        let limit = self.max_in_flight_bytes;
        self.in_flight_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                (current == 0 || current.saturating_add(bytes) <= limit)
                    .then_some(current.saturating_add(bytes))
            })
            .ok()
            .map(|_| InFlight {
                counter: &self.in_flight_bytes,
                bytes,
            })
    }
}

/// Bytes of the in-flight budget held by one request.
pub(super) struct InFlight<'a> {
    counter: &'a AtomicUsize,
    bytes: usize,
}

impl InFlight<'_> {
    /// Accounts for bytes beyond the reservation (a body without a declared
    /// length, or one that grew when decompressed): later requests see them.
    fn cover(&mut self, actual: usize) {
        if actual > self.bytes {
            self.counter
                .fetch_add(actual - self.bytes, Ordering::AcqRel);
            self.bytes = actual;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// One write running in its own task (see [`Admission::write_started`]).
pub(super) struct RunningWrite<'a> {
    admission: &'a Admission,
}

impl Drop for RunningWrite<'_> {
    fn drop(&mut self) {
        self.admission.running_writes.fetch_sub(1, Ordering::AcqRel);
        self.admission.write_ended.notify_waiters();
    }
}

/// A refusal before anything was placed or forwarded.
pub(super) fn refused(metrics: &Metrics, error: SidecarError) -> Response {
    Metrics::add(&metrics.rejected_requests, 1);
    error.into_response()
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
}

/// Reads the whole body within `max_content_length`, decompressed.
async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, SidecarError> {
    let declared = declared_length(headers);
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(SidecarError::TooLarge { limit });
    }
    let mut stream = body.into_data_stream();
    let mut buffer = Vec::with_capacity(declared.map_or(0, |length| length as usize));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| {
            SidecarError::UnreadableBody(format!("cannot read the request body: {error}"))
        })?;
        if buffer.len() + chunk.len() > limit {
            return Err(SidecarError::TooLarge { limit });
        }
        buffer.extend_from_slice(&chunk);
    }
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_ascii_lowercase());
    let decoded = match encoding.as_deref() {
        None | Some("" | "identity") => return Ok(Bytes::from(buffer)),
        Some("gzip" | "x-gzip") => off_the_runtime(|| {
            read_limited(flate2::read::MultiGzDecoder::new(buffer.as_slice()), limit)
        }),
        Some("deflate") => off_the_runtime(|| {
            read_limited(flate2::read::ZlibDecoder::new(buffer.as_slice()), limit)
        }),
        Some(other) => {
            return Err(SidecarError::IllegalArgument(format!(
                "unsupported Content-Encoding [{other}]: use gzip or deflate"
            )));
        }
    };
    match decoded {
        Ok(Some(bytes)) => Ok(Bytes::from(bytes)),
        Ok(None) => Err(SidecarError::TooLarge { limit }),
        Err(error) => Err(SidecarError::UnreadableBody(format!(
            "cannot decompress the request body: {error}"
        ))),
    }
}

/// Reads at most `limit` bytes; `None` when there are more.
fn read_limited(reader: impl Read, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut out)?;
    Ok((out.len() <= limit).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_bytes_cover_what_was_read_and_are_given_back() {
        let counter = AtomicUsize::new(0);
        {
            let mut held = InFlight {
                counter: &counter,
                bytes: 0,
            };
            counter.fetch_add(10, Ordering::AcqRel);
            held.bytes = 10;
            held.cover(4);
            assert_eq!(counter.load(Ordering::Acquire), 10);
            held.cover(25);
            assert_eq!(counter.load(Ordering::Acquire), 25);
        }
        assert_eq!(counter.load(Ordering::Acquire), 0);
    }

    #[test]
    fn one_request_is_always_admitted_and_others_wait_for_the_budget() {
        let admission = Admission::new(&Limits {
            max_content_length: 100,
            upstream_max_content_length: 100,
            max_in_flight_bytes: 10,
        });
        let first = admission.reserve(50);
        assert!(first.is_some());
        assert!(admission.reserve(1).is_none());
        drop(first);
        let small = admission.reserve(4);
        assert!(small.is_some());
        assert!(admission.reserve(6).is_some());
    }
}
