//! Stage 2 of the data path: text → everything the engine needs to place
//! it, computed without the engine.
//!
//! Motivation: segmentation, simhash, shingles and sketches are most of the
//! cost of a document and need no shared state, so the sidecar runs them on
//! the blocking pool, in parallel, before it takes the engine's lock.
//!
//! Design: an [`Analyzer`] (cheap to clone) turns prepared text into an
//! [`Analysis`]: the exact hash, the simhash and the texts the node will
//! keep for confirmation ([`crate::confirm`]).
//!
//! Consequences: `long_text_search` must match the engine's, or long texts
//! lack the sketch its index expects.

use super::side_record::SideRecord;

/// How many times the short-text bound a long text may be and still keep
/// its short description (see [`Analyzer::describe`]).
pub const REPOST_COMPARABLE_FACTOR: usize = 3;
use crate::confirm::boilerplate::{SentenceKey, headline_told_by_body, read_body, read_body_with};
use crate::confirm::spans::KEPT_LEAD_CHARS;
use crate::confirm::{ConfirmationConfig, LongText, ShortText};
use crate::fingerprint::letters::letters_with_breaks;
use crate::fingerprint::normalize::is_letter_or_digit;
use crate::fingerprint::{Fingerprinter, PreparedText};
use crate::units::Fingerprint;

/// Everything the engine needs to place a text, computed without the
/// engine: the exact hash, the simhash and the side data the node will keep.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub(super) exact_hash: u64,
    pub(super) fingerprint: Fingerprint,
    pub(super) short_text: Option<ShortText>,
    pub(super) long_text: Option<LongText>,
    /// The body tells the story its headline names
    /// ([`crate::confirm::boilerplate::headline_told_by_body`]; true
    /// without a headline): read when the body turns out common, not kept.
    pub(super) headline_told_by_body: bool,
    /// A long text's body sentences counted in its identifying weight,
    /// for boilerplate learned from the stream (`super::commonness`): read
    /// when deciding, noted when placed, not kept.
    pub(super) body_sentences: Box<[SentenceKey]>,
}

impl Analysis {
    /// The text's own fingerprint (the exact fast path may still place the
    /// text on the node of an identical earlier text).
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Hash of the normalised text.
    pub fn exact_hash(&self) -> u64 {
        self.exact_hash
    }

    /// The side data a node of this text keeps, as a snapshot stores it
    /// (for a node rebuilt at `fingerprint` in the class of `root`).
    pub fn side_record(self, fingerprint: Fingerprint, root: Fingerprint) -> SideRecord {
        SideRecord {
            fingerprint,
            root,
            exact_hashes: vec![self.exact_hash],
            short_text: self.short_text,
            long_text: self.long_text,
        }
    }
}

/// Computes [`Analysis`]: the costly, lock-free part of placing a document
/// (segmentation, simhash, shingles, sketch). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Analyzer {
    pub(super) fingerprinter: Fingerprinter,
    pub(super) long_text_search: bool,
    /// Mid-length texts keep a short description too (the repost reading
    /// is on).
    pub(super) repost_comparable: bool,
    /// The built-in list of boilerplate phrases is read
    /// ([`ConfirmationConfig::boilerplate_prior`]).
    pub(super) boilerplate_prior: bool,
    /// Short texts are checked for shingles their letters give back, which
    /// their side records then leave out
    /// ([`ConfirmationConfig::lean_side_records`]).
    pub(super) lean_side_records: bool,
}

impl Analyzer {
    /// An analyzer for an engine confirming with `confirmation` (its
    /// searches decide what a text's node keeps).
    pub fn new(fingerprinter: Fingerprinter, confirmation: &ConfirmationConfig) -> Self {
        Analyzer {
            fingerprinter,
            long_text_search: confirmation.long_text_search,
            repost_comparable: confirmation.short_edit_check && confirmation.repost_reading,
            boilerplate_prior: confirmation.boilerplate_prior,
            lean_side_records: confirmation.lean_side_records,
        }
    }

    /// This analyzer with other fields (per-index settings): the same
    /// engine, so the same searches.
    pub fn with_fingerprinter(&self, fingerprinter: Fingerprinter) -> Self {
        Analyzer {
            fingerprinter,
            ..self.clone()
        }
    }

    pub fn long_text_search(&self) -> bool {
        self.long_text_search
    }

    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Analyses a JSON document; `None` when none of the configured fields
    /// holds text.
    pub fn analyze_document(&self, document: &serde_json::Value) -> Option<Analysis> {
        let prepared = self.fingerprinter.prepare_document(document)?;
        Some(self.analyze(&prepared))
    }

