//! Property tests of the engine as a whole: random streams of short and long
//! texts with near-duplicate edits, random arrival times and expiries.
//! After every step the engine's side data must agree with the forest, every
//! answer must name a live root, and the same stream must give the same
//! classes twice.

use neardup::config::EngineSettings;
use neardup::engine::{Engine, Placed};
use neardup::forest::Placement;
use neardup::units::Millis;
use proptest::prelude::*;

const HOUR: Millis = 3_600_000;

/// Sentences written for this test, short and long, mixed scripts.
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
];

#[derive(Debug, Clone)]
enum Step {
    /// A text made of some pieces, with an optional edit.
    Add {
        pieces: Vec<usize>,
        edit: u8,
        advance: Millis,
    },
    Expire {
        budget: usize,
        advance: Millis,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (prop::collection::vec(0..PIECES.len(), 1..6), 0u8..6, 0..4 * HOUR)
            .prop_map(|(pieces, edit, advance)| Step::Add { pieces, edit, advance }),
        1 => (1usize..50, 0..40 * HOUR).prop_map(|(budget, advance)| Step::Expire { budget, advance }),
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
        _ => {}
    }
    text
}

fn new_engine() -> Engine {
    EngineSettings {
        retention: Some("48h".to_string()),
        ..EngineSettings::default()
    }
    .build()
    .expect("default settings are valid")
}

fn check_consistency(engine: &Engine) -> Result<(), TestCaseError> {
    let stats = engine.stats();
    let forest = engine.forest().stats();
    prop_assert_eq!(
        stats.side_data_nodes,
        forest.nodes,
        "every node has side data and no more"
    );
    prop_assert!(stats.exact_hash_entries <= 4 * forest.nodes);
    Ok(())
}

fn check_placed(engine: &Engine, placed: &Placed) -> Result<(), TestCaseError> {
    let root = engine.forest().node(placed.root);
    prop_assert!(
        root.is_some_and(|node| node.is_root),
        "the answer is a live root"
    );
    let own = engine.forest().node(placed.fingerprint);
    prop_assert!(
        own.is_some_and(|node| node.root == placed.root),
        "the document's node hangs under it"
    );
    prop_assert_eq!(
        engine.forest().class_documents(placed.root),
        Some(placed.class_documents)
    );
    Ok(())
}

fn run(steps: &[Step]) -> Result<Vec<u64>, TestCaseError> {
    let mut engine = new_engine();
    let mut now: Millis = 1_700_000_000_000;
    let mut roots = Vec::new();
    for step in steps {
        match step {
            Step::Add {
                pieces,
                edit,
                advance,
            } => {
                now += advance;
                let text = text_of(pieces, *edit);
                let placed = engine.add_text(&text, now);
                check_placed(&engine, &placed)?;
                // The same text again, at once: the same node; by exact hash
                // when the text made the node (a node remembers only a few
                // of the different texts that share its fingerprint).
                let again = engine.add_text(&text, now);
                prop_assert_eq!(again.root, placed.root);
                prop_assert_eq!(again.fingerprint, placed.fingerprint);
                prop_assert_eq!(again.placement, Placement::ExistingNode);
                if placed.placement != Placement::ExistingNode {
                    prop_assert!(again.exact_hit);
                }
                roots.push(placed.root);
            }
            Step::Expire { budget, advance } => {
                now += advance;
                engine.expire(now, *budget);
            }
        }
        check_consistency(&engine)?;
    }
    // Everything expires in the end, side data included.
    while engine.expire(now + 1000 * HOUR, 1000).1 {}
    let stats = engine.stats();
    prop_assert_eq!(engine.forest().stats().nodes, 0);
    prop_assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
    Ok(roots)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn engine_side_data_follows_the_forest(steps in prop::collection::vec(step(), 1..60)) {
        let first = run(&steps)?;
        let second = run(&steps)?;
        prop_assert_eq!(first, second, "the same stream gives the same classes");
    }
}
