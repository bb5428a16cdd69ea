//! Named parties anywhere in an English body: who a form is about.
//!
//! Motivation: English notices and decisions written from one form differ
//! only in the people they name ("Notice is given that Amy Ross has filed
//! a petition to be appointed guardian of …"), and often past the lead
//! that [`super::spans`] and [`super::parties`] read, or with no role word
//! before the name. The body's sketch, numbers and headline are then the
//! same (issue 46). A reprint never puts another person in a sentence;
//! it cuts sentences, adds a source line, or mistypes a letter.
//!
//! Design: a long text keeps its *name slots*: each place where a run of
//! capitalised words (initials allowed) follows a lowercase word of the
//! same sentence, as a 32-bit value: 20 bits of the slot's context (the
//! lowercase word before and the word after) and 12 bits of the name's
//! shape (the first and last letter of each of its words, so that a typo
//! inside a name, a doubled or a transposed letter, keeps its shape). Two
//! bodies swap a party when some context is in both and the names each
//! puts there have no shape in common. Sentence starts, headlines (title
//! case) and capitals after punctuation are not slots. At most
//! [`MAX_NAME_SLOTS`] are kept, those of the smallest context values (a
//! bottom-k choice, as a sketch's: a copy that cuts or adds paragraphs
//! keeps the same choice among the slots the two share, where the first
//! slots of each would compare a name of one with a later one of the
//! other in a common context such as "of … to").
//!
//! Consequences: a cut, an added line, a lowercased or title-cased copy
//! never reads as a swap (a slot in one text only, or no slot). A typo on a
//! name's first or last letter does (measured on DEV: 3 of 4 311 long
//! copies), and so does an outlet's correction of a name. Two names of one
//! shape ("Jupiter" / "Juniper") read as one. Texts without Latin capitals
//! keep none and cost nothing.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The first name slots of a body that are kept.
pub const MAX_NAME_SLOTS: usize = 24;

/// Bits of a slot value that hold the name's shape.
const SHAPE_BITS: u32 = 12;

const CONTEXT_SEED: u64 = 0x6e61_6d65_5f63_7478;
const SHAPE_SEED: u64 = 0x6e61_6d65_5f73_6870;

/// One token of a line: a word (ASCII letters with inner apostrophes or
/// hyphens, and a full stop right after it) or anything else but spaces.
#[derive(Debug, Clone, Copy)]
struct Token<'text> {
    text: &'text str,
    is_word: bool,
}

fn tokens(line: &str) -> Vec<Token<'_>> {
    let bytes = line.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < line.len() {
        let Some(c) = line[at..].chars().next() else {
            break;
        };
        if c.is_whitespace() {
            at += c.len_utf8();
            continue;
        }
        let start = at;
        if c.is_ascii_alphabetic() {
            at += 1;
            while at < line.len() {
                let next = line[at..].chars().next().unwrap_or(' ');
                if next.is_ascii_alphabetic() || matches!(next, '\'' | '’' | '-') {
                    at += next.len_utf8();
                } else {
                    break;
                }
            }
            if bytes.get(at) == Some(&b'.') {
                at += 1;
            }
            tokens.push(Token {
                text: &line[start..at],
                is_word: true,
            });
        } else {
            at += c.len_utf8();
            while at < line.len() {
                let next = line[at..].chars().next().unwrap_or(' ');
                if next.is_whitespace() || next.is_ascii_alphabetic() {
                    break;
                }
                at += next.len_utf8();
            }
            tokens.push(Token {
                text: &line[start..at],
                is_word: false,
            });
        }
    }
    tokens
}

/// A capitalised word: a capital, then at least one lowercase letter.
fn is_capitalised(token: &Token<'_>) -> bool {
    let word = token.text.trim_end_matches('.');
    let mut letters = word.chars();
    token.is_word
        && letters.next().is_some_and(|c| c.is_ascii_uppercase())
        && letters.any(|c| c.is_ascii_lowercase())
}

/// An initial: one capital and a full stop.
fn is_initial(token: &Token<'_>) -> bool {
    let bytes = token.text.as_bytes();
    token.is_word && bytes.len() == 2 && bytes[0].is_ascii_uppercase() && bytes[1] == b'.'
}

/// A lowercase word of two letters or more (the word before a slot).
fn is_lowercase_word(token: &Token<'_>) -> bool {
    token.is_word && token.text.len() >= 2 && token.text.bytes().all(|b| b.is_ascii_lowercase())
}

