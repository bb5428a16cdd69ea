//! Document text → 64-bit simhash (Charikar), plus the exact-text hash and the
//! character-shingle set used to confirm short-text candidates.
//!
//! Motivation: the forest compares documents only through their fingerprints,
//! so everything that should make two reprints "the same" has to happen here:
//! which fields are read, how text is normalised, which words count and how
//! much.
//!
//! Design: [`Fingerprinter::prepare`] extracts and normalises the text once
//! and hashes its letters and digits (the exact-duplicate fast path needs
//! nothing more); [`Fingerprinter::simhash`] segments and weights only when the
//! fast path missed. Features are words (jieba for Han runs, Unicode words
//! elsewhere) or character shingles, hashed with xxh3; weights are term
//! frequency or its logarithm. The simhash sets bit `i` when the weighted sum
//! of feature bit `i` (±weight) is positive.
//!
//! Around the [`Fingerprinter`]: its settings ([`FingerprintConfig`]), the
//! fields read ([`FieldSpec`]), normalisation, segmentation, the figures of
//! a text, and what a node keeps for confirmation besides the simhash:
//! [`letters`] for the in-order comparison, [`places`] and [`sketch`].
//!
//! Consequences: fingerprints depend on the configuration. Changing fields,
//! mode or weighting changes every fingerprint, so a forest must be rebuilt
//! (or left to expire) after such a change.

mod config;
mod fields;
pub mod letters;
pub mod normalize;
mod numbers;
pub mod places;
mod shingles;
pub mod sketch;
pub mod stopwords;
pub mod tokenize;

use xxhash_rust::xxh3::xxh3_64;

pub use config::{FeatureMode, FingerprintConfig, FingerprintConfigError, Weighting};
pub use fields::{
    FIELD_SEPARATOR, FieldSpec, extract_fields_text, extract_fields_text_noting_gaps,
    fields_without_text, values_at,
};
use letters::letters_with_breaks;
pub use normalize::{NormalizeOptions, normalize};
pub use numbers::is_chinese_numeral;
use numbers::numbers_in;
use places::place_signature_of;
use shingles::for_each_shingle;
pub use shingles::{
    shingle_hashes_of_chars, shingle_hashes_of_letters, shingle_set, shingle_set_of_chars,
    shingle_set_of_letters,
};

/// Text of one document, extracted and normalised, with its exact hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedText {
    /// Normalised text, fields separated by [`FIELD_SEPARATOR`].
    pub normalized: String,
    /// xxh3 of the letters and digits of the normalised text (with field
    /// separators): equal for verbatim reprints that differ only in
    /// whitespace, punctuation, width, case or script.
    pub exact_hash: u64,
    /// Number of letters and digits.
    pub char_count: usize,
    /// The text normalised without lowercasing, for texts short enough to
    /// be compared letter by letter (below [`SHORT_DESCRIPTION_FACTOR`]
    /// times the short-text bound): a capital tells a new sentence.
    pub cased: Option<String>,
    /// The body's name slots when the text is longer than a short text
    /// ([`crate::confirm::name_slots`]; read from the text as given, whose
    /// capitals the normalised text has lost), empty otherwise.
    pub name_slots: Vec<u32>,
}

/// How many times the short-text bound a text may be and still be compared
/// as a post (letter by letter) with a short repost of it.
pub const SHORT_DESCRIPTION_FACTOR: usize = 3;

/// Computes fingerprints. Cheap to clone; the segmenter is shared process-wide.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    config: FingerprintConfig,
    fields: Vec<FieldSpec>,
    /// Position of the headline field among `fields`.
    headline_position: Option<usize>,
}

