//! Why two texts are one story or two: the rule that decided, the figures
//! it weighed, and where the texts differ ([`diff`]).
//!
//! # Motivation
//!
//! Whoever runs neardup has to trust its classes and tune its settings, and
//! an editor checking "N similar" wants to see what a copy changed. The
//! engine answers one question (which class?) and keeps its reasons to
//! itself; the Explorer pages and `POST /_neardup/fingerprint` need them
//! spelled out for one pair of texts.
//!
//! # Design
//!
//! - The decision is not derived a second time: [`explain`] places the two
//!   texts, first then second, in a throwaway [`Engine`] with the live
//!   engine's settings and reads where the second one went. The explanation
//!   cannot disagree with the engine, whatever its rules become. The
//!   [`Rule`] is read from that placement (exact fast path, same
//!   fingerprint, simhash neighbour, or one of the two extra searches).
//! - The figures are the measures confirmation weighs, each with the
//!   setting it is held against: Hamming distance, character-bigram Jaccard
//!   and containment, the numbers, the place names and the in-order edit
//!   check for short texts; the body's estimated 5-gram Jaccard, the number
//!   sets and the headlines for long texts. A figure's pass mark is a
//!   reading aid computed from the same settings; the headline's is left
//!   open because that check has parts no single figure shows.
//!
//! # Consequences
//!
//! - The decision is for the pair alone. In the forest a member may have
//!   joined through another member (a leaf within `k` of it), so a member
//!   of a class can be "kept apart" from its root here; the Explorer says so.
//! - One explanation costs two fingerprintings (segmentation included) and
//!   an alignment: milliseconds. Callers bound how many they ask for.

mod diff;

use serde::Serialize;

use crate::confirm::edits;
use crate::confirm::measures::{
    bigram_jaccard, containment, jaccard, one_contains_the_other, shared_count,
};
use crate::confirm::spans::{KEPT_LEAD_CHARS, lead_swaps_a_span};
use crate::confirm::{
    ConfirmationConfig, LEAD_CHARS, MIN_REPOST_CONTAINMENT, ShortText, allowed_content_changes,
    allowed_cut_chars, allowed_unmatched_chars, edits_allow_join, headline_bar, read_as_repost,
    repost_allows_join, short_texts_close, sketch_join_bar,
};
use crate::engine::Engine;
use crate::fingerprint::letters::letters_with_breaks;
use crate::fingerprint::places::places_compatible;
use crate::fingerprint::sketch::{SKETCH_SIZE, estimate_jaccard};
use crate::fingerprint::{Fingerprinter, PreparedText};
use crate::forest::{Forest, ForestConfig, ForestError, Placement};
use crate::units::hamming_distance;
pub use diff::{Span, diff};

/// How the second text of a pair was placed against the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The same letters and digits once normalised: the exact fast path.
    SameText,
    /// The same simhash, and the texts confirm it (SPEC §3 rule 1).
    SameFingerprint,
    /// A simhash within `k`, confirmed by the texts (rule 3).
    SimhashNeighbour,
    /// A short text found by its character shingles, confirmed.
    ShortTextShingles,
    /// A long text found by its body sketch, confirmed.
    LongTextSketch,
    /// Not joined: the second text starts a class of its own.
    KeptApart,
}

impl Rule {
    /// One line for people.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::SameText => "same text once normalised (exact fast path)",
            Rule::SameFingerprint => "same simhash, confirmed by the texts",
            Rule::SimhashNeighbour => "simhash within k, confirmed by the texts",
            Rule::ShortTextShingles => "short text found by its character shingles, confirmed",
            Rule::LongTextSketch => "long text found by its body sketch, confirmed",
            Rule::KeptApart => "kept apart: a check refused, or nothing found it",
        }
    }
}

