//! The engine's settings (`[engine]`, the flags and `NEARDUP_*` variables
//! of the same names), merged source over source, validated into an
//! engine's parts.

use std::path::PathBuf;

use serde::Deserialize;

use super::defaults;
use crate::confirm::ConfirmationConfig;
use crate::engine::Engine;
use crate::engine::side_file::SideStorage;
use crate::fingerprint::{
    FeatureMode, FingerprintConfig, Fingerprinter, NormalizeOptions, Weighting,
};
use crate::forest::{Forest, ForestConfig};
use crate::ledger::EngineParts;

/// Engine settings as they come from one source; `None` = not set there.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct EngineSettings {
    /// Fields to fingerprint, comma-separated; dotted paths reach into objects, `^B` boosts a field's weight [default: title^0.5,content]
    #[arg(long, env = "NEARDUP_FIELDS", value_delimiter = ',')]
    pub fields: Option<Vec<String>>,

    /// Field holding a document's headline, or `none`: a long text found by shared text (not by simhash) joins only if the headlines are similar too [default: title]
    #[arg(long, env = "NEARDUP_HEADLINE_FIELD")]
    pub headline_field: Option<String>,

    /// Minimum character-bigram Jaccard similarity of two headlines for such a join [default: 0.2]
    #[arg(long, env = "NEARDUP_MIN_HEADLINE_JACCARD")]
    pub min_headline_jaccard: Option<f64>,

    /// The same when both headlines are Chinese (most letters Han): a character bigram is most of a word there [default: 0.2]
    #[arg(long, env = "NEARDUP_MIN_HEADLINE_JACCARD_CHINESE")]
    pub min_headline_jaccard_chinese: Option<f64>,

    /// Minimum estimated character-5-gram Jaccard similarity for a long text to join a candidate found by shared text [default: 0.7]
    #[arg(long, env = "NEARDUP_MIN_LONG_JACCARD")]
    pub min_long_jaccard: Option<f64>,

    /// The same when both bodies are Chinese (most letters of their leads are Han characters): a character 5-gram spans more words in Chinese [default: 0.6]
    #[arg(long, env = "NEARDUP_MIN_LONG_JACCARD_CHINESE")]
    pub min_long_jaccard_chinese: Option<f64>,

    /// Also look short texts up by shingle overlap (MinHash LSH), not only by simhash distance [default: true]
    #[arg(long, env = "NEARDUP_SHORT_TEXT_SEARCH")]
    pub short_text_search: Option<bool>,

    /// Also look long texts up by shared text (bottom-k sketch), not only by simhash distance [default: true]
    #[arg(long, env = "NEARDUP_LONG_TEXT_SEARCH")]
    pub long_text_search: Option<bool>,

    /// Features of normal texts: whole, longest[:N] (N longest sentences of each field) or shingles[:W] [default: longest:1]
    #[arg(long, env = "NEARDUP_MODE")]
    #[serde(default, deserialize_with = "deserialize_parsed")]
    pub mode: Option<FeatureMode>,

    /// Features of short texts (see --short-chars) [default: shingles:3]
    #[arg(long, env = "NEARDUP_SHORT_MODE")]
    #[serde(default, deserialize_with = "deserialize_parsed")]
    pub short_mode: Option<FeatureMode>,

    /// Texts with fewer letters and digits than this are short: they use --short-mode and their near-duplicate candidates are confirmed by character-shingle Jaccard similarity [default: 100]
    #[arg(long, env = "NEARDUP_SHORT_CHARS")]
    pub short_chars: Option<usize>,

    /// Minimum character-bigram Jaccard similarity for a short text to join a candidate [default: 0.65]
    #[arg(long, env = "NEARDUP_MIN_SHORT_JACCARD")]
    pub min_short_jaccard: Option<f64>,

    /// A short text below --min-short-jaccard (but at 0.5 or more) still joins when this share of one text's bigrams lies inside the other's: the copy only added something [default: 0.9]
    #[arg(long, env = "NEARDUP_MIN_SHORT_CONTAINMENT")]
    pub min_short_containment: Option<f64>,

    /// Minimum character-shingle Jaccard similarity of a short text to the root of the class it joins [default: 0.5]
    #[arg(long, env = "NEARDUP_MIN_SHORT_ROOT_JACCARD")]
    pub min_short_root_jaccard: Option<f64>,

    /// Also compare short texts in reading order: at most 2 letters of the shorter (one more per 30) outside the common subsequence, at most one change inside (a word swapped, added or dropped; tags marked by punctuation at the edges aside), no numeral replaced by another [default: true]
    #[arg(long, env = "NEARDUP_SHORT_EDIT_CHECK")]
    pub short_edit_check: Option<bool>,

    /// With --short-edit-check, texts with fewer letters and digits than this join only texts with the same letters in the same order [default: 12]
    #[arg(long, env = "NEARDUP_MIN_FUZZY_CHARS")]
    pub min_fuzzy_chars: Option<usize>,

    /// Short texts that differ in a content word (a noun, verb, adjective, name or numeral replaced, or cut by an insertion; with --short-edit-check) stay apart, and so do long texts whose similar headlines swap one over different bodies; a swapped function word or an added whole word is allowed [default: true]
    #[arg(long, env = "NEARDUP_CONTENT_WORD_CHECK")]
    pub content_word_check: Option<bool>,

    /// Read short texts as one text plus what a repost put around it: comments and tags outside the shared span are free, a quarter of the shorter text may be cut, edits inside the span are allowed by its length but never of a name, place, time or figure (with --short-edit-check) [default: true]
    #[arg(long, env = "NEARDUP_REPOST_READING")]
    pub repost_reading: Option<bool>,

    /// Synonyms file (Elasticsearch / Solr format: one group per line, terms separated by commas; `a, b => c` is one group): with --content-word-check, a word swapped for a declared synonym is not a change [default: none]
    #[arg(long, env = "NEARDUP_SYNONYMS")]
    pub synonyms: Option<PathBuf>,

    /// With --content-word-check, a word swapped for one of the same sense in the built-in Chinese thesaurus (from the Chinese Open Wordnet) is not a change either; --synonyms adds to it [default: true]
    #[arg(long, env = "NEARDUP_BUILTIN_THESAURUS")]
    pub builtin_thesaurus: Option<bool>,

    /// Long texts within k join only when their headlines agree too (as for long texts found by shared text) [default: true]
    #[arg(long, env = "NEARDUP_NEIGHBOUR_HEADLINE_CHECK")]
    pub neighbour_headline_check: Option<bool>,

    /// Two long texts whose leads align except for a span swapped in place between shared text (a name, a street, a party: two notices of one form) stay apart; a typo, a credit line replaced at the start or an added passage is not such a span; and two long English bodies that put another person's capitalised name where the other names someone, anywhere in the body [default: true]
    #[arg(long, env = "NEARDUP_LEAD_SPAN_CHECK")]
    pub lead_span_check: Option<bool>,

    /// Two short texts that both have a headline and a body (a brief, a portal page whose body is a disclaimer or a "live coverage" line) join only when their headlines are one, unless both bodies tell their story by themselves [default: true]
    #[arg(long, env = "NEARDUP_SHORT_HEADLINE_CHECK")]
    pub short_headline_check: Option<bool>,

    /// Sentences with a phrase of the boilerplate genre (rights, disclaimers, paywalls and login walls, footers; Chinese and English) do not identify a story: the built-in prior that serves before the stream has taught anything [default: true]
    #[arg(long, env = "NEARDUP_BOILERPLATE_PRIOR")]
    pub boilerplate_prior: Option<bool>,

    /// Side records without a short text's shingles (taken back from its letters when first read): the side file about 40 % smaller (a node in 275 bytes against 466 on the overlap stream), placing about a tenth slower (recovery from a snapshot reads no shingles: the snapshot keeps the candidate indexes); stamps are the same. For a node whose side file outgrows its page cache [default: false]
    #[arg(long, env = "NEARDUP_LEAN_SIDE_RECORDS")]
    pub lean_side_records: Option<bool>,

    /// A sentence carried by this many classes is a site's boilerplate, learned from the stream: it no longer makes a body identify its story, so the headline decides; 0 learns nothing [default: 3]
    #[arg(long, env = "NEARDUP_COMMON_SENTENCE_CLASSES")]
    pub common_sentence_classes: Option<u8>,

    /// Long texts within k join only when their bodies share at least this estimated character-5-gram Jaccard similarity [default: 0.5]
    #[arg(long, env = "NEARDUP_MIN_NEIGHBOUR_JACCARD")]
    pub min_neighbour_jaccard: Option<f64>,

    /// A text whose fingerprint is already a node joins it only if the node's text confirms it (numbers, headline, short-text checks); otherwise it takes the nearest free fingerprint, one bit flipped [default: true]
    #[arg(long, env = "NEARDUP_CONFIRM_IDENTICAL")]
    pub confirm_identical: Option<bool>,

    /// Let short texts that name different places join one class (by default, different places mean different news)
    #[arg(long, env = "NEARDUP_IGNORE_PLACES", num_args = 0..=1, default_missing_value = "true")]
    pub ignore_places: Option<bool>,

    /// Let short texts with different numbers join one class (by default, different figures mean different news)
    #[arg(long, env = "NEARDUP_IGNORE_NUMBERS", num_args = 0..=1, default_missing_value = "true")]
    pub ignore_numbers: Option<bool>,

    /// Feature weights: tf (occurrences), logtf (1 + ln occurrences) or tfidf (occurrences × jieba IDF) [default: tfidf]
    #[arg(long, env = "NEARDUP_WEIGHTING")]
    #[serde(default, deserialize_with = "deserialize_parsed")]
    pub weighting: Option<Weighting>,

    /// Largest Hamming distance at which two fingerprints are near duplicates (k) [default: 3]
    #[arg(long, short = 'k', env = "NEARDUP_MAX_DISTANCE")]
    pub max_distance: Option<u32>,

    /// How long a class lives after it was last touched: e.g. 48h, 30m, 7d, or never [default: 48h]
    #[arg(long, env = "NEARDUP_RETENTION")]
    pub retention: Option<String>,

    /// Keep Traditional Chinese as it is instead of folding it to Simplified
    #[arg(long, env = "NEARDUP_KEEP_TRADITIONAL", num_args = 0..=1, default_missing_value = "true")]
    pub keep_traditional: Option<bool>,

    /// Keep URLs and @mentions in the features instead of dropping them
    #[arg(long, env = "NEARDUP_KEEP_LINKS", num_args = 0..=1, default_missing_value = "true")]
    pub keep_links: Option<bool>,

    /// Directory of the memory-mapped file that holds what confirmation reads of each node (off the heap; its files are unlinked as soon as they are created, and rebuilt from the state on a restart), or `memory` to keep it in the process's own memory [default: the system's temporary directory]
    #[arg(long, env = "NEARDUP_SIDE_DATA_DIR")]
    pub side_data_dir: Option<String>,
}

