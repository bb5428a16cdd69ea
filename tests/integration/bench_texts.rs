//! The capacity bench's texts drawn from a stream (`support::StreamTexts`,
//! `NEARDUP_CAPACITY_STREAM`): each keeps a stream text's shape (its
//! length, fields and marks) with its letters drawn again, so that side
//! records have real text's statistics while no two nodes share a text.

use crate::support::{self, StreamTexts, Xorshift};

/// A text's shape: each letter's kind, every other character itself.
fn shape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{4e00}'..='\u{9fff}' => '汉',
            'a'..='z' => 'a',
            'A'..='Z' => 'A',
            '0'..='9' => '0',
            other => other,
        })
        .collect()
}

/// A stream of the demo articles (long texts, some of middle length) and
/// short posts made of their sentences.
fn demo_stream(dir: &std::path::Path) -> std::path::PathBuf {
    let articles =
        std::fs::read_to_string(support::project_root().join("tests/fixtures/demo/articles.jsonl"))
            .expect("demo corpus");
    let mut lines: Vec<String> = articles.lines().map(str::to_string).collect();
    for (number, sentence) in support::demo_sentences(10).iter().take(40).enumerate() {
        lines.push(
            serde_json::json!({"content": format!("转发 #{number} {sentence} via App")})
                .to_string(),
        );
    }
    let path = dir.join("stream.jsonl");
    std::fs::write(&path, lines.join("\n")).expect("stream written");
    path
}

#[test]
fn stream_texts_keep_the_streams_shapes_with_letters_drawn_again() {
    let dir = support::TempDir::new("bench-texts");
    let path = demo_stream(dir.path());
    let pool = StreamTexts::read(&path, 10_000, true);
    let reference = StreamTexts::read(&path, 10_000, false);
    let fingerprinter =
        neardup::fingerprint::Fingerprinter::new(Default::default()).expect("default settings");
    let width = fingerprinter.shingle_width();
    let analyzer = neardup::engine::Analyzer::new(fingerprinter, &Default::default());
    let mut stream_shapes = std::collections::HashSet::new();
    for line in std::fs::read_to_string(&path).expect("stream").lines() {
        let document: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        if let Some(analysis) = analyzer.analyze_document(&document) {
            let record = analysis.side_record(0, 0);
            if let Some(short) = &record.short_text {
                stream_shapes.insert(shape(&short.letters));
            }
            if let Some(long) = &record.long_text {
                stream_shapes.insert(shape(&long.lead));
            }
        }
    }
    let mut random = Xorshift(7);
    let mut seen = std::collections::HashSet::new();
    let (mut shorts, mut longs, mut leans) = (0, 0, 0);
    for draw in 0..400 {
        let (short, long) = pool.draw(draw % 2 == 0, &mut random);
        assert!(short.is_some() || long.is_some());
        if let Some(short) = &short {
            shorts += 1;
            assert!(
                stream_shapes.contains(&shape(&short.letters)),
                "{:?}",
                &*short.letters
            );
            assert!(seen.insert(short.letters.to_string()), "a text drawn twice");
            // Shingles are those of the drawn letters, taken back from them
            // in a lean record.
            assert_eq!(
                neardup::fingerprint::shingle_set_of_letters(&short.letters, width),
                short.shingles()
            );
            leans += usize::from(short.shingles_from_letters.is_some());
        }
        if let Some(long) = &long {
            longs += 1;
            assert!(
                stream_shapes.contains(&shape(&long.lead)),
                "{:?}",
                &*long.lead
            );
            assert!(!long.sketch.is_empty() && long.sketch.len() <= 64);
            assert!(long.sketch.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
    assert!(
        shorts >= 200 && longs >= 200,
        "{shorts} short, {longs} long"
    );
    assert!(leans >= shorts * 9 / 10, "{leans} of {shorts} lean");
    // Without lean records, no short text is marked lean.
    let mut random = Xorshift(7);
    for _ in 0..50 {
        let (short, _) = reference.draw(true, &mut random);
        assert!(short.is_some_and(|short| short.shingles_from_letters.is_none()));
    }
}