/// One measure confirmation weighs, against its setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// Stable name: `hamming_distance`, `same_text`, `jaccard`,
    /// `containment`, `numbers`, `places`, `edits`, `body_jaccard`,
    /// `headline`, `kinds`.
    pub name: &'static str,
    /// The measured value, as text.
    pub value: String,
    /// What the engine asks of it, with the setting's value.
    pub requirement: Requirement,
    /// Whether the value meets the requirement; `None` for figures that
    /// only inform.
    pub passes: Option<bool>,
}

/// A figure's requirement, in English (what the JSON answer carries: it
/// names settings) and in Chinese (for the Explorer's `?lang=zh`).
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub english: String,
    pub chinese: String,
}

impl Requirement {
    fn new(english: String, chinese: String) -> Self {
        Requirement { english, chinese }
    }
}

impl Explanation {
    /// The requirements given in Chinese where the answer is serialised
    /// (the Explorer's compare box under `?lang=zh`).
    pub fn requirements_in_chinese(&mut self) {
        for figure in &mut self.figures {
            figure.requirement.english = figure.requirement.chinese.clone();
        }
    }
}

impl Serialize for Requirement {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.english)
    }
}

/// Why the second text of a pair joins the first one's class, or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub joins: bool,
    pub rule: Rule,
    /// [`Rule::describe`].
    pub reason: &'static str,
    pub figures: Vec<Figure>,
}

/// Places `first`, then `second`, in an engine of their own with these
/// settings and explains where `second` went.
///
/// # Errors
///
/// [`ForestError`] when `max_distance` is not one the index supports.
pub fn explain(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    max_distance: u32,
    first: &PreparedText,
    second: &PreparedText,
) -> Result<Explanation, ForestError> {
    let forest = Forest::new(ForestConfig {
        max_distance,
        retention: None,
    })?;
    let mut engine = Engine::new(fingerprinter.clone(), forest, confirmation.clone());
    let first_placed = engine.add_prepared(first, 0);
    let second_placed = engine.add_prepared(second, 1);
    let joins = second_placed.root == first_placed.root;
    let rule = if !joins {
        Rule::KeptApart
    } else if second_placed.exact_hit {
        Rule::SameText
    } else if second_placed.placement == Placement::ExistingNode {
        Rule::SameFingerprint
    } else if hamming_distance(first_placed.fingerprint, second_placed.fingerprint) <= max_distance
    {
        Rule::SimhashNeighbour
    } else if fingerprinter.is_short(second) {
        Rule::ShortTextShingles
    } else {
        Rule::LongTextSketch
    };
    Ok(Explanation {
        joins,
        rule,
        reason: rule.describe(),
        figures: figures(fingerprinter, confirmation, max_distance, first, second),
    })
}

fn figures(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    max_distance: u32,
    first: &PreparedText,
    second: &PreparedText,
) -> Vec<Figure> {
    let distance = hamming_distance(fingerprinter.simhash(first), fingerprinter.simhash(second));
    let mut figures = vec![
        Figure {
            name: "hamming_distance",
            value: distance.to_string(),
            requirement: Requirement::new(
                format!("≤ {max_distance} (k) for simhash neighbours"),
                format!("simhash 近邻：≤ {max_distance}（k）"),
            ),
            passes: Some(distance <= max_distance),
        },
        Figure {
            name: "same_text",
            value: yes_no(first.exact_hash == second.exact_hash).to_string(),
            requirement: Requirement::new(
                "the same letters and digits join at once".to_string(),
                "字母与数字完全相同即直接归并".to_string(),
            ),
            passes: None,
        },
    ];
    match (
        fingerprinter.is_short(first),
        fingerprinter.is_short(second),
    ) {
        (true, true) => short_figures(fingerprinter, confirmation, first, second, &mut figures),
        (false, false) => long_figures(
            fingerprinter,
            confirmation,
            distance <= max_distance,
            first,
            second,
            &mut figures,
        ),
        // A short text meets a post of up to three times the bound as a
        // post (see `engine::Analyzer`).
        _ if confirmation.short_edit_check
            && confirmation.repost_reading
            && first.cased.is_some()
            && second.cased.is_some() =>
        {
            repost_figures(fingerprinter, confirmation, first, second, &mut figures)
        }
        _ => figures.push(Figure {
            name: "kinds",
            value: "one short text, one long".to_string(),
            requirement: Requirement::new(
                "texts are compared only with texts of their kind".to_string(),
                "短文本只与短文本比较，长文本只与长文本比较".to_string(),
            ),
            passes: None,
        }),
    }
    figures
}