fn deserialize_parsed<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    let text = Option::<String>::deserialize(deserializer)?;
    text.map(|text| text.parse().map_err(serde::de::Error::custom))
        .transpose()
}

impl EngineSettings {
    /// Settings of `self`, with unset ones taken from `fallback`.
    pub fn or(self, fallback: EngineSettings) -> EngineSettings {
        EngineSettings {
            fields: self.fields.or(fallback.fields),
            short_text_search: self.short_text_search.or(fallback.short_text_search),
            long_text_search: self.long_text_search.or(fallback.long_text_search),
            headline_field: self.headline_field.or(fallback.headline_field),
            min_headline_jaccard: self.min_headline_jaccard.or(fallback.min_headline_jaccard),
            min_headline_jaccard_chinese: self
                .min_headline_jaccard_chinese
                .or(fallback.min_headline_jaccard_chinese),
            min_long_jaccard: self.min_long_jaccard.or(fallback.min_long_jaccard),
            min_long_jaccard_chinese: self
                .min_long_jaccard_chinese
                .or(fallback.min_long_jaccard_chinese),
            mode: self.mode.or(fallback.mode),
            short_mode: self.short_mode.or(fallback.short_mode),
            short_chars: self.short_chars.or(fallback.short_chars),
            min_short_jaccard: self.min_short_jaccard.or(fallback.min_short_jaccard),
            min_short_containment: self
                .min_short_containment
                .or(fallback.min_short_containment),
            min_short_root_jaccard: self
                .min_short_root_jaccard
                .or(fallback.min_short_root_jaccard),
            ignore_numbers: self.ignore_numbers.or(fallback.ignore_numbers),
            short_edit_check: self.short_edit_check.or(fallback.short_edit_check),
            min_fuzzy_chars: self.min_fuzzy_chars.or(fallback.min_fuzzy_chars),
            content_word_check: self.content_word_check.or(fallback.content_word_check),
            repost_reading: self.repost_reading.or(fallback.repost_reading),
            synonyms: self.synonyms.or(fallback.synonyms),
            builtin_thesaurus: self.builtin_thesaurus.or(fallback.builtin_thesaurus),
            confirm_identical: self.confirm_identical.or(fallback.confirm_identical),
            neighbour_headline_check: self
                .neighbour_headline_check
                .or(fallback.neighbour_headline_check),
            lead_span_check: self.lead_span_check.or(fallback.lead_span_check),
            short_headline_check: self.short_headline_check.or(fallback.short_headline_check),
            boilerplate_prior: self.boilerplate_prior.or(fallback.boilerplate_prior),
            lean_side_records: self.lean_side_records.or(fallback.lean_side_records),
            common_sentence_classes: self
                .common_sentence_classes
                .or(fallback.common_sentence_classes),
            min_neighbour_jaccard: self
                .min_neighbour_jaccard
                .or(fallback.min_neighbour_jaccard),
            ignore_places: self.ignore_places.or(fallback.ignore_places),
            weighting: self.weighting.or(fallback.weighting),
            max_distance: self.max_distance.or(fallback.max_distance),
            retention: self.retention.or(fallback.retention),
            keep_traditional: self.keep_traditional.or(fallback.keep_traditional),
            keep_links: self.keep_links.or(fallback.keep_links),
            side_data_dir: self.side_data_dir.or(fallback.side_data_dir),
        }
    }

