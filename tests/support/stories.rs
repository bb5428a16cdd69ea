//! Stories of 2–5 near-duplicate articles for the tests that kill, pause
//! and restart sidecars (`tests/integration/crash.rs`, `tests/integration/standby.rs`): an original
//! (sentences of the demo corpus with half their Han characters swapped, so
//! originals differ) and reprints with a credit line, one character changed
//! and sometimes the last sentence cut.

use std::collections::{BTreeMap, BTreeSet};

use neardup::config::EngineSettings;
use neardup::units::format_fingerprint;
use serde_json::json;

use super::{Xorshift, demo_sentences};

/// Sentences of the demo corpus, the alphabet of its Han characters.
fn pool() -> (Vec<String>, Vec<char>) {
    let sentences = demo_sentences(12);
    let mut alphabet: Vec<char> = sentences
        .iter()
        .flat_map(|sentence| sentence.chars())
        .filter(|character| ('\u{4e00}'..='\u{9fff}').contains(character))
        // Numerals would change the figures the engine compares.
        .filter(|character| !"一二三四五六七八九十百千万亿零〇两第".contains(*character))
        .collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    (sentences, alphabet)
}

/// One document: id, story, title, content.
#[derive(Debug, Clone)]
pub struct Article {
    pub id: String,
    pub story: usize,
    pub title: String,
    pub content: String,
}

/// Stories of 2–5 articles: an original (sentences of the pool with half
/// their Han characters swapped, so originals differ), and reprints with a
/// credit line, one character changed and sometimes the last sentence cut.
pub fn corpus(seed: u64, stories: usize) -> Vec<Vec<Article>> {
    let (sentences, alphabet) = pool();
    let mut random = Xorshift(seed);
    let swap = |text: &str, random: &mut Xorshift| -> String {
        text.chars()
            .map(|character| {
                if ('\u{4e00}'..='\u{9fff}').contains(&character) && random.below(2) == 0 {
                    alphabet[random.below(alphabet.len())]
                } else {
                    character
                }
            })
            .collect()
    };
    (0..stories)
        .map(|story| {
            let parts: Vec<String> = (0..6)
                .map(|_| swap(&sentences[random.below(sentences.len())], &mut random))
                .collect();
            let title = swap(&sentences[random.below(sentences.len())], &mut random)
                .chars()
                .take(22)
                .collect::<String>();
            let mut articles = vec![Article {
                id: format!("s{story}-0"),
                story,
                title: title.clone(),
                content: parts.concat(),
            }];
            for copy in 1..=(1 + random.below(4)) {
                let mut copied = parts.clone();
                if random.below(2) == 0 {
                    copied.pop();
                }
                let target = random.below(copied.len());
                let mut characters: Vec<char> = copied[target].chars().collect();
                let position = random.below(characters.len());
                if alphabet.contains(&characters[position]) {
                    characters[position] = alphabet[random.below(alphabet.len())];
                }
                copied[target] = characters.into_iter().collect();
                articles.push(Article {
                    id: format!("s{story}-{copy}"),
                    story,
                    title: title.clone(),
                    content: format!(
                        "（来源：{}）{}",
                        ["晨报", "晚报", "商报", "日报"][copy - 1],
                        copied.concat()
                    ),
                });
            }
            articles
        })
        .collect()
}

/// Stories the engine groups whole when nothing fails (the tests that use
/// this check recovery and failover, not grouping quality).
pub fn wholly_grouped(order: &[Article]) -> BTreeSet<usize> {
    let mut engine = EngineSettings::default().build().expect("engine");
    let mut roots: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (position, article) in order.iter().enumerate() {
        let document = json!({"title": article.title, "content": article.content});
        let placed = engine
            .add_document(&document, 1_700_000_000_000 + position as i64)
            .expect("text");
        roots
            .entry(article.story)
            .or_default()
            .insert(format_fingerprint(placed.root));
    }
    roots
        .into_iter()
        .filter(|(_, roots)| roots.len() == 1)
        .map(|(story, _)| story)
        .collect()
}

/// The bulk body that indexes `articles` into `index`.
pub fn bulk_body(index: &str, articles: &[Article]) -> String {
    let mut body = String::new();
    for article in articles {
        body.push_str(&json!({"index": {"_index": index, "_id": article.id}}).to_string());
        body.push('\n');
        body.push_str(
            &json!({"title": article.title, "content": article.content, "story": article.story})
                .to_string(),
        );
        body.push('\n');
    }
    body
}
