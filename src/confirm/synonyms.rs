//! Synonyms the user declares, for the content-word check.
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
//! Consequences: only the comparison of two texts reads it; fingerprints do
//! not change, so a state written without a list stays valid with one.

use std::collections::HashMap;
use std::path::Path;

use crate::fingerprint::{NormalizeOptions, normalize};

/// Groups of equivalent words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synonyms {
    group_of: HashMap<Box<str>, usize>,
    /// Members of each group (emptied when merged into another).
    members: Vec<Vec<Box<str>>>,
    senses: HashMap<Box<str>, Vec<u32>>,
}

impl Synonyms {
    /// No synonyms: every swapped content word is a change.
    pub fn empty() -> Synonyms {
        Synonyms::default()
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

    pub fn with_thesaurus_tab(mut self, text: &str) -> Synonyms {
        let mut ids: HashMap<&str, u32> = HashMap::new();
        for line in text.lines() {
            let mut parts = line.split('\t');
            let (Some(sense), Some(kind), Some(word)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if kind != "cmn:lemma" {
                continue;
            }
            let next = ids.len() as u32;
            let id = *ids.entry(sense).or_insert(next);
            let key = letters_of(word, NormalizeOptions::default());
            if key.chars().count() < 2 {
                continue;
            }
            let list = self.senses.entry(key).or_default();
            if !list.contains(&id) {
                list.push(id);
            }
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.group_of.is_empty() && self.senses.is_empty()
    }

    /// Number of declared terms.
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
            || matches!(
                (self.senses.get(left), self.senses.get(right)),
                (Some(a), Some(b)) if a.iter().any(|id| b.contains(id))
            )
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