    /// Where the engine keeps its nodes' side records.
    pub fn side_storage(&self) -> SideStorage {
        match self.side_data_dir.as_deref() {
            None | Some("") => SideStorage::default(),
            Some("memory") => SideStorage::Memory,
            Some(directory) => SideStorage::Directory(PathBuf::from(directory)),
        }
    }

    /// The fingerprint configuration these settings describe.
    pub fn fingerprint_config(&self) -> FingerprintConfig {
        let defaults = FingerprintConfig::default();
        FingerprintConfig {
            fields: self.fields.clone().unwrap_or(defaults.fields),
            headline_field: match self.headline_field.as_deref() {
                None => defaults.headline_field,
                Some("none" | "") => None,
                Some(field) => Some(field.to_string()),
            },
            mode: self.mode.unwrap_or(defaults.mode),
            short_text_mode: self.short_mode.unwrap_or(defaults.short_text_mode),
            short_text_chars: self.short_chars.unwrap_or(defaults.short_text_chars),
            weighting: self.weighting.unwrap_or(defaults.weighting),
            normalize: NormalizeOptions {
                fold_traditional: !self.keep_traditional.unwrap_or(false),
                strip_links_and_mentions: !self.keep_links.unwrap_or(false),
            },
            confirm_shingle_width: defaults.confirm_shingle_width,
        }
    }

