//! Fingerprint throughput (bytes/s and documents/s) on Chinese and English
//! articles, per feature mode, the whole engine path (fingerprint +
//! exact fast path + forest) per document, and reading a side record's
//! letters in each of their packed forms (and taking a lean record's
//! shingles back from them).
//!
//! `cargo bench --bench fingerprint`. The texts are written for this bench
//! (no benchmark-set text); each measured document is a distinct variant so
//! that no cache hides the work.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use neardup::config::EngineSettings;
use neardup::encoding::Packing;
use neardup::fingerprint::{FeatureMode, FingerprintConfig, Fingerprinter, Weighting};

const CHINESE_PARAGRAPHS: &[&str] = &[
    "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。",
    "会议指出，要坚持以居民需求为导向，统筹推进基础设施补短板和社区服务完善，让群众在家门口就能享受到更加便利的生活服务。",
    "据介绍，今年全市计划改造老旧小区一百二十个，涉及居民四万余户，同步加装电梯三百部，新增停车位两千余个，改造雨污管网八十公里。",
    "在科技创新方面，多家企业联合高校建设了新的研发平台，围绕新能源汽车、人工智能和生物医药等领域开展关键技术攻关，一批成果已经进入产业化阶段。",
    "气象部门提醒，未来三天我省大部分地区将出现明显降温，局部地区有中到大雨，请广大市民注意添衣保暖，出行注意交通安全。",
    "农业农村部门表示，秋粮收获已经过半，各地抢抓晴好天气组织机械化收割，同时做好烘干仓储等工作，确保颗粒归仓。",
];

const ENGLISH_PARAGRAPHS: &[&str] = &[
    "The city council approved a new plan on Tuesday to expand the public library network across the northern districts, adding four branches and extending weekend opening hours.",
    "Officials said construction would begin next spring and that the budget would be reviewed again in the autumn after a public consultation on the locations.",
    "Shares of the regional carrier rose sharply after it reported quarterly revenue above analyst expectations, helped by strong demand on domestic routes and lower fuel costs.",
    "Farmers in the valley have started harvesting earlier than usual this year because of a dry summer, and cooperatives expect yields to be slightly below the ten-year average.",
    "The research team published results showing that the new battery design retains most of its capacity after several thousand charging cycles in laboratory conditions.",
    "Local schools will receive additional funding for science laboratories and teacher training under the program, which runs for three years and covers forty schools.",
];

/// An article of about `paragraphs` paragraphs; `variant` rotates and tags
/// them so that every document is different.
fn article(source: &[&str], paragraphs: usize, variant: usize) -> String {
    let mut text = String::new();
    for position in 0..paragraphs {
        text.push_str(source[(variant + position) % source.len()]);
        text.push('\n');
    }
    text.push_str(&format!("({variant})"));
    text
}

fn documents(source: &[&str]) -> Vec<String> {
    (0..64).map(|variant| article(source, 6, variant)).collect()
}

fn fingerprint_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("fingerprint");
    for (language, source) in [("zh", CHINESE_PARAGRAPHS), ("en", ENGLISH_PARAGRAPHS)] {
        let docs = documents(source);
        let mean_bytes = docs.iter().map(String::len).sum::<usize>() / docs.len();
        for (mode, weighting) in [
            (FeatureMode::WholeText, Weighting::TermFrequency),
            (
                FeatureMode::LongestSentences { count: 1 },
                Weighting::TermFrequency,
            ),
            (
                FeatureMode::LongestSentences { count: 1 },
                Weighting::TermFrequencyInverseDocumentFrequency,
            ),
            (
                FeatureMode::CharacterShingles { width: 3 },
                Weighting::TermFrequency,
            ),
        ] {
            let fingerprinter = Fingerprinter::new(FingerprintConfig {
                mode,
                weighting,
                short_text_chars: 0,
                ..FingerprintConfig::default()
            })
            .expect("valid config");
            let label = match weighting {
                Weighting::TermFrequencyInverseDocumentFrequency => {
                    format!("{language}/{mode}/tfidf")
                }
                _ => format!("{language}/{mode}"),
            };
            // Correctness inside the bench: a reprint with other punctuation
            // and width has the same fingerprint.
            assert_eq!(
                fingerprinter.fingerprint_text(&docs[0]),
                fingerprinter.fingerprint_text(&docs[0].replace('，', ", ").replace('。', "."))
            );
            for (unit, throughput) in [
                ("bytes", Throughput::Bytes(mean_bytes as u64)),
                ("docs", Throughput::Elements(1)),
            ] {
                group.throughput(throughput);
                let mut next = 0;
                group.bench_function(BenchmarkId::new(label.clone(), unit), |b| {
                    b.iter(|| {
                        next = (next + 1) % docs.len();
                        black_box(fingerprinter.fingerprint_text(black_box(&docs[next])))
                    })
                });
            }
        }
    }
    group.finish();
}

