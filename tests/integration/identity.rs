//! What identifies a short document with a headline: a portal's pages whose
//! body is one boilerplate line ("live coverage in progress", a disclaimer)
//! are as many stories as headlines, and a copy of one page under its own
//! headline still joins it (issue 28: the short-text headline rule); a
//! site's footer that no list names is learned from the stream once three
//! classes carried it (issue 28: boilerplate learned); an English notice
//! that names another person past its lead is another notice (issue 46).

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
    built(EngineSettings {
        short_headline_check: Some(short_headline_check),
        ..EngineSettings::default()
    })
}

fn built(settings: EngineSettings) -> neardup::engine::Engine {
    settings.build().expect("engine")
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

/// A site's own footer that no list of phrases knows: as long as a short
/// report, it made every brief of the site's one column "a story under
/// other headlines".
const SITE_FOOTER: &str = "\n云江融媒体中心每天早上七点推送当地要闻、天气和路况，周末推出乡村美食和文旅专题。\n热线八八六六八八八全天有人值守，欢迎读者提供身边的新鲜事和好点子。\n云江新闻客户端首页的活动专区可以报名参加亲子研学、读书会和城市定向赛。";

const COLUMN_BRIEFS: [(&str, &str); 8] = [
    (
        "云江快讯｜老城区改造启动",
        "老城区改造首批十二条背街小巷今天开工。",
    ),
    (
        "云江快讯｜社区食堂开张",
        "南湖街道第三家社区食堂今天开张营业。",
    ),
    (
        "云江快讯｜新公交线开通",
        "连接高铁站和开发区的新公交线今天开通。",
    ),
    ("云江快讯｜夜市恢复营业", "滨江夜市完成改造后今晚恢复营业。"),
    (
        "云江快讯｜图书馆延长开放",
        "市图书馆暑期每天开放到晚上九点。",
    ),
    (
        "云江快讯｜游泳馆免费开放",
        "全民健身日当天游泳馆向市民免费开放。",
    ),
    (
        "云江快讯｜菜价小幅回落",
        "本周蔬菜批发均价比上周回落百分之三。",
    ),
    (
        "云江快讯｜暴雨预警发布",
        "气象台发布暴雨黄色预警提醒市民减少出行。",
    ),
];

fn learning_engine(common_sentence_classes: u8) -> neardup::engine::Engine {
    built(EngineSettings {
        common_sentence_classes: Some(common_sentence_classes),
        ..EngineSettings::default()
    })
}

/// A local portal's briefs, each under its headline with the site's
/// footer: a set where learning the footer changes the stamps (the group
/// tests use it too).
pub(crate) fn column_pages() -> Vec<(String, String)> {
    COLUMN_BRIEFS
        .iter()
        .map(|(headline, brief)| (headline.to_string(), format!("{brief}{SITE_FOOTER}")))
        .collect()
}

fn classes_of(engine: &mut neardup::engine::Engine, pages: &[(String, String)]) -> Vec<u64> {
    let pages: Vec<(&str, &str)> = pages
        .iter()
        .map(|(title, content)| (title.as_str(), content.as_str()))
        .collect();
    roots(engine, &pages)
}

#[test]
fn a_footer_many_classes_carry_is_learned_as_boilerplate() {
    let pages = column_pages();
    let learned = classes_of(&mut learning_engine(3), &pages);
    let learned_classes: BTreeSet<u64> = learned.iter().copied().collect();
    // The first pages are judged by their text as it reads; once three
    // classes carried the footer, it no longer identifies a story.
    assert!(
        learned[3..]
            .iter()
            .all(|root| learned[..3].iter().all(|earlier| earlier != root)),
        "{learned:?}"
    );
    let alone = classes_of(&mut learning_engine(0), &pages);
    let alone_classes: BTreeSet<u64> = alone.iter().copied().collect();
    assert!(
        alone_classes.len() < learned_classes.len(),
        "without learning the briefs merge: {alone:?} / {learned:?}"
    );
}

#[test]
fn a_brief_reposted_with_the_learned_footer_still_joins() {
    let pages = column_pages();
    let mut engine = learning_engine(3);
    let first = classes_of(&mut engine, &pages);
    // Reposted under its own headline, punctuation changed.
    let (headline, body) = &pages[6];
    let copy = (
        format!("{headline}！"),
        body.replace('。', "，").replacen('，', "。", 1),
    );
    let again = classes_of(&mut engine, &[copy]);
    assert_eq!(again[0], first[6]);
}

use crate::support;

/// Places `pages` on `ledger` at `now`, journaled and synced as the
/// sidecar does; their roots.
fn place_pages(
    ledger: &mut neardup::ledger::Ledger,
    store: &neardup::persist::Store,
    pages: &[(String, String)],
    now: i64,
) -> Vec<u64> {
    let analyzer = ledger.engine().analyzer().clone();
    let roots = pages
        .iter()
        .map(|(title, content)| {
            let analysis = analyzer
                .analyze_document(&json!({"title": title, "content": content}))
                .expect("text");
            ledger.place(analysis, now).root
        })
        .collect();
    let seq = store.append(ledger.take_journal());
    store.sync(seq).expect("sync");
    roots
}

#[test]
fn the_learned_table_survives_a_restart_from_the_log_and_from_a_snapshot() {
    let settings = EngineSettings {
        common_sentence_classes: Some(3),
        retention: Some("48h".to_string()),
        ..EngineSettings::default()
    };
    let pages = column_pages();
    let (before, after) = pages.split_at(4);
    let now = 1_700_000_000_000;
    // Uninterrupted: once three classes carried the footer, the pages
    // after it are as many stories as headlines.
    let unbroken_dir = support::TempDir::new("learned-unbroken");
    let (store, mut ledger, _) = support::state::open_state(unbroken_dir.path(), &settings, true);
    let mut unbroken = place_pages(&mut ledger, &store, before, now);
    unbroken.extend(place_pages(&mut ledger, &store, after, now));
    let later: BTreeSet<u64> = unbroken[4..].iter().copied().collect();
    assert_eq!(later.len(), after.len(), "learned: {unbroken:?}");
    for snapshot in [false, true] {
        let dir = support::TempDir::new("learned-restarted");
        let (store, mut ledger, _) = support::state::open_state(dir.path(), &settings, true);
        let mut restarted = place_pages(&mut ledger, &store, before, now);
        if snapshot {
            store.snapshot(&ledger, now).expect("snapshot");
        }
        drop(store);
        drop(ledger);
        let (store, mut ledger, report) = support::state::open_state(dir.path(), &settings, true);
        assert_eq!(report.snapshot_seq.is_some(), snapshot);
        restarted.extend(place_pages(&mut ledger, &store, after, now));
        assert_eq!(
            restarted,
            unbroken,
            "restarted from {}: stamps as if it never stopped",
            if snapshot { "a snapshot" } else { "the log" }
        );
    }
}

/// A guardianship notice of one form: the petitioner is named past the
/// lead, after no role word.
fn guardianship_notice(petitioner: &str) -> serde_json::Value {
    let content = format!(
        "IN THE Superior Court of Marlow County\n\
         In the Matter of the Guardianship of Edith Calloway\n\
         Case No. 2031-PR-1187\n\
         The court has set a hearing on the petition for the fourteenth day of the \
         month at the courthouse on Quarry Street, and any person who wishes to object \
         to the appointment must file a written objection with the clerk before it.\n\
         Notice is given that {petitioner} has filed a petition to be appointed guardian \
         of the estate, and that the person alleged to be incapacitated has the right to \
         attend the hearing and to be represented by counsel of her choosing."
    );
    json!({"title": "Notice of Petition for Guardianship", "content": content})
}

#[test]
fn an_english_notice_naming_another_petitioner_past_its_lead_stays_apart() {
    let mut engine = built(EngineSettings::default());
    let original = engine
        .add_document(&guardianship_notice("Rosalind Tembe"), 0)
        .expect("text");
    // A copy with a letter doubled in the name and a source line added
    // is the same notice.
    let mut copy = guardianship_notice("Rosalind Temmbe");
    copy["content"] = format!(
        "{}\nFirst published in the Marlow Ledger.",
        copy["content"].as_str().unwrap_or_default()
    )
    .into();
    let copy = engine.add_document(&copy, 1).expect("text");
    assert_eq!(copy.root, original.root);
    // Another petitioner: another notice, though everything else is one form.
    let other = engine.add_document(&guardianship_notice("Harriet Okafor"), 2);
    assert_ne!(other.expect("text").root, original.root);
}