    /// [`Analyzer::analyze_document`], and the configured fields the
    /// document holds no text in (found in the same walk of its fields).
    pub fn analyze_document_noting_gaps(
        &self,
        document: &serde_json::Value,
    ) -> (Option<Analysis>, Vec<&str>) {
        let (prepared, gaps) = self.fingerprinter.prepare_document_noting_gaps(document);
        (prepared.map(|prepared| self.analyze(&prepared)), gaps)
    }

    /// Analyses prepared text.
    pub fn analyze(&self, prepared: &PreparedText) -> Analysis {
        let (short_text, long_text, headline_told_by_body, body_sentences) =
            self.describe(prepared);
        Analysis {
            exact_hash: prepared.exact_hash,
            fingerprint: self.fingerprinter.simhash(prepared),
            short_text,
            long_text,
            headline_told_by_body,
            body_sentences,
        }
    }

    /// What the node of this text will remember, and what its candidates are
    /// confirmed against: a short text's bigrams, numbers and places, or a
    /// long text's sketch, numbers, headline and lead.
    ///
    /// A long text of at most [`REPOST_COMPARABLE_FACTOR`] times the short
    /// bound keeps the short description too: a short post reposted with a
    /// comment, or a post cut to a short repost, crosses the bound, and the
    /// two meet only as short texts.
    /// Also whether the body tells its headline's story (see
    /// [`Analysis::headline_told_by_body`]).
    fn describe(&self, prepared: &PreparedText) -> Description {
        let fingerprinter = &self.fingerprinter;
        let short_text = || {
            let text = ShortText::new(
                fingerprinter.shingle_set(prepared).into_boxed_slice(),
                fingerprinter.letters(prepared).into(),
                fingerprinter.number_signature(prepared),
                fingerprinter.place_signature(prepared),
            );
            // Read here, off the engine's lock: the text is outlined
            // against each of its candidates.
            text.outline_letters();
            // Checked here too, off the lock: a lean side record leaves out
            // shingles its reader can take back from the letters.
            if self.lean_side_records {
                text.checking_shingles_against_letters(fingerprinter.shingle_width())
            } else {
                text
            }
        };
        if fingerprinter.is_short(prepared) {
            let short = match short_headline(fingerprinter, prepared) {
                Some((field, body_weight)) => short_text().with_headline(field, body_weight),
                None => short_text(),
            };
            return (Some(short), None, true, Box::default());
        }
        let repost_comparable = self.repost_comparable
            && prepared.char_count
                < fingerprinter.config().short_text_chars * REPOST_COMPARABLE_FACTOR;
        // Boilerplate sentences neither find candidates nor confirm a join:
        // the sketch is of the rest of the body when there is a rest.
        let body_text = fingerprinter.body_text(prepared);
        let headline = fingerprinter.headline(prepared);
        let headline_told =
            headline.is_none_or(|headline| headline_told_by_body(headline, &body_text));
        let body = read_body_with(&body_text, self.boilerplate_prior);
        let long_text = LongText {
            sketch: match (&body.identifying_text, self.long_text_search) {
                (_, false) => Box::default(),
                (Some(identifying_text), true) => {
                    fingerprinter.sketch_of(identifying_text).into_boxed_slice()
                }
                (None, true) => fingerprinter.body_sketch(prepared).into_boxed_slice(),
            },
            numbers: fingerprinter.body_number_set(prepared).into_boxed_slice(),
            name_slots: prepared.name_slots.clone().into_boxed_slice(),
            headline: headline.map(|headline| letters_with_breaks(headline).into()),
            lead: fingerprinter.body_lead(prepared, KEPT_LEAD_CHARS).into(),
            identifying_weight: body.weight,
        };
        (
            repost_comparable.then(short_text),
            Some(long_text),
            headline_told,
            body.sentences.into_boxed_slice(),
        )
    }
}

/// What [`Analyzer::describe`] finds: the short and long descriptions,
/// whether the body tells the headline, the body's sentence keys.
type Description = (
    Option<ShortText>,
    Option<LongText>,
    bool,
    Box<[SentenceKey]>,
);

/// A short text's headline field and its body's identifying weight, when
/// it has a headline over a body with letters: how much the body tells by
/// itself decides whether the headline must agree (see
/// `ShortText::headlines_allow`). The engine and `explain` read it here.
pub fn short_headline(fingerprinter: &Fingerprinter, prepared: &PreparedText) -> Option<(u8, u32)> {
    let field = u8::try_from(fingerprinter.headline_field()?).ok()?;
    fingerprinter.headline(prepared)?;
    let body_text = fingerprinter.body_text(prepared);
    body_text
        .chars()
        .any(is_letter_or_digit)
        .then(|| (field, read_body(&body_text).weight))
}