fn short_figures(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    first: &PreparedText,
    second: &PreparedText,
    figures: &mut Vec<Figure>,
) {
    short_headline_figure(fingerprinter, confirmation, first, second, figures);
    if confirmation.short_edit_check && confirmation.repost_reading {
        return repost_figures(fingerprinter, confirmation, first, second, figures);
    }
    let (ours, theirs) = (
        fingerprinter.shingle_set(second),
        fingerprinter.shingle_set(first),
    );
    let similarity = jaccard(&ours, &theirs);
    let contained = containment(&ours, &theirs);
    figures.push(Figure {
        name: "jaccard",
        value: format!("{similarity:.2}"),
        requirement: Requirement::new(
            format!(
                "character bigrams: ≥ {:.2}, or lower with the containment below",
                confirmation.min_short_jaccard
            ),
            format!(
                "字符二元组 Jaccard ≥ {:.2}，或较低时满足下面的包含度",
                confirmation.min_short_jaccard
            ),
        ),
        passes: Some(short_texts_close(
            &ours,
            &theirs,
            confirmation.min_short_jaccard,
            confirmation.min_short_containment,
        )),
    });
    figures.push(Figure {
        name: "containment",
        value: format!("{contained:.2}"),
        requirement: Requirement::new(
            format!(
                "share of the smaller text's bigrams in the other: ≥ {:.2} when the Jaccard is lower",
                confirmation.min_short_containment
            ),
            format!(
                "较短文本的二元组在另一文本中的占比：Jaccard 较低时 ≥ {:.2}",
                confirmation.min_short_containment
            ),
        ),
        passes: None,
    });
    let (first_numbers, second_numbers) = (
        fingerprinter.number_signature(first),
        fingerprinter.number_signature(second),
    );
    figures.push(Figure {
        name: "numbers",
        value: match (first_numbers, second_numbers) {
            (0, 0) => "none".to_string(),
            _ if first_numbers == second_numbers => "the same".to_string(),
            _ => "different".to_string(),
        },
        requirement: requirement_if(
            confirmation.require_same_numbers,
            "the same numbers",
            "数字相同",
        ),
        passes: confirmation
            .require_same_numbers
            .then_some(first_numbers == second_numbers),
    });
    let (first_places, second_places) = (
        fingerprinter.place_signature(first),
        fingerprinter.place_signature(second),
    );
    let places_differ = !places_compatible(first_places, second_places);
    figures.push(Figure {
        name: "places",
        value: match (first_places, second_places) {
            (0, 0) => "none named".to_string(),
            (0, _) | (_, 0) => "named by one text only".to_string(),
            _ if places_differ => "different".to_string(),
            _ => "the same".to_string(),
        },
        requirement: requirement_if(
            confirmation.require_same_places,
            "no contradicting place names (one text's may add to the other's)",
            "地名不矛盾（一方可比另一方多）",
        ),
        passes: confirmation.require_same_places.then_some(!places_differ),
    });
    if confirmation.short_edit_check {
        let summary = edits::compare_with(
            &fingerprinter.letters(first),
            &fingerprinter.letters(second),
            &confirmation.synonyms,
        );
        let mut value = format!(
            "{} of {} letters outside the common text, {} unmarked edit(s)",
            summary.unmatched_in_shorter, summary.shorter_chars, summary.unmarked_edits
        );
        if summary.content_word_changed {
            value.push_str(", a content word changed");
        }
        if summary.numeral_replaced {
            value.push_str(", a numeral replaced");
        }
        figures.push(Figure {
            name: "edits",
            value,
            requirement: Requirement::new(
                format!(
                    "in reading order: ≤ {} letters outside, ≤ 1 unmarked edit, no content word or numeral changed (under {} letters: identical)",
                    allowed_unmatched_chars(summary.shorter_chars),
                    confirmation.min_fuzzy_chars
                ),
                format!(
                    "按阅读顺序：公共文本外 ≤ {} 字，未标记的改动 ≤ 1 处，实词与数字不变（不足 {} 字须完全相同）",
                    allowed_unmatched_chars(summary.shorter_chars),
                    confirmation.min_fuzzy_chars
                ),
            ),
            passes: Some(edits_allow_join(&summary, confirmation)),
        });
    }
}

