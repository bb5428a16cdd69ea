//! The group's secret as a key: what members write to the cluster is
//! authenticated, and what they read is checked before it is believed.
//!
//! Motivation: the group keeps its lease, its log and its published
//! snapshot in ordinary indices. Anyone who can write them (a client
//! reaching the cluster directly, a stolen credential) could otherwise
//! append a record that standbys apply, or name a leader that members
//! forward clients' writes — with their `Authorization` headers — to.
//! A digest chain without a key stops accidents, not people.
//!
//! Design: HMAC-SHA256 (aws-lc-rs, already linked for TLS) keyed with the
//! secret every member reads from `--replica-secret-file`, truncated to
//! 128 bits and written as 32 hex digits. Each use has its own domain
//! prefix, so a tag of one kind never verifies as another: a record's
//! digest (`record`), the control document's `auth` (`control`: group
//! uuid, epoch, holder and its URL, renewals, lease), the snapshot
//! manifest's `auth` (`manifest`). Tags are compared in constant time.
//!
//! Consequences: a member without the secret cannot join (it can verify
//! nothing it reads); a forged or altered record, lease or manifest is
//! refused and logged, never applied or followed. Someone who can write
//! the group's indices can still stop the group (delete them, overwrite
//! the lease): availability against a cluster-level attacker is the
//! cluster's access control (docs/decisions.md, threat model).

use aws_lc_rs::{constant_time, hmac};
use serde_json::Value;

use crate::config::GroupSecret;

/// Bytes of a tag kept (of HMAC-SHA256's 32).
const TAG_BYTES: usize = 16;

/// The group's key.
#[derive(Clone)]
pub struct GroupKey(hmac::Key);

impl std::fmt::Debug for GroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GroupKey(<redacted>)")
    }
}

impl GroupKey {
    pub fn new(secret: &GroupSecret) -> GroupKey {
        GroupKey(hmac::Key::new(hmac::HMAC_SHA256, secret.bytes()))
    }

    /// The tag of `parts` in `domain`, as 32 hex digits. Each part is
    /// length-prefixed, so no two lists of parts share an input.
    pub fn tag(&self, domain: &str, parts: &[&[u8]]) -> String {
        let mut context = hmac::Context::with_key(&self.0);
        for part in std::iter::once(domain.as_bytes()).chain(parts.iter().copied()) {
            context.update(&(part.len() as u64).to_le_bytes());
            context.update(part);
        }
        let tag = context.sign();
        tag.as_ref()[..TAG_BYTES]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// Whether `presented` is the tag of `parts` in `domain`.
    pub fn verify(&self, domain: &str, parts: &[&[u8]], presented: &str) -> bool {
        let expected = self.tag(domain, parts);
        constant_time::verify_slices_are_equal(expected.as_bytes(), presented.as_bytes()).is_ok()
    }

    /// The control document's tag: what a member believes of the lease
    /// (who holds it, where it is reached, for which epoch and renewal).
    pub fn control_tag(&self, document: &Value) -> String {
        let parts = control_parts(document);
        let borrowed: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        self.tag("control", &borrowed)
    }

    /// Whether the control document carries its own tag in `auth`.
    pub fn control_is_authentic(&self, document: &Value) -> bool {
        let Some(presented) = document["auth"].as_str() else {
            return false;
        };
        let parts = control_parts(document);
        let borrowed: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        self.verify("control", &borrowed, presented)
    }
}

/// The fields of the control document the tag covers, as bytes.
fn control_parts(document: &Value) -> Vec<Vec<u8>> {
    let text = |field: &str| match &document[field] {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Null => b"\0null".to_vec(),
        other => other.to_string().into_bytes(),
    };
    let number = |field: &str| {
        document[field]
            .as_u64()
            .map_or_else(|| b"\0none".to_vec(), |n| n.to_le_bytes().to_vec())
    };
    vec![
        text("group_uuid"),
        number("epoch"),
        text("holder"),
        text("holder_url"),
        number("renewals"),
        number("lease_ms"),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key(secret: &str) -> GroupKey {
        GroupKey::new(&GroupSecret::new(secret.as_bytes().to_vec()))
    }

    #[test]
    fn tags_depend_on_the_key_the_domain_and_every_part() {
        let one = key("0123456789abcdef");
        let other = key("0123456789abcdeX");
        let tag = one.tag("record", &[b"a", b"bc"]);
        assert_eq!(tag.len(), 32);
        assert!(one.verify("record", &[b"a", b"bc"], &tag));
        assert!(!other.verify("record", &[b"a", b"bc"], &tag));
        assert!(!one.verify("control", &[b"a", b"bc"], &tag));
        assert!(
            !one.verify("record", &[b"ab", b"c"], &tag),
            "parts are framed"
        );
        assert!(!one.verify("record", &[b"a", b"bc"], "00"));
    }

    #[test]
    fn a_control_document_changed_in_any_field_the_tag_covers_is_refused() {
        let key = key("0123456789abcdef");
        let mut document = json!({
            "group_uuid": "u1", "epoch": 3, "holder": "a-1",
            "holder_url": "http://127.0.0.1:9201", "renewals": 7, "lease_ms": 5000,
        });
        document["auth"] = json!(key.control_tag(&document));
        assert!(key.control_is_authentic(&document));
        for (field, value) in [
            ("holder_url", json!("http://evil.example:80")),
            ("holder", json!("b-2")),
            ("epoch", json!(4)),
            ("holder", Value::Null),
        ] {
            let mut forged = document.clone();
            forged[field] = value;
            assert!(!key.control_is_authentic(&forged), "{field}");
        }
        let mut untagged = document.clone();
        untagged.as_object_mut().unwrap().remove("auth");
        assert!(!key.control_is_authentic(&untagged));
        // Fields outside the tag (timestamps for people) may change.
        let mut renewed_at = document.clone();
        renewed_at["renewed_at_ms"] = json!(1);
        assert!(key.control_is_authentic(&renewed_at));
    }
}
