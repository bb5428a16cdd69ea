//! Property test of batched placement (`Engine::plan_batch` /
//! `Engine::place_next`): on random streams of near-duplicate texts, cut
//! into random batches, decided on 1 to 4 threads, with expiries and
//! placements outside the batch between its steps, every answer equals the
//! answer of placing the same texts one by one in the same order, and the
//! engines end in the same state.

use neardup::config::EngineSettings;
use neardup::engine::{Engine, Placed};
use neardup::units::Millis;
use proptest::prelude::*;

const HOUR: Millis = 3_600_000;

/// Sentences written for this test: short and long, Chinese and English,
/// several sharing words, so that texts made of them meet as candidates.
const PIECES: &[&str] = &[
    "今天上午市政府召开新闻发布会介绍城市更新工作进展",
    "会议指出要坚持以居民需求为导向统筹推进基础设施建设",
    "据介绍今年全市计划改造老旧小区一百二十个",
    "The council approved a plan to expand the library network",
    "Officials said construction would begin next spring",
    "气象部门提醒未来三天大部分地区将出现明显降温",
    "农业部门表示秋粮收获已经过半各地抢抓晴好天气",
    "Shares of the regional carrier rose after strong results",
    "打开蓝牙",
    "关闭蓝牙",
    "周末去哪儿玩这五个公园的秋景美到不想走",
    "The council approved a plan to expand the bus network",
    "据介绍今年全市计划改造老旧小区一百三十个",
];

#[derive(Debug, Clone)]
enum Step {
    /// A text made of some pieces, with an optional edit.
    Add {
        pieces: Vec<usize>,
        edit: u8,
        advance: Millis,
    },
    /// Expiry between two documents (changes the engine under a batch).
    Expire { budget: usize, advance: Millis },
    /// The batch so far is over; the next document starts another.
    Cut,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (prop::collection::vec(0..PIECES.len(), 1..8), 0u8..7, 0..3 * HOUR)
            .prop_map(|(pieces, edit, advance)| Step::Add { pieces, edit, advance }),
        1 => (1usize..20, 0..30 * HOUR).prop_map(|(budget, advance)| Step::Expire { budget, advance }),
        2 => Just(Step::Cut),
    ]
}

fn text_of(pieces: &[usize], edit: u8) -> String {
    let mut text: String = pieces
        .iter()
        .map(|&piece| PIECES[piece])
        .collect::<Vec<_>>()
        .join("。");
    match edit {
        1 => text.insert_str(0, "转发："),
        2 => text.push_str(" #热点#"),
        3 => text = text.replacen('市', "省", 1),
        4 => text = text.to_uppercase(),
        5 => text.push_str("。据新华社报道"),
        _ => {}
    }
    text
}

fn new_engine(k: u32) -> Engine {
    EngineSettings {
        retention: Some("48h".to_string()),
        max_distance: Some(k),
        ..EngineSettings::default()
    }
    .build()
    .expect("valid settings")
}

/// Every answer, and the engine's state at the end.
type Outcome = (Vec<Placed>, Vec<(u64, u64, u64)>, u64);

fn final_state(engine: &Engine, answers: Vec<Placed>) -> Outcome {
    let mut nodes: Vec<(u64, u64, u64)> = engine
        .forest()
        .iter_nodes()
        .map(|node| (node.fingerprint, node.root, node.documents))
        .collect();
    nodes.sort_unstable();
    (answers, nodes, engine.forest().stats().documents)
}

fn serial(steps: &[Step], k: u32) -> Outcome {
    let mut engine = new_engine(k);
    let mut now: Millis = 1_700_000_000_000;
    let mut answers = Vec::new();
    for step in steps {
        match step {
            Step::Add {
                pieces,
                edit,
                advance,
            } => {
                now += advance;
                answers.push(engine.add_text(&text_of(pieces, *edit), now));
            }
            Step::Expire { budget, advance } => {
                now += advance;
                engine.expire(now, *budget);
            }
            Step::Cut => {}
        }
    }
    final_state(&engine, answers)
}