/// The figures of the repost reading ([`crate::confirm::edits::RepostReading`]).
fn repost_figures(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    first: &PreparedText,
    second: &PreparedText,
    figures: &mut Vec<Figure>,
) {
    let shared = containment(
        &fingerprinter.shingle_set(second),
        &fingerprinter.shingle_set(first),
    );
    figures.push(Figure {
        name: "containment",
        value: format!("{shared:.2}"),
        requirement: Requirement::new(
            format!(
                "share of the smaller text's bigrams in the other: ≥ {MIN_REPOST_CONTAINMENT:.2}"
            ),
            format!("较短文本的二元组在另一文本中的占比 ≥ {MIN_REPOST_CONTAINMENT:.2}"),
        ),
        passes: Some(shared >= MIN_REPOST_CONTAINMENT),
    });
    let (first_places, second_places) = (
        fingerprinter.place_signature(first),
        fingerprinter.place_signature(second),
    );
    let places_differ = !places_compatible(first_places, second_places);
    figures.push(Figure {
        name: "places",
        value: (if places_differ {
            "different"
        } else {
            "compatible"
        })
        .to_string(),
        requirement: requirement_if(
            confirmation.require_same_places,
            "no contradicting place names (one text's may add to the other's)",
            "地名不矛盾（一方可比另一方多）",
        ),
        passes: confirmation.require_same_places.then_some(!places_differ),
    });
    let summary = read_as_repost(
        &fingerprinter.letters(second),
        &fingerprinter.letters(first),
        confirmation,
        false,
    );
    let reading = summary.repost;
    let content_changes_allowed = allowed_content_changes(&reading);
    figures.push(Figure {
        name: "repost",
        value: format!(
            "shared span {} of {} letters ({} in the longer text{}), {} cut, {} edit(s) inside ({} letters), {} content word(s) changed ({} a verb or adjective swapped for another), {} clause(s) continuing the sentence, {} name(s) and {} figure(s) changed",
            reading.span_chars,
            summary.shorter_chars,
            summary.longer_chars,
            match (reading.cut_short, reading.hidden_chars) {
                (false, _) => String::new(),
                (true, 0) => ", a text cut short by its platform".to_string(),
                (true, hidden) => format!(", {hidden} after where the shorter was cut short"),
            },
            reading.cut_chars,
            reading.inside_edits,
            reading.inside_unmatched,
            reading.content_changes,
            reading.predicate_swaps,
            reading.clauses,
            reading.fact_changes,
            reading.figure_changes
        ),
        requirement: Requirement::new(
            format!(
                "read as a post plus a comment: the longer text ≤ 2 × the span (past a cut aside), ≤ {} letters cut, ≤ {} edits and ≤ {} letters inside, ≤ {} content word(s) (other than verbs and adjectives: one per 40 letters), no clause, no name or figure changed (under {} letters: identical)",
                allowed_cut_chars(summary.shorter_chars),
                1 + reading.span_chars / 25,
                2 + reading.span_chars / 15,
                content_changes_allowed,
                confirmation.min_fuzzy_chars
            ),
            format!(
                "读作原帖加评论：较长文本 ≤ 公共段的 2 倍（截断处之后不计），截去 ≤ {} 字，段内改动 ≤ {} 处、≤ {} 字，实词改动 ≤ {} 个（动词、形容词以外每 40 字 1 个），无接续分句，人名与数字不变（不足 {} 字须完全相同）",
                allowed_cut_chars(summary.shorter_chars),
                1 + reading.span_chars / 25,
                2 + reading.span_chars / 15,
                content_changes_allowed,
                confirmation.min_fuzzy_chars
            ),
        ),
        passes: Some(repost_allows_join(&summary, confirmation)),
    });
}