impl Fingerprinter {
    pub fn new(config: FingerprintConfig) -> Result<Self, FingerprintConfigError> {
        if config.fields.is_empty() {
            return Err(FingerprintConfigError::NoFields);
        }
        let fields = config
            .fields
            .iter()
            .map(|field| field.parse::<FieldSpec>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(FingerprintConfigError::BadField)?;
        for mode in [config.mode, config.short_text_mode] {
            if let FeatureMode::CharacterShingles { width }
            | FeatureMode::LongestSentences { count: width } = mode
                && !(1..=64).contains(&width)
            {
                return Err(FingerprintConfigError::BadShingleWidth(width));
            }
        }
        if !(1..=64).contains(&config.confirm_shingle_width) {
            return Err(FingerprintConfigError::BadShingleWidth(
                config.confirm_shingle_width,
            ));
        }
        tokenize::warm_up();
        let headline_position = config
            .headline_field
            .as_ref()
            .and_then(|headline| fields.iter().position(|field| &field.path == headline));
        Ok(Fingerprinter {
            config,
            fields,
            headline_position,
        })
    }

    pub fn config(&self) -> &FingerprintConfig {
        &self.config
    }

    /// The configured fields `document` holds no text in (see
    /// [`fields_without_text`]).
    pub fn fields_without_text(&self, document: &serde_json::Value) -> Vec<&str> {
        fields_without_text(document, &self.fields)
    }

    /// The configured fields, as given (`title^0.5`, `content`).
    pub fn field_paths(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|field| field.path.as_str())
    }

    /// Extract the configured fields of `document` and prepare their text.
    /// `None` when no configured field holds any text.
    pub fn prepare_document(&self, document: &serde_json::Value) -> Option<PreparedText> {
        self.prepare_document_noting_gaps(document).0
    }

    /// [`Fingerprinter::prepare_document`], and the configured fields the
    /// document holds no text in, from the same walk.
    pub fn prepare_document_noting_gaps(
        &self,
        document: &serde_json::Value,
    ) -> (Option<PreparedText>, Vec<&str>) {
        let (text, gaps) = extract_fields_text_noting_gaps(document, &self.fields);
        // Punctuation, emoji or zero-width characters alone are no text: they
        // would all share one fingerprint and so one class.
        let prepared = text
            .map(|text| self.prepare(&text))
            .filter(|prepared| prepared.char_count > 0);
        (prepared, gaps)
    }

    /// Normalise raw text and compute its exact hash.
    pub fn prepare(&self, text: &str) -> PreparedText {
        let normalized = normalize(text, self.config.normalize);
        let mut compact = String::with_capacity(normalized.len());
        let mut char_count = 0;
        for c in normalized.chars() {
            if normalize::is_letter_or_digit(c) {
                compact.push(c);
                char_count += 1;
            } else if c == FIELD_SEPARATOR {
                compact.push(c);
            }
        }
        let cased = (char_count < self.config.short_text_chars * SHORT_DESCRIPTION_FACTOR)
            .then(|| normalize::normalize_keeping_case(text, self.config.normalize));
        let name_slots = if char_count < self.config.short_text_chars {
            Vec::new()
        } else {
            crate::confirm::name_slots::name_slots(
                text.split(FIELD_SEPARATOR)
                    .enumerate()
                    .filter(|&(position, _)| Some(position) != self.headline_position)
                    .flat_map(|(_, field)| field.lines()),
            )
        };
        PreparedText {
            exact_hash: xxh3_64(compact.as_bytes()),
            normalized,
            char_count,
            cased,
            name_slots,
        }
    }

    /// True when the text is short enough to use the short-text mode and
    /// shingle confirmation.
    pub fn is_short(&self, prepared: &PreparedText) -> bool {
        prepared.char_count < self.config.short_text_chars
    }

    /// The 64-bit simhash of prepared text.
    pub fn simhash(&self, prepared: &PreparedText) -> u64 {
        let mode = if self.is_short(prepared) {
            self.config.short_text_mode
        } else {
            self.config.mode
        };
        let mut bit_sums = BitSums::default();
        let mut feature_hashes = Vec::with_capacity(prepared.normalized.len() / 3);
        let boosts = self
            .fields
            .iter()
            .map(|field| field.boost)
            .chain(std::iter::repeat(1.0));
        let weighting = self.config.weighting;
        for (field_text, boost) in prepared.normalized.split(FIELD_SEPARATOR).zip(boosts) {
            if weighting == Weighting::TermFrequencyInverseDocumentFrequency
                && !matches!(mode, FeatureMode::CharacterShingles { .. })
            {
                let mut add_weighted = |word: &str, weight: f64| {
                    bit_sums.add(xxh3_64(word.as_bytes()), weight * boost)
                };
                match mode {
                    FeatureMode::LongestSentences { count } => {
                        for sentence in tokenize::longest_sentences(field_text, count) {
                            tokenize::for_each_weighted_word(sentence, &mut add_weighted);
                        }
                    }
                    _ => tokenize::for_each_weighted_word(field_text, &mut add_weighted),
                }
                continue;
            }
            feature_hashes.clear();
            let mut push_word = |word: &str| feature_hashes.push(xxh3_64(word.as_bytes()));
            match mode {
                FeatureMode::WholeText => tokenize::for_each_word(field_text, push_word),
                FeatureMode::LongestSentences { count } => {
                    // Per field, so a title is never crowded out by the body.
                    for sentence in tokenize::longest_sentences(field_text, count) {
                        tokenize::for_each_word(sentence, &mut push_word);
                    }
                }
                FeatureMode::CharacterShingles { width } => {
                    for_each_shingle(field_text, width, |shingle| {
                        feature_hashes.push(xxh3_64(shingle))
                    })
                }
            }
            bit_sums.add_field(&mut feature_hashes, boost, self.config.weighting);
        }
        bit_sums.fingerprint()
    }

