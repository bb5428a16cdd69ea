//! The synthetic placements the persist and capacity benches fill an
//! engine with: uniformly drawn texts, or a stream's texts with their
//! letters drawn again (`NEARDUP_CAPACITY_STREAM`).

use super::Xorshift;

/// Effects of `count` placements with the engine's typical side data,
/// generated as they are consumed (benches): 60% short texts of 40 Han
/// letters drawn at random and their bigram hashes (as the fingerprinter
/// takes them), 40% long texts with a 64-value sketch, a
/// 48-letter lead, a headline and 6 numbers; one node in five a leaf; one
/// document key per node. With `NEARDUP_LEAN_SIDE_RECORDS=true`, the short
/// texts are checked for shingles their letters give back, as the analyser
/// does with `--lean-side-records`. With `NEARDUP_CAPACITY_STREAM=FILE`,
/// the texts are a stream's, their letters drawn again ([`StreamTexts`]).
///
/// A node's fingerprint is a function of its position, so a leaf names a
/// root at a random earlier position without a list of the roots (which,
/// at 8 bytes for four nodes in five, was counted in the capacity bench's
/// memory as if it were the engine's).
pub fn synthetic_placements(count: usize) -> impl Iterator<Item = neardup::ledger::Effect> {
    use neardup::engine::EngineEffect;
    use neardup::ledger::{DocumentKey, Effect};
    let mut random = Xorshift(0x9e37_79b9_7f4a_7c15);
    let fingerprint_at = |position: usize| {
        // splitmix64's finaliser: a bijection, so positions never collide.
        let mut bits = (position as u64).wrapping_add(0x2545_f491_4f6c_dd1d);
        bits = (bits ^ (bits >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        bits = (bits ^ (bits >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        bits ^ (bits >> 31)
    };
    let fingerprinter =
        neardup::fingerprint::Fingerprinter::new(Default::default()).expect("default settings");
    let lean = std::env::var("NEARDUP_LEAN_SIDE_RECORDS").is_ok_and(|value| value == "true");
    let stream_texts = std::env::var_os("NEARDUP_CAPACITY_STREAM")
        .map(|path| StreamTexts::read(std::path::Path::new(&path), STREAM_TEXTS_POOL, lean));
    (0..count).flat_map(move |position| {
        let fingerprint = fingerprint_at(position);
        // Positions 4, 9, 14, … are leaves; the others roots.
        let root = if position % 5 == 4 {
            // One of the position / 5 * 4 + 4 roots so far, uniformly.
            let root_number = random.below(position / 5 * 4 + 4);
            fingerprint_at(root_number / 4 * 5 + root_number % 4)
        } else {
            fingerprint
        };
        let short = position % 5 < 3;
        let (short_text, long_text) = match &stream_texts {
            Some(texts) => texts.draw(short, &mut random),
            None => uniform_texts(short, &fingerprinter, lean, &mut random),
        };
        let exact_hash = Some(random.next());
        let key = DocumentKey(random.next());
        [
            Effect::Engine(EngineEffect::Placed {
                now: 1_700_000_000_000 + position as i64,
                fingerprint,
                root,
                exact_hash,
                short_text,
                long_text,
                sentences: Vec::new(),
            }),
            // The cluster's answer, as the sidecar logs it: the placement
            // is settled and the key holds the fingerprint (without the
            // first, every placement would stay "in doubt" and recovery
            // would take each back).
            Effect::Settled { fingerprint },
            Effect::KeyStored { key, fingerprint },
        ]
    })
}

/// The synthetic placements' texts without a stream: a short text of 40
/// Han letters drawn uniformly from 3 000 (which no letter code shortens),
/// a long text of 64 sketch values drawn uniformly and one fixed headline
/// and lead.
fn uniform_texts(
    short: bool,
    fingerprinter: &neardup::fingerprint::Fingerprinter,
    lean: bool,
    random: &mut Xorshift,
) -> (
    Option<neardup::confirm::ShortText>,
    Option<neardup::confirm::LongText>,
) {
    use neardup::confirm::{LongText, ShortText};
    let short_text = short.then(|| {
        let letters: String = (0..40)
            .filter_map(|_| char::from_u32(0x4e00 + random.below(3000) as u32))
            .collect();
        let text = ShortText::new(
            fingerprinter.shingle_set_of(&letters).into_boxed_slice(),
            letters.into(),
            random.next(),
            0,
        );
        if lean {
            text.checking_shingles_against_letters(fingerprinter.shingle_width())
        } else {
            text
        }
    });
    let long_text = (!short).then(|| {
        let mut sketch: Vec<u32> = (0..64).map(|_| random.next() as u32).collect();
        sketch.sort_unstable();
        LongText {
            sketch: sketch.into_boxed_slice(),
            headline: Some("港口新航线周一开通每周两班".into()),
            lead:
                "港口新航线周一开通每周两班连接本港与东南亚四个港口首航装载集装箱八百余个港务局表示"
                    .into(),
            numbers: vec![1, 2, 3, 4, 5, 6].into_boxed_slice(),
            name_slots: Box::default(),
            identifying_weight: 300,
        }
    });
    (short_text, long_text)
}

/// How many documents of `NEARDUP_CAPACITY_STREAM` the synthetic texts
/// are drawn from.
const STREAM_TEXTS_POOL: usize = 20_000;

/// Texts with a stream's statistics for the synthetic placements
/// (`NEARDUP_CAPACITY_STREAM=FILE`, a stream of `overlap.py`): each node
/// takes a pool document's texts (a short one for a short node, one with a
/// long text, of middle length or long, for a long node) with every letter
/// replaced by one drawn from the pool's letters of its kind (Han, ASCII
/// letter, digit), the same replacement throughout the record, and its
/// sketch drawn again below its largest value. So the letters have the
/// stream's frequencies, lengths and fields (what a letter code and the
/// record's layout see) while no two nodes share texts (which would pile
/// them into the candidate indexes' buckets), and a lean record's lead
/// and shingles are taken from its letters where the pool document's were.
pub struct StreamTexts {
    short: Vec<PoolShort>,
    long: Vec<(Option<PoolShort>, neardup::confirm::LongText)>,
    /// Every Han letter, lowercase ASCII letter and digit of the pool's
    /// texts, as often as it occurs.
    han: Vec<char>,
    latin: Vec<char>,
    digits: Vec<char>,
    width: usize,
    lean: bool,
    /// The replacement of each letter in the record being drawn.
    replacements: std::cell::RefCell<Replacements>,
}

/// A pool document's short text, and whether its shingles are its
/// letters' (not so for 3 % of the stream: a lean record keeps those).
struct PoolShort {
    text: neardup::confirm::ShortText,
    shingles_from_letters: bool,
}

/// Which letter replaces which in one record: a slot per code point up
/// to the last Han letter, valid when it holds the current record's
/// number. A `HashMap` per record made the fill's generator, not the
/// engine, most of a stream-text fill's time; the draws are the same
/// (each letter draws its replacement at its first occurrence).
struct Replacements {
    record: u32,
    slots: Vec<(u32, char)>,
}

impl Replacements {
    fn new() -> Replacements {
        Replacements {
            record: 0,
            slots: vec![(0, '\0'); 0xa000],
        }
    }

    /// Starts a record: every letter unreplaced.
    fn start_record(&mut self) {
        self.record = self.record.wrapping_add(1);
        if self.record == 0 {
            self.slots.fill((0, '\0'));
            self.record = 1;
        }
    }

    fn replacement(&mut self, letter: char, draw: impl FnOnce() -> char) -> char {
        let slot = &mut self.slots[letter as usize];
        if slot.0 != self.record {
            *slot = (self.record, draw());
        }
        slot.1
    }
}

impl StreamTexts {
    /// The texts of the first `pool` documents of the stream at `path`.
    pub fn read(path: &std::path::Path, pool: usize, lean: bool) -> StreamTexts {
        use std::io::BufRead;
        let fingerprinter =
            neardup::fingerprint::Fingerprinter::new(Default::default()).expect("default settings");
        let width = fingerprinter.shingle_width();
        let analyzer = neardup::engine::Analyzer::new(fingerprinter, &Default::default());
        let file = std::fs::File::open(path).expect("NEARDUP_CAPACITY_STREAM opens");
        let mut texts = StreamTexts {
            short: Vec::new(),
            long: Vec::new(),
            han: Vec::new(),
            latin: Vec::new(),
            digits: Vec::new(),
            width,
            lean,
            replacements: std::cell::RefCell::new(Replacements::new()),
        };
        for line in std::io::BufReader::new(file).lines().take(pool) {
            let line = line.expect("the stream reads");
            let Ok(document) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let Some(analysis) = analyzer.analyze_document(&document) else {
                continue;
            };
            let record = analysis.side_record(0, 0);
            for text in [
                record.short_text.as_ref().map(|short| &*short.letters),
                record.long_text.as_ref().map(|long| &*long.lead),
                record
                    .long_text
                    .as_ref()
                    .and_then(|long| long.headline.as_deref()),
            ]
            .into_iter()
            .flatten()
            {
                for c in text.chars() {
                    match c {
                        '\u{4e00}'..='\u{9fff}' => texts.han.push(c),
                        'a'..='z' => texts.latin.push(c),
                        'A'..='Z' => texts.latin.push(c.to_ascii_lowercase()),
                        '0'..='9' => texts.digits.push(c),
                        _ => {}
                    }
                }
            }
            let pool_short = |text: neardup::confirm::ShortText| PoolShort {
                shingles_from_letters: neardup::fingerprint::shingle_set_of_letters(
                    &text.letters,
                    width,
                )[..]
                    == *text.shingles(),
                text,
            };
            match (record.short_text, record.long_text) {
                (Some(short), None) => texts.short.push(pool_short(short)),
                (short, Some(long)) => texts.long.push((short.map(pool_short), long)),
                (None, None) => {}
            }
        }
        assert!(
            !texts.short.is_empty() && !texts.long.is_empty() && !texts.han.is_empty(),
            "NEARDUP_CAPACITY_STREAM holds short and long texts"
        );
        texts
    }

    /// A short node's texts, or a long node's.
    pub fn draw(
        &self,
        short: bool,
        random: &mut Xorshift,
    ) -> (
        Option<neardup::confirm::ShortText>,
        Option<neardup::confirm::LongText>,
    ) {
        let mut replacements = self.replacements.borrow_mut();
        replacements.start_record();
        let replacements = &mut *replacements;
        if short {
            let source = &self.short[random.below(self.short.len())];
            return (Some(self.redrawn_short(source, replacements, random)), None);
        }
        let (short, long) = &self.long[random.below(self.long.len())];
        let short = short
            .as_ref()
            .map(|short| self.redrawn_short(short, replacements, random));
        let mut sketch: Vec<u32> = match long.sketch.last() {
            Some(&largest) if long.sketch.len() == 64 => (0..64)
                .map(|_| random.below(largest as usize + 1) as u32)
                .collect(),
            _ => long.sketch.iter().map(|_| random.next() as u32).collect(),
        };
        sketch.sort_unstable();
        sketch.dedup();
        let long = neardup::confirm::LongText {
            sketch: sketch.into_boxed_slice(),
            headline: long
                .headline
                .as_ref()
                .map(|headline| self.redrawn(headline, replacements, random).into()),
            lead: self.redrawn(&long.lead, replacements, random).into(),
            ..long.clone()
        };
        (short, Some(long))
    }

    fn redrawn_short(
        &self,
        pool_short: &PoolShort,
        replacements: &mut Replacements,
        random: &mut Xorshift,
    ) -> neardup::confirm::ShortText {
        let source = &pool_short.text;
        let letters = self.redrawn(&source.letters, replacements, random);
        let shingles = neardup::fingerprint::shingle_set_of_letters(&letters, self.width);
        // Where the pool's shingles were not its letters', a lean record
        // keeps them too.
        let from_letters = pool_short.shingles_from_letters;
        let mut text = neardup::confirm::ShortText::new(
            shingles.into_boxed_slice(),
            letters.into(),
            source.number_signature,
            source.place_signature,
        );
        text.headline_field = source.headline_field;
        text.body_weight = source.body_weight;
        if self.lean && from_letters {
            text.checking_shingles_against_letters(self.width)
        } else {
            text
        }
    }

    /// `text` with each Han letter, ASCII letter and digit replaced by one
    /// drawn from the pool's of its kind, the same throughout a record
    /// (`replacements`; an ASCII capital as its small letter's, capital).
    fn redrawn(
        &self,
        text: &str,
        replacements: &mut Replacements,
        random: &mut Xorshift,
    ) -> String {
        text.chars()
            .map(|c| {
                let lower = c.to_ascii_lowercase();
                let pool = match lower {
                    '\u{4e00}'..='\u{9fff}' => &self.han,
                    'a'..='z' => &self.latin,
                    '0'..='9' => &self.digits,
                    _ => return c,
                };
                if pool.is_empty() {
                    return c;
                }
                let drawn = replacements.replacement(lower, || pool[random.below(pool.len())]);
                if c.is_ascii_uppercase() {
                    drawn.to_ascii_uppercase()
                } else {
                    drawn
                }
            })
            .collect()
    }
}