/// The first and last letter of each word of a name, lowercased (a
/// possessive's "'s" left out): what a typo inside the name keeps.
fn name_shape(words: &[Token<'_>]) -> Vec<u8> {
    let mut shape = Vec::with_capacity(words.len() * 2);
    for word in words {
        let text = word.text.trim_end_matches('.');
        let text = text
            .strip_suffix("'s")
            .or_else(|| text.strip_suffix("’s"))
            .unwrap_or(text);
        let letters: Vec<u8> = text
            .bytes()
            .filter(u8::is_ascii_alphabetic)
            .map(|b| b.to_ascii_lowercase())
            .collect();
        if let (Some(&first), Some(&last)) = (letters.first(), letters.last()) {
            shape.extend([first, last]);
        }
    }
    shape
}

/// The word after a name, lowercased: the next token, or the one after it
/// when the next is punctuation (a comma after a name).
fn word_after(tokens: &[Token<'_>], end: usize) -> Option<String> {
    let word = match tokens.get(end) {
        Some(token) if token.is_word => token,
        Some(_) => tokens.get(end + 1).filter(|token| token.is_word)?,
        None => return None,
    };
    Some(word.text.trim_end_matches('.').to_ascii_lowercase())
}

/// The name slots of a body given as its lines (see the module docs),
/// sorted, at most [`MAX_NAME_SLOTS`]: those of the smallest contexts, each
/// context with all of its names.
pub fn name_slots<'text>(lines: impl IntoIterator<Item = &'text str>) -> Vec<u32> {
    let mut slots = Vec::new();
    for line in lines {
        if !line.bytes().any(|b| b.is_ascii_uppercase()) {
            continue;
        }
        let tokens = tokens(line);
        let mut at = 1;
        while at < tokens.len() {
            if !(is_capitalised(&tokens[at]) && is_lowercase_word(&tokens[at - 1])) {
                at += 1;
                continue;
            }
            let start = at;
            while at < tokens.len() && (is_capitalised(&tokens[at]) || is_initial(&tokens[at])) {
                // A full stop after a word longer than a title (Mr., Dr.,
                // Jr.) ends the sentence, and the name.
                let ends_sentence = tokens[at].text.ends_with('.') && tokens[at].text.len() > 4;
                at += 1;
                if ends_sentence {
                    break;
                }
            }
            let Some(after) = word_after(&tokens, at) else {
                continue;
            };
            let context = format!("{}\u{0}{after}", tokens[start - 1].text);
            let context_bits = xxh3_64_with_seed(context.as_bytes(), CONTEXT_SEED) as u32;
            let shape = xxh3_64_with_seed(&name_shape(&tokens[start..at]), SHAPE_SEED) as u32;
            slots.push((context_bits << SHAPE_BITS) | (shape & ((1 << SHAPE_BITS) - 1)));
        }
    }
    slots.sort_unstable();
    slots.dedup();
    if slots.len() > MAX_NAME_SLOTS {
        let mut cut = MAX_NAME_SLOTS;
        while cut > 0 && context_of(slots[cut - 1]) == context_of(slots[cut]) {
            cut -= 1;
        }
        slots.truncate(cut);
    }
    slots
}

fn context_of(slot: u32) -> u32 {
    slot >> SHAPE_BITS
}

/// Two bodies' name slots (sorted) put names of no common shape in one
/// context: one names a party where the other names another.
pub fn swaps_a_named_party(ours: &[u32], theirs: &[u32]) -> bool {
    let context = context_of;
    let (mut i, mut j) = (0, 0);
    while i < ours.len() && j < theirs.len() {
        let (our_context, their_context) = (context(ours[i]), context(theirs[j]));
        if our_context < their_context {
            i += 1;
        } else if their_context < our_context {
            j += 1;
        } else {
            let our_end = i + ours[i..]
                .iter()
                .take_while(|&&slot| context(slot) == our_context)
                .count();
            let their_end = j + theirs[j..]
                .iter()
                .take_while(|&&slot| context(slot) == our_context)
                .count();
            let shared = ours[i..our_end]
                .iter()
                .any(|slot| theirs[j..their_end].contains(slot));
            if !shared {
                return true;
            }
            (i, j) = (our_end, their_end);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swapped(ours: &str, theirs: &str) -> bool {
        swaps_a_named_party(&name_slots(ours.lines()), &name_slots(theirs.lines()))
    }

    const NOTICE: &str = "In the Matter of the Guardianship of Diane L. Ramos\n\
        Notice is given that Amy Mendoza has filed a petition to be appointed guardian of \
        Diane L. Ramos, an adult alleged to be incapacitated.";

    #[test]
    fn another_person_in_a_slot_is_a_swap() {
        let petitioner = NOTICE.replace("Amy Mendoza", "Angela L. Simmons");
        assert!(swapped(NOTICE, &petitioner));
        let ward = NOTICE.replace("Diane L. Ramos", "Ann Ramos");
        assert!(swapped(NOTICE, &ward));
    }

    #[test]
    fn a_repost_keeps_its_names() {
        // A cut, an added source line, a line break moved.
        let cut = NOTICE.split('\n').next().unwrap_or_default();
        assert!(!swapped(NOTICE, cut));
        let sourced = format!("{NOTICE}\nFirst published by the Shelby County Herald today.");
        assert!(!swapped(NOTICE, &sourced));
        // Typos inside a name keep its shape: a transposition, a doubled
        // letter, a dropped one.
        for typo in ["Amy Mednoza", "Amy Menndoza", "Amy Mndoza"] {
            assert!(
                !swapped(NOTICE, &NOTICE.replace("Amy Mendoza", typo)),
                "{typo}"
            );
        }
        // Lowercased or in capitals: no slots, nothing to contradict.
        assert!(!swapped(NOTICE, &NOTICE.to_lowercase()));
        assert!(!swapped(NOTICE, &NOTICE.to_uppercase()));
    }

    #[test]
    fn sentence_starts_and_punctuation_open_no_slot() {
        assert!(name_slots(["Amy Mendoza has filed a petition."]).is_empty());
        assert!(name_slots(["filed today. Amy Mendoza has filed"]).is_empty());
        assert!(name_slots(["the petitioners, Amy Mendoza and others"]).is_empty());
        // A name at the end of its line has no word after it: no slot.
        assert!(name_slots(["filed by Amy Mendoza"]).is_empty());
        assert_eq!(name_slots(["filed by Amy Mendoza today"]).len(), 1);
    }

    #[test]
    fn no_more_than_the_first_slots_are_kept() {
        let line = (0..40)
            .map(|i| {
                format!(
                    "met with Person{} Smith today",
                    char::from(b'a' + (i % 26) as u8)
                )
            })
            .collect::<Vec<_>>()
            .join(" and ");
        assert!(name_slots([line.as_str()]).len() <= MAX_NAME_SLOTS);
        assert!(name_slots(["普通的中文文本，没有拉丁字母"]).is_empty());
    }
}
