//! Synonyms for the content-word check: the user's, and a built-in
//! Chinese thesaurus.
//!
//! Motivation: a short reprint may swap a verb for a synonym (实行 / 实施),
//! and recurring headlines differ by a word in the same place (开幕 /
//! 闭幕). Nothing in the text tells the two apart, so a swapped content word
//! keeps two texts apart (see [`crate::confirm::edits`]). A newsroom knows its own
//! house style; a synonyms file lets it say which swaps are rewordings.
//!
//! Design: the file format of the Elasticsearch / Solr synonym filters, so
//! an existing list can be reused: one group per line, terms separated by
//! commas; `a, b => c` is read as one group {a, b, c} (here equivalence is
//! all that matters); `#` starts a comment. Terms are normalised like the
//! texts (width, case, Traditional → Simplified) and compared on their
//! letters and digits. A term on two lines joins the two groups.
//!
//! The built-in thesaurus ([`Thesaurus::builtin`]) covers general Chinese
//! near-synonyms a newsroom would not think to list (会见 / 会晤, 实行 /
//! 实施). It is derived from the Chinese Open Wordnet (licence: a WordNet-style
//! permissive licence, reproduced at the head of `thesaurus_zh.txt`;
//! regenerate with `scripts/thesaurus-from-cow`). Its synsets are senses,
//! not groups: two words are synonyms when they share one, and a word in two
//! senses does not join them (发生 / 出现 and 出现 / 露面 do not make 发生 /
//! 露面), or polysemous words would chain the whole vocabulary into one
//! group. Only words of two or more letters are read. It is on by default
//! (`--builtin-thesaurus false` turns it off) and the user's file adds to it.
//!
//! Consequences: only the comparison of two texts reads either; fingerprints
//! do not change, so a state written without a list stays valid with one.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::fingerprint::{NormalizeOptions, normalize};

/// Groups of equivalent words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synonyms {
    group_of: HashMap<Box<str>, usize>,
    /// Members of each group (emptied when merged into another).
    members: Vec<Vec<Box<str>>>,
    /// Word senses to consult after the declared groups.
    thesaurus: Option<Arc<Thesaurus>>,
}

/// Words and the senses (synsets) they belong to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Thesaurus {
    senses_of: HashMap<Box<str>, Box<[u32]>>,
}

/// The built-in thesaurus's text (see the module doc).
const BUILTIN_THESAURUS: &str = include_str!("thesaurus_zh.txt");

impl Thesaurus {
    /// Reads one synset per line, words separated by spaces; `#` starts a
    /// comment line. Words are normalised like the texts; words of fewer
    /// than two letters are left out.
    pub fn parse(text: &str, options: NormalizeOptions) -> Thesaurus {
        let mut senses_of: HashMap<Box<str>, Vec<u32>> = HashMap::new();
        let lines = text.lines().filter(|line| !line.starts_with('#'));
        for (sense, line) in (0u32..).zip(lines) {
            for word in line.split_whitespace() {
                let key = letters_of(word, options);
                if key.chars().count() < 2 {
                    continue;
                }
                let senses = senses_of.entry(key).or_default();
                if senses.last() != Some(&sense) {
                    senses.push(sense);
                }
            }
        }
        Thesaurus {
            senses_of: senses_of
                .into_iter()
                .map(|(word, senses)| (word, senses.into_boxed_slice()))
                .collect(),
        }
    }

    /// The built-in Chinese thesaurus, read once per process.
    pub fn builtin() -> Arc<Thesaurus> {
        static BUILTIN: OnceLock<Arc<Thesaurus>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                Arc::new(Thesaurus::parse(
                    BUILTIN_THESAURUS,
                    NormalizeOptions::default(),
                ))
            })
            .clone()
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.senses_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.senses_of.is_empty()
    }

    /// `left` and `right` share a sense.
    pub fn share_a_sense(&self, left: &str, right: &str) -> bool {
        match (self.senses_of.get(left), self.senses_of.get(right)) {
            // Both lists are short.
            (Some(ours), Some(theirs)) => ours.iter().any(|sense| theirs.contains(sense)),
            _ => false,
        }
    }
}

impl Synonyms {
    /// No synonyms: every swapped content word is a change.
    pub fn empty() -> Synonyms {
        Synonyms::default()
    }

    /// The built-in thesaurus alone (the default).
    pub fn builtin() -> Synonyms {
        Synonyms::default().with_thesaurus(Thesaurus::builtin())
    }

    /// These groups, then `thesaurus`'s senses.
    pub fn with_thesaurus(mut self, thesaurus: Arc<Thesaurus>) -> Synonyms {
        self.thesaurus = Some(thesaurus);
        self
    }

