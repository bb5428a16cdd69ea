//! Admission and reading of a write's body: the in-flight budget, the
//! size limit and decompression.

use std::io::Read;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use bytes::Bytes;
use futures_util::StreamExt;

use super::super::{InFlight, Sidecar};
use crate::serve::errors::SidecarError;

/// Reserves in-flight bytes for the request and reads its body.
pub(super) async fn admit_and_read<'a>(
    sidecar: &'a Sidecar,
    headers: &HeaderMap,
    body: Body,
) -> Result<(InFlight<'a>, Bytes), SidecarError> {
    let Some(mut in_flight) = admit(sidecar, headers) else {
        return Err(SidecarError::TooManyRequests);
    };
    let body = read_body(sidecar, headers, body).await?;
    in_flight.cover(body.len());
    Ok((in_flight, body))
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
}

fn admit<'a>(sidecar: &'a Sidecar, headers: &HeaderMap) -> Option<InFlight<'a>> {
    let limit = sidecar.limits.max_content_length;
    let declared = declared_length(headers).map_or(limit.min(1 << 20), |length| {
        usize::try_from(length).unwrap_or(usize::MAX)
    });
    sidecar.admit(declared.min(limit))
}

/// Reads the whole body within `max_content_length`, decompressed.
async fn read_body(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, SidecarError> {
    let limit = sidecar.limits.max_content_length;
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
        Some("gzip" | "x-gzip") => {
            read_limited(flate2::read::MultiGzDecoder::new(buffer.as_slice()), limit)
        }
        Some("deflate") => read_limited(flate2::read::ZlibDecoder::new(buffer.as_slice()), limit),
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
