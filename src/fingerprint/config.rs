//! What decides a document's fingerprint: the fields read, the features
//! taken from their text (words of the whole text, of its longest
//! sentences, or character shingles), how much a feature weighs, and where
//! a text counts as short.
//!
//! Consequences: every setting here changes fingerprints. Snapshots keep a
//! digest of [`FingerprintConfig`]'s `Debug` form
//! (`config::EngineSettings::fingerprint_digest`), so a restart under other
//! settings is reported, and a field added here changes the digest too.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::normalize::NormalizeOptions;

/// Which features represent a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum FeatureMode {
    /// Every word of the text (the classic simhash).
    WholeText,
    /// The words of the `count` longest sentences only (seed 002 uses one,
    /// the "longest N sentences" trick of seed 003 uses three): edits in
    /// other paragraphs (an added note, a dropped paragraph) do not move the
    /// fingerprint.
    LongestSentences { count: usize },
    /// Overlapping character n-grams of the letters and digits, for short
    /// texts where word segmentation yields too few features.
    CharacterShingles { width: usize },
}

impl fmt::Display for FeatureMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureMode::WholeText => write!(f, "whole"),
            FeatureMode::LongestSentences { count } => write!(f, "longest:{count}"),
            FeatureMode::CharacterShingles { width } => write!(f, "shingles:{width}"),
        }
    }
}

impl FromStr for FeatureMode {
    type Err = String;

    /// `whole`, `longest[:N]` (default 3) or `shingles[:W]` (default 3).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, argument) = match text.split_once(':') {
            Some((name, argument)) => (name, Some(argument)),
            None => (text, None),
        };
        let parse_count = |default: usize| -> Result<usize, String> {
            match argument {
                None => Ok(default),
                Some(value) => match value.parse::<usize>() {
                    Ok(number) if (1..=64).contains(&number) => Ok(number),
                    _ => Err(format!(
                        "feature mode `{text}`: expected a number from 1 to 64 after `:`"
                    )),
                },
            }
        };
        match name {
            "whole" if argument.is_none() => Ok(FeatureMode::WholeText),
            "longest" => Ok(FeatureMode::LongestSentences {
                count: parse_count(3)?,
            }),
            "shingles" => Ok(FeatureMode::CharacterShingles {
                width: parse_count(3)?,
            }),
            _ => Err(format!(
                "unknown feature mode `{text}` (expected whole, longest[:N] or shingles[:W])"
            )),
        }
    }
}

/// How much one occurrence of a feature counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Weight = number of occurrences.
    TermFrequency,
    /// Weight = 1 + ln(occurrences): repeated words count, but less.
    LogTermFrequency,
    /// Weight = occurrences × inverse document frequency from jieba's IDF
    /// table (words it does not know, and non-Han words, get its median).
    /// The default (measured: docs/quality.md). Word features only: with `shingles`
    /// modes it falls back to TF.
    TermFrequencyInverseDocumentFrequency,
}

impl FromStr for Weighting {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "tf" => Ok(Weighting::TermFrequency),
            "logtf" => Ok(Weighting::LogTermFrequency),
            "tfidf" => Ok(Weighting::TermFrequencyInverseDocumentFrequency),
            _ => Err(format!(
                "unknown weighting `{text}` (expected tf, logtf or tfidf)"
            )),
        }
    }
}

/// Everything that decides a document's fingerprint.
#[derive(Debug, Clone, PartialEq)]
pub struct FingerprintConfig {
    /// JSON fields whose text is fingerprinted, in order; dotted paths reach
    /// into objects (`article.body`), and `^boost` scales the weight of a
    /// field's features (`title^0.5`).
    pub fields: Vec<String>,
    /// The field that is a document's headline (a title): long texts found
    /// by their shingle sketch (not by simhash) join only when their
    /// headlines are similar too, so one boilerplate body under different
    /// headlines stays apart. `None`: no such check.
    pub headline_field: Option<String>,
    /// Features of texts with at least `short_text_chars` letters and digits.
    pub mode: FeatureMode,
    /// Features of shorter texts.
    pub short_text_mode: FeatureMode,
    /// Texts with fewer letters and digits than this are "short": they use
    /// `short_text_mode` and their candidates are confirmed by shingle
    /// Jaccard similarity.
    pub short_text_chars: usize,
    pub weighting: Weighting,
    pub normalize: NormalizeOptions,
    /// Width of the character shingles used to confirm short texts.
    pub confirm_shingle_width: usize,
}

impl Default for FingerprintConfig {
    fn default() -> Self {
        FingerprintConfig {
            // Half weight for the title: reprints often change it, and at full
            // weight a changed title splits them; at no weight the same
            // boilerplate body under different titles merges (DEV: docs/quality.md).
            fields: vec!["title^0.5".to_string(), "content".to_string()],
            headline_field: Some("title".to_string()),
            // Measured on the benchmark (docs/quality.md): the
            // longest sentence of each field beats the whole text by a wide
            // margin on long reprints with edited paragraphs.
            mode: FeatureMode::LongestSentences { count: 1 },
            // Character shingles for short texts: order-sensitive, so two
            // questions with the same words in another order, or two
            // headlines that share their one rare word, do not collide on one
            // fingerprint (a collision would join them unconfirmed, rule 1).
            short_text_mode: FeatureMode::CharacterShingles { width: 3 },
            short_text_chars: 100,
            // Measured on DEV (docs/quality.md): TF·IDF slightly ahead of TF in both
            // precision and recall, and steadier when k or the mode change.
            weighting: Weighting::TermFrequencyInverseDocumentFrequency,
            normalize: NormalizeOptions::default(),
            confirm_shingle_width: 2,
        }
    }
}

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FingerprintConfigError {
    #[error("at least one field must be fingerprinted")]
    NoFields,
    #[error("{0}")]
    BadField(String),
    #[error("shingle width must be from 1 to 64, got {0}")]
    BadShingleWidth(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_modes_parse_and_print() {
        for text in ["whole", "longest:3", "shingles:4"] {
            let mode: FeatureMode = text.parse().expect("valid mode");
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!(
            "longest".parse::<FeatureMode>(),
            Ok(FeatureMode::LongestSentences { count: 3 })
        );
        assert!("longest:0".parse::<FeatureMode>().is_err());
        assert!("whole:2".parse::<FeatureMode>().is_err());
        assert!("nope".parse::<FeatureMode>().is_err());
    }
}