    /// Sorted, de-duplicated 32-bit hashes of the character shingles of
    /// `prepared` (width `confirm_shingle_width`), for Jaccard confirmation.
    pub fn shingle_set(&self, prepared: &PreparedText) -> Vec<u32> {
        self.shingle_set_of(&prepared.normalized)
    }

    /// The letters and digits of prepared text, fields separated by
    /// [`FIELD_SEPARATOR`], with one space where punctuation or whitespace
    /// stood between two of them (where words may break).
    pub fn letters(&self, prepared: &PreparedText) -> String {
        letters_with_breaks(prepared.cased.as_deref().unwrap_or(&prepared.normalized))
    }

    /// [`Fingerprinter::shingle_set`] of normalised text.
    pub fn shingle_set_of(&self, normalized: &str) -> Vec<u32> {
        shingle_set(normalized, self.config.confirm_shingle_width)
    }

    /// The width of the shingles [`Fingerprinter::shingle_set`] takes.
    pub fn shingle_width(&self) -> usize {
        self.config.confirm_shingle_width
    }

    /// Hash of the numbers in the text (runs of digits, with inner `.` or
    /// `,`), as a sorted multiset: two texts that report different figures
    /// are different news however similar their words. 0 when there are none.
    pub fn number_signature(&self, prepared: &PreparedText) -> u64 {
        let mut numbers = numbers_in(&prepared.normalized);
        if numbers.is_empty() {
            return 0;
        }
        numbers.sort_unstable();
        xxh3_64(numbers.join(" ").as_bytes())
    }

    /// The distinct numbers of the body (every field but the headline), as
    /// sorted 32-bit hashes.
    pub fn body_number_set(&self, prepared: &PreparedText) -> Vec<u32> {
        let mut hashes = Vec::new();
        for (position, part) in prepared.normalized.split(FIELD_SEPARATOR).enumerate() {
            if Some(position) != self.headline_position {
                hashes.extend(
                    numbers_in(part)
                        .iter()
                        .map(|number| xxh3_64(number.as_bytes()) as u32),
                );
            }
        }
        hashes.sort_unstable();
        hashes.dedup();
        hashes
    }

    /// The place names of the text as a set ([`places`]): different places
    /// tell different news apart however similar the rest; 0 when it names
    /// none.
    pub fn place_signature(&self, prepared: &PreparedText) -> u64 {
        place_signature_of(&prepared.normalized)
    }

    /// The normalised headline of a prepared document, when it has one.
    /// Which field is the headline, when one is configured and present.
    pub fn headline_field(&self) -> Option<usize> {
        self.headline_position
    }