fn long_figures(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    within_k: bool,
    first: &PreparedText,
    second: &PreparedText,
    figures: &mut Vec<Figure>,
) {
    let body_similarity = estimate_jaccard(
        &fingerprinter.body_sketch(first),
        &fingerprinter.body_sketch(second),
        SKETCH_SIZE,
    );
    let sketch_bar = sketch_join_bar(
        &fingerprinter.body_lead(first, LEAD_CHARS),
        &fingerprinter.body_lead(second, LEAD_CHARS),
        confirmation,
    );
    let floor = if within_k {
        confirmation.min_neighbour_jaccard
    } else {
        sketch_bar
    };
    figures.push(Figure {
        name: "body_jaccard",
        value: format!("{body_similarity:.2}"),
        requirement: Requirement::new(
            format!(
                "estimated 5-gram Jaccard of the bodies: ≥ {:.2} within k, ≥ {:.2} when found by sketch",
                confirmation.min_neighbour_jaccard, sketch_bar
            ),
            format!(
                "正文 5-gram Jaccard 估计值：k 以内 ≥ {:.2}，经草图找到时 ≥ {:.2}",
                confirmation.min_neighbour_jaccard, sketch_bar
            ),
        ),
        passes: Some(body_similarity >= floor),
    });
    let (first_numbers, second_numbers) = (
        fingerprinter.body_number_set(first),
        fingerprinter.body_number_set(second),
    );
    let shared = shared_count(&first_numbers, &second_numbers);
    figures.push(Figure {
        name: "numbers",
        value: format!(
            "{shared} shared of {} and {}",
            first_numbers.len(),
            second_numbers.len()
        ),
        requirement: requirement_if(
            confirmation.require_same_numbers,
            "one text's numbers all in the other",
            "一方的数字全部出现在另一方",
        ),
        passes: confirmation
            .require_same_numbers
            .then_some(one_contains_the_other(&first_numbers, &second_numbers)),
    });
    let headlines = (
        fingerprinter.headline(first),
        fingerprinter.headline(second),
    );
    let headlines = match headlines {
        (Some(ours), Some(theirs)) => {
            Some((letters_with_breaks(ours), letters_with_breaks(theirs)))
        }
        _ => None,
    };
    let bar = headlines
        .as_ref()
        .map_or(confirmation.min_headline_jaccard, |(ours, theirs)| {
            headline_bar(ours, theirs, confirmation)
        });
    figures.push(Figure {
        name: "headline",
        value: match &headlines {
            Some((ours, theirs)) => format!("{:.2}", bigram_jaccard(ours, theirs)),
            None => "no headline on one side".to_string(),
        },
        requirement: Requirement::new(
            format!(
                "bigram Jaccard ≥ {bar:.2}, or one headline opens the other's body; one content word swapped only over the same body"
            ),
            format!(
                "标题二元组 Jaccard ≥ {bar:.2}，或一方标题是另一方正文的开头；正文相同时才允许换一个实词"
            ),
        ),
        passes: None,
    });
    let swapped = lead_swaps_a_span(
        &fingerprinter.body_lead(first, KEPT_LEAD_CHARS),
        &fingerprinter.body_lead(second, KEPT_LEAD_CHARS),
    );
    figures.push(Figure {
        name: "lead_span",
        value: if swapped {
            "a span holding a name swapped in place".to_string()
        } else {
            "no span swapped".to_string()
        },
        requirement: requirement_if(
            confirmation.lead_span_check,
            "no name swapped in place where the bodies' first 128 letters otherwise align",
            "正文前 128 字其余对齐时，其中没有被替换的名称",
        ),
        passes: confirmation.lead_span_check.then_some(!swapped),
    });
    let party_swapped =
        crate::confirm::name_slots::swaps_a_named_party(&first.name_slots, &second.name_slots);
    figures.push(Figure {
        name: "named_party",
        value: if party_swapped {
            "another person named where the other body names someone".to_string()
        } else {
            "no named person swapped".to_string()
        },
        requirement: requirement_if(
            confirmation.lead_span_check,
            "no capitalised name put where the other body names another (English bodies)",
            "英文正文中，同一位置没有换成另一个人名",
        ),
        passes: confirmation.lead_span_check.then_some(!party_swapped),
    });
}