fn engine_per_document(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(1));
    for (language, source) in [("zh", CHINESE_PARAGRAPHS), ("en", ENGLISH_PARAGRAPHS)] {
        let bodies: Vec<String> = (0..source.len())
            .map(|variant| article(source, 4, variant))
            .collect();
        // Every document new (a serial number in the text): the full path.
        let mut engine = EngineSettings::default().build().expect("default engine");
        let mut serial = 0usize;
        group.bench_function(BenchmarkId::new("add_document/new", language), |b| {
            b.iter(|| {
                serial += 1;
                let document = serde_json::json!({
                    "title": format!("title {serial}"),
                    "content": format!("{} {serial}", bodies[serial % bodies.len()]),
                });
                black_box(engine.add_document(&document, 1_700_000_000_000 + serial as i64))
            })
        });
        // Verbatim reprints of 4 known documents: the exact fast path (a node
        // remembers up to 4 exact texts).
        let reprints: Vec<serde_json::Value> = (0..4)
            .map(
                |variant| serde_json::json!({"title": "t", "content": article(source, 4, variant)}),
            )
            .collect();
        let mut engine = EngineSettings::default().build().expect("default engine");
        for reprint in &reprints {
            engine.add_document(reprint, 1_700_000_000_000);
        }
        group.bench_function(
            BenchmarkId::new("add_document/verbatim_reprint", language),
            |b| {
                b.iter(|| {
                    serial += 1;
                    let placed =
                        engine.add_document(&reprints[serial % reprints.len()], 1_700_000_000_000);
                    assert!(placed.is_some_and(|placed| placed.exact_hit));
                    black_box(placed)
                })
            },
        );
    }
    group.finish();
}

/// A sum of `letters`' code points (what a reader of them must decode).
fn letter_sum<'a>(letters: impl Iterator<Item = Result<char, &'a str>>) -> u32 {
    letters.fold(0u32, |sum, letter| {
        sum.wrapping_add(u32::from(letter.unwrap_or('?')))
    })
}

/// Reading the letters a side record keeps, per letter: the compact form
/// (two bytes a Han letter, records of tags 3 and 4) against the prefix
/// code records are written in now (`neardup::text_code`).
fn side_record_letters(c: &mut Criterion) {
    let mut group = c.benchmark_group("side_record_letters");
    for (language, source) in [
        ("chinese", CHINESE_PARAGRAPHS),
        ("english", ENGLISH_PARAGRAPHS),
    ] {
        // The lead a long text keeps: its first 128 letters and digits.
        let leads: Vec<String> = (0..64)
            .map(|variant| {
                article(source, 2, variant)
                    .chars()
                    .filter(|c| c.is_alphanumeric())
                    .flat_map(char::to_lowercase)
                    .take(128)
                    .collect()
            })
            .collect();
        let letters: usize = leads.iter().map(|lead| lead.chars().count()).sum();
        group.throughput(Throughput::Elements(letters as u64));
        for packing in [Packing::Compact, Packing::Coded] {
            let packed: Vec<Vec<u8>> = leads
                .iter()
                .map(|lead| {
                    let mut out = Vec::new();
                    packing.encode(lead, &mut out);
                    out
                })
                .collect();
            let name = format!("{packing:?}").to_lowercase();
            // A lean record's shingles taken back from its letters as they
            // are decoded (what recovery and a candidate's read do).
            let width = Fingerprinter::new(FingerprintConfig::default())
                .expect("default settings")
                .shingle_width();
            group.bench_function(
                BenchmarkId::new(format!("{name}-shingles"), language),
                |b| {
                    b.iter(|| {
                        let mut sum = 0u32;
                        for bytes in &packed {
                            let hashes = match packing {
                                Packing::Compact => neardup::fingerprint::shingle_hashes_of_chars(
                                    neardup::compact_text::chars(bytes).map_while(Result::ok),
                                    bytes.len() * 3 / 2,
                                    width,
                                ),
                                Packing::Coded => neardup::fingerprint::shingle_hashes_of_chars(
                                    neardup::text_code::chars(bytes).map_while(Result::ok),
                                    bytes.len() * 2,
                                    width,
                                ),
                            };
                            sum = sum.wrapping_add(hashes.iter().fold(0, |sum, hash| sum ^ hash));
                        }
                        black_box(sum)
                    })
                },
            );
            group.bench_function(BenchmarkId::new(name, language), |b| {
                b.iter(|| {
                    let mut sum = 0u32;
                    for bytes in &packed {
                        sum = sum.wrapping_add(match packing {
                            Packing::Compact => letter_sum(neardup::compact_text::chars(bytes)),
                            Packing::Coded => letter_sum(neardup::text_code::chars(bytes)),
                        });
                    }
                    black_box(sum)
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = fingerprint_throughput, engine_per_document, side_record_letters
}
criterion_main!(benches);