fn batched(steps: &[Step], k: u32, threads: usize) -> Outcome {
    let mut engine = new_engine(k);
    engine.track_changes();
    let mut now: Millis = 1_700_000_000_000;
    let mut answers = Vec::new();
    for batch_steps in steps.split(|step| matches!(step, Step::Cut)) {
        let texts: Vec<String> = batch_steps
            .iter()
            .filter_map(|step| match step {
                Step::Add { pieces, edit, .. } => Some(text_of(pieces, *edit)),
                _ => None,
            })
            .collect();
        let analyzer = engine.analyzer().clone();
        let mut batch = engine.plan_batch(texts, threads, |text| {
            Some(analyzer.analyze(&analyzer.fingerprinter().prepare(&text)))
        });
        for step in batch_steps {
            match step {
                Step::Add { advance, .. } => {
                    now += advance;
                    let placed = engine
                        .place_next(&mut batch, now)
                        .expect("every text has a plan");
                    answers.push(placed);
                }
                Step::Expire { budget, advance } => {
                    now += advance;
                    engine.expire(now, *budget);
                }
                Step::Cut => {}
            }
        }
        assert!(batch.is_empty());
    }
    final_state(&engine, answers)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn batches_place_as_one_by_one(
        steps in prop::collection::vec(step(), 1..80),
        k in 1u32..5,
        threads in 1usize..5,
    ) {
        let one_by_one = serial(&steps, k);
        let in_batches = batched(&steps, k, threads);
        prop_assert_eq!(&in_batches.0, &one_by_one.0, "answers");
        prop_assert_eq!(&in_batches.1, &one_by_one.1, "nodes");
        prop_assert_eq!(in_batches.2, one_by_one.2, "documents");
    }
}

/// The same text many times in one batch: only the first can be decided
/// ahead; the others are decided again (their exact hash was placed), and
/// all land on one node.
#[test]
fn copies_inside_one_batch_meet() {
    let mut engine = new_engine(3);
    engine.track_changes();
    let text = text_of(&[0, 1, 2], 0);
    let analyzer = engine.analyzer().clone();
    let mut batch = engine.plan_batch(vec![text.clone(); 5], 2, |text| {
        Some(analyzer.analyze(&analyzer.fingerprinter().prepare(&text)))
    });
    let placed: Vec<Placed> = (0..5)
        .filter_map(|_| engine.place_next(&mut batch, 1_000))
        .collect();
    assert_eq!(placed.len(), 5);
    assert!(placed.iter().all(|p| p.root == placed[0].root));
    assert_eq!(placed[4].class_documents, 5);
    assert_eq!(batch.kept, 1);
    assert_eq!(batch.redecided, 4);
}

/// Two batches decided on the same state (two requests of the sidecar
/// deciding at once), then applied interleaved in `order` (true: the next
/// of the first batch): the answers of placing the texts one by one in the
/// order they were applied.
fn interleaved(
    first: &[String],
    second: &[String],
    order: &[bool],
    k: u32,
) -> (Vec<Placed>, Vec<Placed>) {
    let now: Millis = 1_700_000_000_000;
    let mut engine = new_engine(k);
    engine.track_changes();
    let analyzer = engine.analyzer().clone();
    let analyse = |text: &String| Some(analyzer.analyze(&analyzer.fingerprinter().prepare(text)));
    let mut batch_a = engine.plan_batch(first.iter().collect(), 2, analyse);
    let mut batch_b = engine.plan_batch(second.iter().collect(), 1, analyse);
    let mut serial_engine = new_engine(k);
    let (mut batched, mut one_by_one) = (Vec::new(), Vec::new());
    let (mut next_a, mut next_b) = (0, 0);
    for &take_first in order {
        let (batch, texts, next) = if take_first && next_a < first.len() || next_b == second.len() {
            (&mut batch_a, first, &mut next_a)
        } else {
            (&mut batch_b, second, &mut next_b)
        };
        if *next == texts.len() {
            continue;
        }
        batched.push(engine.place_next(batch, now).expect("a plan"));
        one_by_one.push(serial_engine.add_text(&texts[*next], now));
        *next += 1;
    }
    (batched, one_by_one)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn batches_decided_together_apply_in_any_interleaving(
        first in prop::collection::vec((prop::collection::vec(0..PIECES.len(), 1..6), 0u8..7), 1..30),
        second in prop::collection::vec((prop::collection::vec(0..PIECES.len(), 1..6), 0u8..7), 1..30),
        order in prop::collection::vec(any::<bool>(), 60),
        k in 1u32..5,
    ) {
        let texts = |specs: &[(Vec<usize>, u8)]| -> Vec<String> {
            specs.iter().map(|(pieces, edit)| text_of(pieces, *edit)).collect()
        };
        let (batched, one_by_one) = interleaved(&texts(&first), &texts(&second), &order, k);
        prop_assert_eq!(batched.len(), first.len() + second.len());
        prop_assert_eq!(batched, one_by_one);
    }
}
