//! Credentials a client's write lends to read back writes in doubt at a
//! crash or a takeover.
//!
//! Motivation: a live write in doubt is read back with the credentials of
//! the client that sent it. After a crash or a takeover those are gone;
//! on a secured cluster where the sidecar has no identity of its own
//! (no credentials in `--upstream`, no SigV4), its reads are refused, and
//! the placements in doubt would all get the crash rule, however many of
//! them the cluster holds.
//!
//! Design: only while a read-back waits ([`LentCredentials::borrow`]),
//! each write offers its `Authorization` ([`LentCredentials::offer`]); the
//! waiter takes the first one offered that it has not tried, and the
//! offer is forgotten as soon as nobody waits. Nothing is kept otherwise,
//! and nothing is written anywhere. The read asks only for the stamp field
//! of documents the sidecar itself wrote; a client whose credentials do
//! not reach them is refused as the sidecar was, and the next is tried.

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::HeaderMap;
use tokio::sync::watch;

use crate::upstream::credentials;

/// The latest credentials offered while someone waits for them.
#[derive(Debug)]
pub struct LentCredentials {
    waiting: AtomicUsize,
    offered: watch::Sender<Option<HeaderMap>>,
}

impl Default for LentCredentials {
    fn default() -> Self {
        LentCredentials {
            waiting: AtomicUsize::new(0),
            offered: watch::Sender::new(None),
        }
    }
}

impl LentCredentials {
    /// A client's write: its credentials, if a read-back waits for some.
    pub fn offer(&self, headers: &HeaderMap) {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return;
        }
        let lent = credentials(headers);
        if !lent.is_empty() {
            self.offered.send_replace(Some(lent));
        }
    }

    /// Waits for credentials offered by a write, other than every one in
    /// `tried`.
    pub async fn borrow(&self, tried: &[HeaderMap]) -> HeaderMap {
        let _waiting = Waiting::start(self);
        let mut offers = self.offered.subscribe();
        loop {
            if let Some(offered) = offers.borrow_and_update().clone()
                && !tried.contains(&offered)
            {
                return offered;
            }
            if offers.changed().await.is_err() {
                // The sender lives as long as `self`: unreachable, but
                // never a spin.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// One waiter counted while it waits; the last to stop forgets the offer.
struct Waiting<'a>(&'a LentCredentials);

impl<'a> Waiting<'a> {
    fn start(lent: &'a LentCredentials) -> Self {
        lent.waiting.fetch_add(1, Ordering::AcqRel);
        Waiting(lent)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.0.waiting.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.offered.send_replace(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, header};

    fn basic(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static(value));
        headers
    }

    #[tokio::test]
    async fn credentials_are_kept_only_while_a_read_back_waits_and_each_is_tried_once() {
        let lent = std::sync::Arc::new(LentCredentials::default());
        // Nobody waits: nothing is kept.
        lent.offer(&basic("Basic YTpi"));
        assert!(lent.offered.borrow().is_none());
        let waiter = {
            let lent = lent.clone();
            tokio::spawn(async move { lent.borrow(&[basic("Basic YTpi")]).await })
        };
        while lent.waiting.load(Ordering::Acquire) == 0 {
            tokio::task::yield_now().await;
        }
        lent.offer(&HeaderMap::new());
        lent.offer(&basic("Basic YTpi"));
        assert!(
            !waiter.is_finished(),
            "the same credentials again are not taken"
        );
        lent.offer(&basic("Basic Yzpk"));
        let borrowed = waiter.await.expect("borrowed");
        assert_eq!(borrowed, basic("Basic Yzpk"));
        assert!(
            lent.offered.borrow().is_none(),
            "forgotten once nobody waits"
        );
    }
}