    pub fn headline<'text>(&self, prepared: &'text PreparedText) -> Option<&'text str> {
        let position = self.headline_position?;
        let headline = prepared.normalized.split(FIELD_SEPARATOR).nth(position)?;
        headline
            .chars()
            .any(normalize::is_letter_or_digit)
            .then_some(headline)
    }

    /// The first `chars` letters and digits of the body (every field but the
    /// headline), for recognising a headline taken from another copy's lead.
    pub fn body_lead(&self, prepared: &PreparedText, chars: usize) -> String {
        prepared
            .normalized
            .split(FIELD_SEPARATOR)
            .enumerate()
            .filter(|(position, _)| Some(*position) != self.headline_position)
            .flat_map(|(_, part)| part.chars())
            .filter(|&c| normalize::is_letter_or_digit(c))
            .take(chars)
            .collect()
    }

    /// Every field but the headline, normalised, separated by
    /// [`FIELD_SEPARATOR`].
    pub fn body_text(&self, prepared: &PreparedText) -> String {
        let mut body = String::with_capacity(prepared.normalized.len());
        for (position, part) in prepared.normalized.split(FIELD_SEPARATOR).enumerate() {
            if Some(position) != self.headline_position {
                if !body.is_empty() {
                    body.push(FIELD_SEPARATOR);
                }
                body.push_str(part);
            }
        }
        body
    }

    /// Bottom-k sketch of the character 5-grams of `body` (fields separated
    /// by [`FIELD_SEPARATOR`]): [`Fingerprinter::body_sketch`] of a body
    /// that [`crate::confirm::boilerplate`] cut.
    pub fn sketch_of(&self, body: &str) -> Vec<u32> {
        let mut hashes = Vec::with_capacity(body.len());
        for_each_shingle(body, 5, |shingle| hashes.push(xxh3_64(shingle) as u32));
        sketch::bottom_k(hashes, sketch::SKETCH_SIZE)
    }

    /// Bottom-k sketch ([`sketch`]) of the character 5-grams of every
    /// field but the headline.
    pub fn body_sketch(&self, prepared: &PreparedText) -> Vec<u32> {
        let mut hashes = Vec::with_capacity(prepared.char_count);
        for (position, part) in prepared.normalized.split(FIELD_SEPARATOR).enumerate() {
            if Some(position) != self.headline_position {
                for_each_shingle(part, 5, |shingle| hashes.push(xxh3_64(shingle) as u32));
            }
        }
        sketch::bottom_k(hashes, sketch::SKETCH_SIZE)
    }

    /// Fingerprint of raw text (not a JSON document).
    pub fn fingerprint_text(&self, text: &str) -> u64 {
        self.simhash(&self.prepare(text))
    }
}

/// Call `on_shingle` with (the UTF-8 bytes of) every run of `width`
/// consecutive letters/digits of each field (no shingle spans two fields).
/// A field shorter than `width` yields itself as its only shingle.
/// Charikar's accumulator: per bit, the sum of `+weight` for features whose
/// hash has the bit set and `-weight` for the others.
struct BitSums([f64; 64]);

impl Default for BitSums {
    fn default() -> Self {
        BitSums([0.0; 64])
    }
}

impl BitSums {
    fn add(&mut self, hash: u64, weight: f64) {
        let weight_bits = weight.to_bits();
        for (bit, sum) in self.0.iter_mut().enumerate() {
            // `weight` when the bit is set, else `-weight` (the sign bit
            // flipped: exactly what `sum -= weight` adds), without a branch.
            let sign = (!hash >> bit & 1) << 63;
            *sum += f64::from_bits(weight_bits ^ sign);
        }
    }

    /// Add one field's features (one hash per occurrence), scaled by `boost`.
    fn add_field(&mut self, feature_hashes: &mut [u64], boost: f64, weighting: Weighting) {
        if boost == 0.0 {
            return;
        }
        match weighting {
            // TF-IDF reaches here only for shingle features: plain TF.
            Weighting::TermFrequency | Weighting::TermFrequencyInverseDocumentFrequency => {
                feature_hashes
                    .iter()
                    .for_each(|&hash| self.add(hash, boost))
            }
            Weighting::LogTermFrequency => {
                feature_hashes.sort_unstable();
                for run in feature_hashes.chunk_by(|a, b| a == b) {
                    self.add(run[0], boost * (1.0 + (run.len() as f64).ln()));
                }
            }
        }
    }

    /// Bit `i` is set when sum `i` is positive.
    fn fingerprint(&self) -> u64 {
        self.0
            .iter()
            .enumerate()
            .fold(0u64, |fingerprint, (bit, &sum)| {
                if sum > 0.0 {
                    fingerprint | 1 << bit
                } else {
                    fingerprint
                }
            })
    }
}