    /// Reads a synonyms file (see the module doc).
    pub fn load(path: &Path, options: NormalizeOptions) -> anyhow::Result<Synonyms> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            anyhow::anyhow!("cannot read synonyms file {}: {error}", path.display())
        })?;
        Synonyms::parse(&text, options)
            .map_err(|error| anyhow::anyhow!("synonyms file {}: {error}", path.display()))
    }

    /// Parses the text of a synonyms file; errors name the line.
    pub fn parse(text: &str, options: NormalizeOptions) -> Result<Synonyms, String> {
        let mut synonyms = Synonyms::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let mut terms = Vec::new();
            for term in line.split("=>").flat_map(|side| side.split(',')) {
                let term = term.trim();
                if term.is_empty() {
                    continue;
                }
                let key = letters_of(term, options);
                if key.is_empty() {
                    return Err(format!(
                        "line {}: `{term}` has no letter or digit",
                        index + 1
                    ));
                }
                terms.push(key);
            }
            if terms.len() < 2 {
                return Err(format!(
                    "line {}: a group needs two or more terms, separated by commas",
                    index + 1
                ));
            }
            synonyms.add_group(terms);
        }
        Ok(synonyms)
    }

    fn add_group(&mut self, terms: Vec<Box<str>>) {
        let group = self.members.len();
        self.members.push(Vec::new());
        for term in terms {
            match self.group_of.get(&term).copied() {
                Some(existing) if existing != group => {
                    // Merge the other group into this one.
                    let moved = std::mem::take(&mut self.members[existing]);
                    for member in &moved {
                        self.group_of.insert(member.clone(), group);
                    }
                    self.members[group].extend(moved);
                }
                Some(_) => {}
                None => {
                    self.group_of.insert(term.clone(), group);
                    self.members[group].push(term);
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.group_of.is_empty() && self.thesaurus.as_ref().is_none_or(|t| t.is_empty())
    }

    /// Number of declared terms (the thesaurus aside).
    pub fn len(&self) -> usize {
        self.group_of.len()
    }

    /// `left` and `right` (letters and digits of normalised text) are one
    /// declared group, or the same word.
    pub fn equivalent(&self, left: &str, right: &str) -> bool {
        left == right
            || matches!(
                (self.group_of.get(left), self.group_of.get(right)),
                (Some(a), Some(b)) if a == b
            )
            || self
                .thesaurus
                .as_ref()
                .is_some_and(|thesaurus| thesaurus.share_a_sense(left, right))
    }
}

/// The letters and digits of a normalised term.
fn letters_of(term: &str, options: NormalizeOptions) -> Box<str> {
    normalize(term, options)
        .chars()
        .filter(|&c| crate::fingerprint::normalize::is_letter_or_digit(c))
        .collect::<String>()
        .into_boxed_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Synonyms, String> {
        Synonyms::parse(text, NormalizeOptions::default())
    }

    #[test]
    fn groups_explicit_mappings_comments_and_normalisation() {
        let synonyms = parse(
            "# house style\n实行, 实施\n\n提醒,建议 # reminders\nsays, said => SAID\n實行,執行\n",
        )
        .expect("valid");
        assert!(synonyms.equivalent("实行", "实施"));
        assert!(synonyms.equivalent("提醒", "建议"));
        assert!(synonyms.equivalent("says", "said"));
        // Traditional folds to Simplified, and a shared term joins groups.
        assert!(synonyms.equivalent("执行", "实施"));
        assert!(!synonyms.equivalent("实行", "提醒"));
        assert!(!synonyms.equivalent("开幕", "闭幕"));
        assert!(synonyms.equivalent("开幕", "开幕"));
        assert_eq!(synonyms.len(), 7);
    }

    #[test]
    fn thesaurus_senses_do_not_chain() {
        let thesaurus = Arc::new(Thesaurus::parse(
            "# comment\n发生 出现\n出现 露面\n会见 會晤 见\n",
            NormalizeOptions::default(),
        ));
        let synonyms = parse("开幕, 揭幕\n")
            .expect("valid")
            .with_thesaurus(thesaurus);
        assert!(synonyms.equivalent("发生", "出现"));
        assert!(synonyms.equivalent("出现", "露面"));
        assert!(!synonyms.equivalent("发生", "露面"));
        // Normalised (Traditional folds to Simplified); one letter is left out.
        assert!(synonyms.equivalent("会见", "会晤"));
        assert!(!synonyms.equivalent("会见", "见"));
        // The user's groups still count.
        assert!(synonyms.equivalent("开幕", "揭幕"));
        assert!(!synonyms.equivalent("开幕", "闭幕"));
    }

    #[test]
    fn the_builtin_thesaurus_reads_and_keeps_antonyms_apart() {
        let builtin = Thesaurus::builtin();
        assert!(builtin.len() > 10_000, "{}", builtin.len());
        assert!(builtin.share_a_sense("实行", "实施"));
        for (left, right) in [("开幕", "闭幕"), ("上涨", "下跌"), ("增加", "减少")] {
            assert!(!builtin.share_a_sense(left, right), "{left} / {right}");
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let error = parse("实行, 实施\n只有一个\n").expect_err("one term");
        assert!(error.contains("line 2"), "{error}");
        let error = parse("实行, ！！\n").expect_err("no letters");
        assert!(
            error.contains("line 1") && error.contains("！！"),
            "{error}"
        );
        assert!(parse("").expect("empty").is_empty());
    }
}