/// Two short texts with a headline each: the headlines must be one unless
/// both bodies tell their story (`ShortText::headlines_allow`, asked of the
/// same texts the engine keeps).
fn short_headline_figure(
    fingerprinter: &Fingerprinter,
    confirmation: &ConfirmationConfig,
    first: &PreparedText,
    second: &PreparedText,
    figures: &mut Vec<Figure>,
) {
    let titled = |prepared: &PreparedText| {
        let (field, weight) = crate::engine::short_headline(fingerprinter, prepared)?;
        Some(
            ShortText::new(Box::default(), fingerprinter.letters(prepared).into(), 0, 0)
                .with_headline(field, weight),
        )
    };
    let (Some(ours), Some(theirs)) = (titled(second), titled(first)) else {
        return;
    };
    let (Some(our_headline), Some(their_headline)) = (ours.headline(), theirs.headline()) else {
        return;
    };
    figures.push(Figure {
        name: "short_headline",
        value: format!(
            "{:.2} (body weights {} and {})",
            bigram_jaccard(our_headline, their_headline),
            ours.body_weight,
            theirs.body_weight
        ),
        requirement: requirement_if(
            confirmation.short_headline_check,
            "headlines one (bigram Jaccard ≥ 0.50, no fact swapped) or one opening the other's body, unless both bodies weigh ≥ 80 by themselves",
            "标题相同（二元组 Jaccard ≥ 0.50 且未替换事实）或一方标题是另一方正文的开头；两方正文本身权重都 ≥ 80 时不要求",
        ),
        passes: confirmation
            .short_headline_check
            .then(|| ours.headlines_allow(&theirs, confirmation)),
    });
}

