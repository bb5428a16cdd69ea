//! What identifies a short document with a headline: a portal's pages whose
//! body is one boilerplate line ("live coverage in progress", a disclaimer)
//! are as many stories as headlines, and a copy of one page under its own
//! headline still joins it (issue 28: the short-text headline rule).

use std::collections::BTreeSet;

use neardup::config::EngineSettings;
use serde_json::json;

const LIVE_BODY: &str = "图文直播正在进行中，请点击进入\n关注云江新闻网视频号，第一时间获取直播提醒。本直播内容版权归云江新闻网所有，未经授权不得录制、转播。";
const PAYWALL_BODY: &str =
    "You have reached your free article limit for this month. Subscribers read without limits.";

const HEADLINES_ZH: [&str; 6] = [
    "惠州上线24个长者食堂 老人24元吃顿热乎饭",
    "农技专家田间支招 水竹镇花生提质",
    "樱桃成了水白村村民的“金疙瘩”",
    "记者探访：南环街停车难问题有了新解法",
    "镇江市中心医院新院区9月28日开诊",
    "威海一家环保企业一季度营收同比增长",
];
const HEADLINES_EN: [&str; 4] = [
    "Lakewood bookstore to close after 44 years",
    "Flooding shuts roads across the county",
    "Mobile health clinic visits Exeter",
    "Council approves new bus routes",
];

fn engine(short_headline_check: bool) -> neardup::engine::Engine {
    EngineSettings {
        short_headline_check: Some(short_headline_check),
        ..EngineSettings::default()
    }
    .build()
    .expect("engine")
}

/// The classes the pages end in, in order.
fn roots(engine: &mut neardup::engine::Engine, pages: &[(&str, &str)]) -> Vec<u64> {
    pages
        .iter()
        .map(|(title, content)| {
            engine
                .add_document(&json!({"title": title, "content": content}), 0)
                .expect("stamped")
                .root
        })
        .collect()
}

fn portal_pages() -> Vec<(&'static str, &'static str)> {
    HEADLINES_ZH
        .iter()
        .map(|headline| (*headline, LIVE_BODY))
        .chain(
            HEADLINES_EN
                .iter()
                .map(|headline| (*headline, PAYWALL_BODY)),
        )
        .collect()
}

#[test]
fn boilerplate_pages_under_other_headlines_are_other_stories() {
    let pages = portal_pages();
    let placed = roots(&mut engine(true), &pages);
    let classes: BTreeSet<u64> = placed.iter().copied().collect();
    assert_eq!(classes.len(), pages.len(), "one class per headline");
    // The rule is what keeps them apart: without it the pages merge.
    let merged = roots(&mut engine(false), &pages);
    let merged_classes: BTreeSet<u64> = merged.iter().copied().collect();
    assert!(
        merged_classes.len() < pages.len(),
        "without the headline rule the pages merge"
    );
}

#[test]
fn a_page_copied_under_its_own_headline_joins_it() {
    let mut engine = engine(true);
    let first = roots(&mut engine, &portal_pages());
    let copies = [
        // Punctuation and spacing changed, the headline kept.
        ("惠州上线24个长者食堂，老人24元吃顿热乎饭", LIVE_BODY),
        ("Lakewood bookstore to close after 44 years.", PAYWALL_BODY),
    ];
    let again = roots(&mut engine, &copies);
    assert_eq!(again[0], first[0]);
    assert_eq!(again[1], first[HEADLINES_ZH.len()]);
}