    /// The validated pieces of an engine, before any state is put in it.
    pub fn parts(&self) -> anyhow::Result<EngineParts> {
        let fingerprinter = Fingerprinter::new(self.fingerprint_config())?;
        let defaults = ForestConfig::default();
        let retention = match &self.retention {
            None => defaults.retention,
            Some(text) => crate::units::parse_retention(text)?,
        };
        let forest_config = ForestConfig {
            max_distance: self.max_distance.unwrap_or(defaults.max_distance),
            retention,
        };
        // Validates the distance and retention.
        Forest::new(forest_config)?;
        let defaults = ConfirmationConfig::default();
        let confirmation = ConfirmationConfig {
            min_short_jaccard: self.min_short_jaccard.unwrap_or(defaults.min_short_jaccard),
            min_short_containment: self
                .min_short_containment
                .unwrap_or(defaults.min_short_containment),
            min_short_root_jaccard: self
                .min_short_root_jaccard
                .unwrap_or(defaults.min_short_root_jaccard),
            require_same_numbers: !self
                .ignore_numbers
                .unwrap_or(!defaults.require_same_numbers),
            require_same_places: !self.ignore_places.unwrap_or(!defaults.require_same_places),
            min_long_jaccard: self.min_long_jaccard.unwrap_or(defaults.min_long_jaccard),
            min_long_jaccard_chinese: self
                .min_long_jaccard_chinese
                .unwrap_or(defaults.min_long_jaccard_chinese),
            short_text_search: self.short_text_search.unwrap_or(defaults.short_text_search),
            long_text_search: self.long_text_search.unwrap_or(defaults.long_text_search),
            min_headline_jaccard: self
                .min_headline_jaccard
                .unwrap_or(defaults.min_headline_jaccard),
            min_headline_jaccard_chinese: self
                .min_headline_jaccard_chinese
                .unwrap_or(defaults.min_headline_jaccard_chinese),
            short_edit_check: self.short_edit_check.unwrap_or(defaults.short_edit_check),
            min_fuzzy_chars: self.min_fuzzy_chars.unwrap_or(defaults.min_fuzzy_chars),
            content_word_check: self
                .content_word_check
                .unwrap_or(defaults.content_word_check),
            repost_reading: self.repost_reading.unwrap_or(defaults.repost_reading),
            synonyms: {
                use crate::confirm::synonyms::{Synonyms, Thesaurus};
                let declared = match &self.synonyms {
                    None => Synonyms::empty(),
                    Some(path) => Synonyms::load(path, self.fingerprint_config().normalize)?,
                };
                let builtin_thesaurus = self
                    .builtin_thesaurus
                    .unwrap_or(defaults::DEFAULT_BUILTIN_THESAURUS);
                std::sync::Arc::new(if builtin_thesaurus {
                    declared.with_thesaurus(Thesaurus::builtin())
                } else {
                    declared
                })
            },
            confirm_identical_fingerprints: self
                .confirm_identical
                .unwrap_or(defaults.confirm_identical_fingerprints),
            neighbour_headline_check: self
                .neighbour_headline_check
                .unwrap_or(defaults.neighbour_headline_check),
            lead_span_check: self.lead_span_check.unwrap_or(defaults.lead_span_check),
            short_headline_check: self
                .short_headline_check
                .unwrap_or(defaults.short_headline_check),
            boilerplate_prior: self.boilerplate_prior.unwrap_or(defaults.boilerplate_prior),
            lean_side_records: self.lean_side_records.unwrap_or(defaults.lean_side_records),
            common_sentence_classes: self
                .common_sentence_classes
                .unwrap_or(defaults.common_sentence_classes),
            min_neighbour_jaccard: self
                .min_neighbour_jaccard
                .unwrap_or(defaults.min_neighbour_jaccard),
        };
        for (name, value) in [
            ("min_short_jaccard", confirmation.min_short_jaccard),
            (
                "min_short_root_jaccard",
                confirmation.min_short_root_jaccard,
            ),
            ("min_neighbour_jaccard", confirmation.min_neighbour_jaccard),
        ] {
            if !(0.0..=1.0).contains(&value) {
                anyhow::bail!("{name} must be between 0 and 1, got {value}");
            }
        }
        Ok(EngineParts {
            fingerprinter,
            forest: forest_config,
            confirmation,
            side_storage: self.side_storage(),
        })
    }

    /// An empty engine of these settings (see the module doc for why this
    /// one constructor lives here).
    pub fn build(&self) -> anyhow::Result<Engine> {
        Ok(self.parts()?.into_engine()?)
    }

    /// A short text that changes when the fingerprint settings change: kept
    /// in snapshots, so a restart under other settings is reported (old
    /// stamps would not match new fingerprints).
    pub fn fingerprint_digest(&self) -> String {
        let config = self.fingerprint_config();
        format!(
            "{:016x}",
            xxhash_rust::xxh3::xxh3_64(format!("{config:?}").as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigFile;

    #[test]
    fn flags_win_over_file_settings() {
        let flags = EngineSettings {
            max_distance: Some(2),
            ..EngineSettings::default()
        };
        let file: ConfigFile =
            toml::from_str("root_field = \"r\"\n[engine]\nmax_distance = 5\nmode = \"longest:2\"")
                .expect("valid toml");
        let merged = flags.or(file.engine);
        assert_eq!(merged.max_distance, Some(2));
        assert_eq!(
            merged.mode,
            Some(FeatureMode::LongestSentences { count: 2 })
        );
    }
}