/// Charikar simhash of one list of feature hashes (one entry per occurrence).
#[cfg(test)]
fn simhash_of_features(feature_hashes: &mut [u64], weighting: Weighting) -> u64 {
    let mut bit_sums = BitSums::default();
    bit_sums.add_field(feature_hashes, 1.0, weighting);
    bit_sums.fingerprint()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::measures::jaccard;

    fn fingerprinter() -> Fingerprinter {
        Fingerprinter::new(FingerprintConfig::default()).expect("default config is valid")
    }

    #[test]
    fn width_case_script_and_punctuation_do_not_change_the_fingerprint() {
        let f = fingerprinter();
        let original = f.fingerprint_text("国务院召开常务会议，部署经济工作。GDP增长5%");
        let variant = f.fingerprint_text("國務院召開常務會議, 部署經濟工作!ＧＤＰ增長５％");
        assert_eq!(original, variant);
    }

    #[test]
    fn different_texts_get_different_fingerprints() {
        let f = fingerprinter();
        assert_ne!(
            f.fingerprint_text("打开蓝牙设置"),
            f.fingerprint_text("今天的天气非常好适合出门散步")
        );
    }

    #[test]
    fn exact_hash_ignores_spacing_and_keeps_field_boundaries() {
        let f = fingerprinter();
        assert_eq!(
            f.prepare("a  b, c").exact_hash,
            f.prepare("ab c").exact_hash
        );
        let split_one = format!("ab{FIELD_SEPARATOR}c");
        let split_two = format!("a{FIELD_SEPARATOR}bc");
        assert_ne!(
            f.prepare(&split_one).exact_hash,
            f.prepare(&split_two).exact_hash
        );
    }

    #[test]
    fn simhash_of_nothing_is_zero_and_one_feature_is_its_hash() {
        assert_eq!(simhash_of_features(&mut [], Weighting::TermFrequency), 0);
        let hash = xxh3_64(b"word");
        assert_eq!(
            simhash_of_features(&mut [hash], Weighting::TermFrequency),
            hash
        );
        assert_eq!(
            simhash_of_features(&mut [hash, hash], Weighting::LogTermFrequency),
            hash
        );
    }

    #[test]
    fn heavier_feature_wins_each_bit() {
        let (a, b) = (0b1010u64, 0b0110u64);
        // a twice, b once: every bit follows a.
        assert_eq!(
            simhash_of_features(&mut [a, a, b], Weighting::TermFrequency),
            a
        );
    }

    #[test]
    fn longest_sentence_mode_ignores_an_added_short_paragraph() {
        let config = FingerprintConfig {
            mode: FeatureMode::LongestSentences { count: 1 },
            short_text_chars: 0,
            ..FingerprintConfig::default()
        };
        let f = Fingerprinter::new(config).expect("valid");
        let body = "今天上午国务院召开常务会议研究部署进一步推动经济稳定恢复的政策措施。会议结束。";
        let with_note = format!("编者按：转载。\n{body}");
        assert_eq!(f.fingerprint_text(body), f.fingerprint_text(&with_note));
    }

    #[test]
    fn shingles_and_jaccard() {
        let f = fingerprinter();
        let a = f.shingle_set(&f.prepare("abcd"));
        let b = f.shingle_set(&f.prepare("abce"));
        assert_eq!(a.len(), 3);
        assert!((jaccard(&a, &b) - 0.5).abs() < 1e-9);
        assert_eq!(jaccard(&a, &a), 1.0);
        assert_eq!(f.shingle_set(&f.prepare("a")).len(), 1);
        assert!(f.shingle_set(&f.prepare("!!")).is_empty());
    }

    #[test]
    fn field_boost_scales_a_fields_influence() {
        let with_fields = |fields: &[&str]| {
            let config = FingerprintConfig {
                fields: fields.iter().map(|field| field.to_string()).collect(),
                ..FingerprintConfig::default()
            };
            Fingerprinter::new(config).expect("valid")
        };
        let body = "城市更新工作推进会今天召开，会议总结了老旧小区改造和背街小巷整治的进展。";
        let one = serde_json::json!({"title": "第一个完全不同的标题", "content": body});
        let two = serde_json::json!({"title": "另一条毫无关系的新闻", "content": body});
        let simhash =
            |f: &Fingerprinter, document| f.simhash(&f.prepare_document(document).expect("text"));
        let ignored = with_fields(&["title^0", "content"]);
        assert_eq!(simhash(&ignored, &one), simhash(&ignored, &two));
        let counted = with_fields(&["title", "content"]);
        assert_ne!(simhash(&counted, &one), simhash(&counted, &two));
        // The exact hash always covers every field.
        assert_ne!(
            ignored.prepare_document(&one).map(|p| p.exact_hash),
            ignored.prepare_document(&two).map(|p| p.exact_hash)
        );
    }

    #[test]
    fn numbers_are_compared_as_a_multiset() {
        let f = fingerprinter();
        let signature = |text: &str| f.number_signature(&f.prepare(text));
        assert_eq!(signature("no figures here"), 0);
        assert_eq!(
            signature("up 3.5% to 1,200 tonnes"),
            signature("to １,２００ tonnes, up 3.5%")
        );
        assert_ne!(
            signature("up 3.5% to 1,200 tonnes"),
            signature("up 3.6% to 1,200 tonnes")
        );
        assert_ne!(signature("第1季度"), signature("第2季度"));
        // Chinese numerals: runs of two or more, or one after 第.
        assert_ne!(signature("神舟十五号发射"), signature("神舟十六号发射"));
        assert_ne!(signature("举行第八次会议"), signature("举行第七次会议"));
        assert_ne!(
            signature("二〇二三年新年贺词"),
            signature("二〇二四年新年贺词")
        );
        assert_eq!(signature("统一部署一些工作"), 0);
        // A lone numeral before a counter of sessions, ranks or time.
        assert_ne!(
            signature("十四届一次会议开幕"),
            signature("十四届二次会议开幕")
        );
        assert_ne!(signature("连续三年增长"), signature("连续两年增长"));
        assert_eq!(signature("再一次统一认识"), signature("一次统一认识"));
    }

    #[test]
    fn digits_with_a_chinese_magnitude_are_the_number_they_make() {
        let f = fingerprinter();
        let signature = |text: &str| f.number_signature(&f.prepare(text));
        let same = |a: &str, b: &str| assert_eq!(signature(a), signature(b), "{a} / {b}");
        same("募得善款1亿6千万元", "募得善款1亿6000万元");
        same("参观者超过3千人", "参观者超过3000人");
        same("参观者超过3 千人", "参观者超过3000人");
        same("全长5百米", "全长500米");
        assert_ne!(
            signature("募得善款1亿6千万元"),
            signature("募得善款1亿7000万元")
        );
        assert_ne!(signature("参观者超过3千人"), signature("参观者超过300人"));
    }

    #[test]
    fn english_number_words_and_mixed_fractions_are_numbers() {
        let f = fingerprinter();
        let signature = |text: &str| f.number_signature(&f.prepare(text));
        assert_ne!(
            signature("arranged two billion dlrs of repurchases"),
            signature("arranged one billion dlrs of repurchases")
        );
        assert_eq!(signature("six pct"), signature("6 pct"));
        // 6-1/4 is one figure, not 6, 1 and 4; a range stays two numbers.
        assert_ne!(
            signature("trading at 6-1/4 pct"),
            signature("trading at 6 pct")
        );
        assert_ne!(
            signature("trading at 6-1/4 pct"),
            signature("trading at 6-1/8 pct")
        );
        assert_eq!(
            signature("the March 11-20 period"),
            signature("period 20, March 11")
        );
        assert_eq!(signature("someone done often"), 0);
    }

    #[test]
    fn body_lead_skips_the_headline_and_punctuation() {
        let f = fingerprinter();
        let document = serde_json::json!({"title": "标题", "content": "正文，第一句。第二句"});
        let prepared = f.prepare_document(&document).expect("text");
        assert_eq!(f.body_lead(&prepared, 5), "正文第一句");
    }

    #[test]
    fn invalid_configs_are_rejected() {
        let no_fields = FingerprintConfig {
            fields: vec![],
            ..FingerprintConfig::default()
        };
        assert_eq!(
            Fingerprinter::new(no_fields).err(),
            Some(FingerprintConfigError::NoFields)
        );
        let bad_path = FingerprintConfig {
            fields: vec!["a..b".into()],
            ..FingerprintConfig::default()
        };
        assert!(matches!(
            Fingerprinter::new(bad_path),
            Err(FingerprintConfigError::BadField(_))
        ));
    }
}