fn requirement_if(required: bool, english: &str, chinese: &str) -> Requirement {
    if required {
        Requirement::new(english.to_string(), chinese.to_string())
    } else {
        Requirement::new(
            format!("not required (setting off): {english}"),
            format!("不要求（设置关闭）：{chinese}"),
        )
    }
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::FingerprintConfig;

    fn fingerprinter() -> Fingerprinter {
        Fingerprinter::new(FingerprintConfig::default()).expect("valid")
    }

    fn explain_texts(first: &str, second: &str) -> Explanation {
        let fingerprinter = fingerprinter();
        explain(
            &fingerprinter,
            &ConfirmationConfig::default(),
            3,
            &fingerprinter.prepare(first),
            &fingerprinter.prepare(second),
        )
        .expect("k = 3 is valid")
    }

    fn figure<'a>(explanation: &'a Explanation, name: &str) -> &'a Figure {
        explanation
            .figures
            .iter()
            .find(|figure| figure.name == name)
            .unwrap_or_else(|| panic!("no figure {name}: {explanation:?}"))
    }

    /// [`explain`] of two documents (title and content), default settings.
    fn explain_documents(first: (&str, &str), second: (&str, &str)) -> Explanation {
        let fingerprinter = fingerprinter();
        let prepare = |(title, content): (&str, &str)| {
            let document = serde_json::json!({"title": title, "content": content});
            fingerprinter.prepare_document(&document).expect("text")
        };
        explain(
            &fingerprinter,
            &ConfirmationConfig::default(),
            3,
            &prepare(first),
            &prepare(second),
        )
        .expect("k = 3 is valid")
    }

    #[test]
    fn the_lead_span_figure_names_a_party_swapped_in_a_form() {
        let notice = |party: &str| {
            format!(
                "The district court will hear the claim of Northgate Supply against {party} on June 4 at 10 a.m. in courtroom B of the county building. Parties who wish to be heard should appear in person or through counsel. Written objections must be filed with the clerk before the hearing date."
            )
        };
        let explain_pair = |first: &str, second: &str| {
            explain_documents(
                ("Hearing notice", &notice(first)),
                ("Hearing notice", &notice(second)),
            )
        };
        let swapped = explain_pair("Harlow Freight", "Delmar Timber");
        assert_eq!(figure(&swapped, "lead_span").passes, Some(false));
        let same = explain_pair("Harlow Freight", "Harlow Freight");
        assert_eq!(figure(&same, "lead_span").passes, Some(true));
    }

    #[test]
    fn the_short_headline_figure_keeps_a_boilerplate_page_under_another_headline_apart() {
        let body = "图文直播正在进行中，请点击进入。本直播内容版权归本网所有，未经授权不得转播。";
        let explain_pair =
            |first: &str, second: &str| explain_documents((first, body), (second, body));
        let other = explain_pair("惠州上线24个长者食堂", "水竹镇花生提质增收");
        assert_eq!(figure(&other, "short_headline").passes, Some(false));
        assert!(!other.joins);
        let same = explain_pair("惠州上线24个长者食堂", "惠州上线24个长者食堂！");
        assert_eq!(figure(&same, "short_headline").passes, Some(true));
    }

    #[test]
    fn a_verbatim_reprint_joins_by_the_exact_fast_path() {
        let explanation = explain_texts(
            "今天天气很好，我们去公园散步。",
            "今天天气很好, 我们去公园散步!",
        );
        assert!(explanation.joins);
        assert_eq!(explanation.rule, Rule::SameText);
        assert_eq!(figure(&explanation, "same_text").value, "yes");
    }

    #[test]
    fn a_repost_with_a_prefix_joins_and_says_which_search_found_it() {
        let explanation = explain_texts(
            "周末去哪儿玩？这五个公园的秋景美到不想走",
            "转发：周末去哪儿玩？这五个公园的秋景美到不想走",
        );
        assert!(explanation.joins, "{explanation:?}");
        assert!(matches!(
            explanation.rule,
            Rule::ShortTextShingles | Rule::SimhashNeighbour
        ));
        assert_eq!(figure(&explanation, "containment").passes, Some(true));
        assert_eq!(figure(&explanation, "repost").passes, Some(true));
    }

    #[test]
    fn other_figures_keep_a_short_text_apart_and_the_figure_says_so() {
        let explanation = explain_texts(
            "全市第3季度新增就业岗位一万个，创历史新高",
            "全市第4季度新增就业岗位一万个，创历史新高",
        );
        assert!(!explanation.joins);
        assert_eq!(explanation.rule, Rule::KeptApart);
        let repost = figure(&explanation, "repost");
        assert!(repost.value.contains("1 figure(s) changed"), "{repost:?}");
        assert_eq!(repost.passes, Some(false));
    }

    #[test]
    fn a_short_and_a_long_text_are_not_compared() {
        // Past three times the short bound: no short description to meet.
        let long = "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。".repeat(5);
        let explanation = explain_texts("城市更新推进会召开", &long);
        assert!(!explanation.joins);
        assert_eq!(figure(&explanation, "kinds").passes, None);
    }
}
