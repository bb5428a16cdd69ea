//! Unit tests of the engine: placement, confirmation and side data.

use std::sync::Arc;

use super::search::MAX_SHORT_CONFIRMATIONS;
use super::*;
use crate::fingerprint::FingerprintConfig;
use crate::forest::ForestConfig;

pub(super) const HOUR: Millis = 3_600_000;

pub(super) fn engine_with(confirmation: ConfirmationConfig) -> Engine {
    let fingerprinter = Fingerprinter::new(FingerprintConfig::default()).expect("valid");
    let forest = Forest::new(ForestConfig::default()).expect("valid");
    Engine::new(fingerprinter, forest, confirmation)
}

/// Whether every text of `texts`, added in order to a fresh engine,
/// joins the first one's class.
fn texts_join(confirmation: ConfirmationConfig, texts: &[&str]) -> bool {
    let mut engine = engine_with(confirmation);
    let root = engine.add_text(texts[0], 0).root;
    (1..texts.len()).all(|index| engine.add_text(texts[index], index as Millis).root == root)
}

pub(super) fn engine() -> Engine {
    engine_with(ConfirmationConfig::default())
}

#[test]
fn a_headline_tagged_with_hashtags_joins_and_a_continued_one_does_not() {
    let headline = "CITY COUNCIL APPROVES NEW LIBRARY BUDGET";
    let config = ConfirmationConfig::default;
    assert!(texts_join(
        config(),
        &[
            headline,
            "#local city council approves new library budget #news"
        ]
    ));
    assert!(!texts_join(
        config(),
        &[headline, "local city council approves new library budget"]
    ));
}

#[test]
fn verbatim_reprint_takes_the_exact_fast_path() {
    let mut engine = engine();
    let first = engine.add_text("今天天气很好，我们去公园散步。", 0);
    let again = engine.add_text("今天天气很好, 我们去公园散步!", 1);
    assert!(!first.exact_hit);
    assert!(again.exact_hit);
    assert_eq!(again.root, first.root);
    assert_eq!(again.placement, Placement::ExistingNode);
    assert_eq!(again.class_documents, 2);
    assert_eq!(engine.stats().exact_hits, 1);
}

#[test]
fn short_repost_with_prefix_joins_through_shingle_candidates() {
    let mut engine = engine();
    let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 1);
    assert_ne!(repost.fingerprint, original.fingerprint);
    assert_eq!(repost.root, original.root);
}

#[test]
fn short_texts_with_different_numbers_stay_apart_unless_allowed() {
    let text_one = "全市第3季度新增就业岗位一万个，创历史新高";
    let text_two = "全市第4季度新增就业岗位一万个，创历史新高";
    let mut strict = engine();
    let one = strict.add_text(text_one, 0);
    assert_ne!(strict.add_text(text_two, 1).root, one.root);
    let mut lenient = engine_with(ConfirmationConfig {
        require_same_numbers: false,
        ..ConfirmationConfig::default()
    });
    let one = lenient.add_text(text_one, 0);
    assert_eq!(lenient.add_text(text_two, 1).root, one.root);
}

#[test]
fn a_class_does_not_drift_away_from_its_root() {
    // b is close to a; c is close to b but far from a (the root).
    let a = "明天有小雨气温下降请市民出门带伞注意保暖";
    let b = "明天有小雨气温下降请市民出门带伞注意安全";
    let c = "后天有小雨气温下降请市民出门带伞注意安全出行";
    // Bigram Jaccard: a–b 0.81, b–c 0.82, a–c 0.67; the share of a's
    // bigrams found in c (what the root check compares): 0.84.
    let with_root_check = |min_short_root_jaccard| {
        let mut engine = engine_with(ConfirmationConfig {
            min_short_jaccard: 0.7,
            min_short_root_jaccard,
            // b and c each swap a content word: without this, no step joins.
            content_word_check: false,
            ..ConfirmationConfig::default()
        });
        let root = engine.add_text(a, 0).root;
        assert_eq!(engine.add_text(b, 1).root, root);
        engine.add_text(c, 2).root == root
    };
    assert!(!with_root_check(0.9), "c must not join through b");
    assert!(
        with_root_check(0.0),
        "without the root check c chains in through b"
    );
}

#[test]
fn short_texts_naming_different_places_stay_apart_unless_allowed() {
    let beijing = "【城市高质量发展系列新闻发布会】北京";
    let shanghai = "【城市高质量发展系列新闻发布会】上海";
    let mut strict = engine();
    let first = strict.add_text(beijing, 0);
    assert_ne!(strict.add_text(shanghai, 1).root, first.root);
    // A repost that adds a place-free tag still joins.
    assert_eq!(
        strict
            .add_text("转发：【城市高质量发展系列新闻发布会】北京", 2)
            .root,
        first.root
    );
    // A place swapped for another is also a content word swapped.
    let mut lenient = engine_with(ConfirmationConfig {
        require_same_places: false,
        content_word_check: false,
        ..ConfirmationConfig::default()
    });
    let first = lenient.add_text(beijing, 0);
    assert_eq!(lenient.add_text(shanghai, 1).root, first.root);
}

pub(super) const LONG_BODY: &str = "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。\
    会议指出，要坚持以居民需求为导向，统筹推进基础设施补短板和社区服务完善。\
    据介绍，今年全市计划改造老旧小区120个，涉及居民4万余户，同步加装电梯300部。";

fn article(title: &str, content: &str) -> serde_json::Value {
    serde_json::json!({"title": title, "content": content})
}

#[test]
fn long_copy_edited_in_its_longest_sentence_joins_through_its_sketch() {
    let mut engine = engine();
    let original = engine.add_document(&article("城市更新推进会召开", LONG_BODY), 0);
    // Typos in the longest sentence move the simhash; most text is shared.
    let edited = LONG_BODY
        .replace("老旧小区改造", "老旧小区改建")
        .replace("重点任务", "重要任务");
    let copy = engine.add_document(&article("城市更新推进会召开", &edited), 1);
    let (original, copy) = (original.expect("text"), copy.expect("text"));
    assert_ne!(copy.fingerprint, original.fingerprint);
    assert_eq!(copy.root, original.root);
    // A truncated copy keeps a subset of the numbers: it joins too.
    let truncated = &LONG_BODY[..LONG_BODY.find("同步加装").expect("marker")];
    assert_eq!(
        engine
            .add_document(&article("", truncated), 2)
            .map(|p| p.root),
        Some(original.root)
    );
}

#[test]
fn headline_taken_from_the_other_copys_lead_agrees() {
    let long_text = |headline: Option<&str>, lead: &str| LongText {
        headline: headline.map(Into::into),
        lead: lead.into(),
        identifying_weight: 500,
        ..LongText::default()
    };
    let original = long_text(
        Some("老城焕新民生为先"),
        "本市今天召开城市更新工作推进会会议总结了过去一年",
    );
    // An aggregator's copy titled with the lead: no bigram in common.
    let lead_titled = long_text(
        Some("本市今天召开城市更新工作推进会会议"),
        "本市今天召开城市更新工作推进会",
    );
    assert!(lead_titled.headlines_agree(&original, &ConfirmationConfig::default()));
    assert!(original.headlines_agree(&lead_titled, &ConfirmationConfig::default()));
    // An unrelated headline over the same body does not agree.
    let unrelated = long_text(
        Some("暴雨预警发布后各区启动应急响应"),
        "本市今天召开城市更新工作推进会",
    );
    assert!(!unrelated.headlines_agree(&original, &ConfirmationConfig::default()));
    // Too short a headline proves nothing; no headline never disagrees.
    let tiny = long_text(Some("本市今天"), "x");
    assert!(!tiny.headlines_agree(&original, &ConfirmationConfig::default()));
    assert!(long_text(None, "x").headlines_agree(&original, &ConfirmationConfig::default()));
}

#[test]
fn long_text_with_other_numbers_or_another_headline_stays_apart() {
    let mut engine = engine();
    let original = engine
        .add_document(&article("城市更新推进会召开", LONG_BODY), 0)
        .expect("text");
    let edited = LONG_BODY.replace("老旧小区改造", "老旧小区改建");
    // Same story shape, other figures: a different report.
    let other_figures = edited.replace("120个", "95个").replace("4万", "3万");
    let figures = engine
        .add_document(&article("城市更新推进会召开", &other_figures), 1)
        .expect("text");
    assert_ne!(figures.root, original.root);
    // The same body under an unrelated headline: boilerplate, not a reprint.
    let unrelated = engine
        .add_document(&article("暴雨预警发布后各区启动应急响应", &edited), 2)
        .expect("text");
    assert_ne!(unrelated.root, original.root);
}

/// A site's page whose crawled body is all its own furniture (a cookie
/// notice, a newsletter box, a tip line), none of it in the boilerplate
/// prior's phrase list.
const SITE_FURNITURE: &str = "This site stores small files on your device so that pages load the way you \
    left them. Find out how we keep them in our policy and change your choices at any time under \
    Settings. Sign up for the Harbor Ledger morning briefing to get local news in your inbox each \
    weekday. Have a story idea? Write to our newsroom at tips@harborledger.example or call the \
    desk. Corrections: the Harbor Ledger corrects errors of fact promptly; write to the standards \
    editor with the headline and the date of the article concerned.";

#[test]
fn a_body_the_stream_carries_under_other_stories_headlines_does_not_join_them() {
    let headlines = [
        "Fairview bus drivers ratify tentative contract",
        "Plymouth teachers ratify new contract",
        "Dover nurses ratify two-year contract",
        "Salem librarians ratify first contract",
    ];
    let mut engine = engine();
    let roots: Vec<_> = headlines
        .iter()
        .enumerate()
        .map(|(at, headline)| {
            engine
                .add_document(&article(headline, SITE_FURNITURE), at as Millis)
                .expect("text")
                .root
        })
        .collect();
    // The first two meet before the stream knows the body (their
    // headlines share the frame "… ratify … contract"); from the third on,
    // the body is under two other stories' headlines and the headline
    // decides.
    assert_ne!(roots[2], roots[0], "{roots:?}");
    assert_ne!(roots[3], roots[0], "{roots:?}");
    assert_ne!(roots[3], roots[2], "{roots:?}");
    // The same page again under one of those headlines is still its copy.
    let again = engine
        .add_document(&article(headlines[3], &format!("{SITE_FURNITURE} ")), 9)
        .expect("text");
    assert_eq!(again.root, roots[3]);
}

#[test]
fn a_story_reprinted_under_several_headlines_still_joins() {
    // Outlets retitle a wire story each their own way; each headline is
    // told by the body, so however many there are the body identifies it.
    let headlines = [
        "城市更新推进会召开",
        "我市召开城市更新工作推进会",
        "城市更新工作推进会今天召开",
        "本市召开城市更新推进会部署改造",
    ];
    let mut engine = engine();
    let first = engine
        .add_document(&article(headlines[0], LONG_BODY), 0)
        .expect("text");
    for (at, headline) in headlines.iter().enumerate().skip(1) {
        let copy = engine
            .add_document(&article(headline, LONG_BODY), at as Millis)
            .expect("text");
        assert_eq!(copy.root, first.root, "{headline}");
    }
}

#[test]
fn a_recurring_report_with_a_headline_word_swapped_stays_apart_but_a_retitled_reprint_joins() {
    let report = |edition: &str| {
        let body = format!(
            "{LONG_BODY}市档案馆编写的城市更新画册{edition}版近日出版，面向海内外发行。\
             画册{edition}版收录了十年来的改造案例，{edition}版读者可以了解城市的变化。"
        );
        article(&format!("城市更新画册{edition}版出版发行"), &body)
    };
    let join = |confirmation: ConfirmationConfig, second: &serde_json::Value| {
        let mut engine = engine_with(confirmation);
        let first = engine.add_document(&report("英文"), 0).expect("text");
        engine.add_document(second, 1).expect("text").root == first.root
    };
    let strict = ConfirmationConfig::default();
    let lenient = ConfirmationConfig {
        content_word_check: false,
        ..strict.clone()
    };
    let other_edition = report("法文");
    assert!(
        !join(strict.clone(), &other_edition),
        "another edition is another report"
    );
    assert!(
        join(lenient, &other_edition),
        "found as a candidate otherwise"
    );
    // The same body under a reworded headline: an editor's retitling.
    let mut retitled = report("英文");
    retitled["title"] = "城市更新画册英文版印刷发行".into();
    assert!(join(strict.clone(), &retitled));
    // Declared synonyms make another edition a rewording.
    let synonyms = crate::confirm::synonyms::Synonyms::parse("英文, 法文", Default::default());
    let with_synonyms = ConfirmationConfig {
        synonyms: Arc::new(synonyms.expect("valid")),
        ..strict
    };
    assert!(join(with_synonyms, &other_edition));
}

#[test]
fn reprints_that_credit_different_outlets_join_whichever_arrives_first() {
    let article =
        |content: &str| serde_json::json!({"title": "图书馆延长开放时间", "content": content});
    let text = "为方便读者，市图书馆自下月起延长开放时间，周一至周五开放至晚上九点。";
    let copies = [
        format!("（来源：第晨报）{text}"),
        format!("（来源：第晚报）{text}"),
        format!("{text}——来自城市日报"),
        format!("（来源：城市日报）{text}"),
        text.to_string(),
    ];
    // Every rotation of the list, forwards and backwards.
    for rotation in 0..copies.len() {
        for backwards in [false, true] {
            let mut order: Vec<&String> = copies.iter().collect();
            order.rotate_left(rotation);
            if backwards {
                order.reverse();
            }
            let mut engine = engine();
            let roots: Vec<Fingerprint> = order
                .iter()
                .enumerate()
                .map(|(index, content)| {
                    let placed = engine.add_document(&article(content), index as Millis);
                    placed.expect("text").root
                })
                .collect();
            assert!(
                roots.iter().all(|&root| root == roots[0]),
                "{order:?}: {roots:x?}"
            );
        }
    }
}

#[test]
fn a_recurring_report_that_swaps_its_fact_only_in_headline_and_lead_stays_apart() {
    // One word differs, in the headline and in the lead: the bodies are
    // nearly the same text, so the leads tell the editions apart.
    let report = |edition: &str| {
        article(
            &format!("城市更新画册{edition}版出版发行"),
            &format!("市档案馆编写的城市更新画册{edition}版近日出版，面向海内外发行。{LONG_BODY}"),
        )
    };
    let mut engine = engine();
    let first = engine.add_document(&report("英文"), 0).expect("text");
    let other = engine.add_document(&report("法文"), 1).expect("text");
    assert_ne!(other.root, first.root);
    let again = engine.add_document(&report("英文"), 2).expect("text");
    assert_eq!(again.root, first.root);
}

#[test]
fn a_short_text_with_a_declared_synonym_joins() {
    // Words that share no character (实行 / 实施 join without a thesaurus).
    let first = "南湖大桥夜间施工期间实行单向通行";
    let synonym = "南湖大桥夜间施工期间采取单向通行";
    let without_thesaurus = ConfirmationConfig {
        synonyms: Arc::new(crate::confirm::synonyms::Synonyms::empty()),
        ..ConfirmationConfig::default()
    };
    assert!(!texts_join(without_thesaurus, &[first, synonym]));
    // The built-in thesaurus knows this pair.
    assert!(texts_join(ConfirmationConfig::default(), &[first, synonym]));
    let synonyms = crate::confirm::synonyms::Synonyms::parse("实行, 采取\n", Default::default());
    let declared = ConfirmationConfig {
        synonyms: Arc::new(synonyms.expect("valid")),
        ..ConfirmationConfig::default()
    };
    assert!(texts_join(declared.clone(), &[first, synonym]));
    // Other swaps are still changes.
    assert!(!texts_join(
        declared,
        &[first, "南湖大桥夜间施工期间取消单向通行"]
    ));
}

#[test]
fn short_texts_with_the_same_words_in_another_order_stay_apart() {
    // Word features would give both one fingerprint, and an existing
    // fingerprint joins without confirmation (rule 1).
    let mut engine = engine();
    let first = engine.add_text("打开蓝牙", 0);
    let second = engine.add_text("蓝牙打开", 1);
    assert_ne!(second.fingerprint, first.fingerprint);
    assert_ne!(second.root, first.root);
}

#[test]
fn short_texts_in_another_order_or_with_two_swaps_stay_apart() {
    let mut engine = engine();
    let first = engine.add_text("这趟列车从东湖站出发，经过三个换乘站，最终到达西山站", 0);
    // Same characters, the two stations swapped: bigrams barely differ.
    let swapped = engine.add_text("这趟列车从西山站出发，经过三个换乘站，最终到达东湖站", 1);
    assert_ne!(swapped.root, first.root);
    // A repost that only adds a tag still joins.
    let repost = engine.add_text(
        "转发：这趟列车从东湖站出发，经过三个换乘站，最终到达西山站 #出行#",
        2,
    );
    assert_eq!(repost.root, first.root);
    let mut lenient = engine_with(ConfirmationConfig {
        short_edit_check: false,
        ..ConfirmationConfig::default()
    });
    let first = lenient.add_text("这趟列车从东湖站出发，经过三个换乘站，最终到达西山站", 0);
    let swapped = lenient.add_text("这趟列车从西山站出发，经过三个换乘站，最终到达东湖站", 1);
    assert_eq!(swapped.root, first.root, "bigrams alone join them");
}

#[test]
fn a_short_text_with_one_swapped_function_word_joins_but_not_with_a_replaced_numeral() {
    let mut engine = engine();
    let first = engine.add_text("市体育中心今晚怎么举行第二届社区篮球联赛开幕式", 0);
    let synonym = engine.add_text("市体育中心今晚如何举行第二届社区篮球联赛开幕式", 1);
    assert_eq!(synonym.root, first.root);
    let other_edition = engine.add_text("市体育中心今晚怎么举行第三届社区篮球联赛开幕式", 2);
    assert_ne!(other_edition.root, first.root);
}

#[test]
fn short_texts_that_differ_in_a_content_word_stay_apart_unless_allowed() {
    let opening = "本台明天将直播全市青少年科技创新大赛开幕式";
    let closing = "本台明天将直播全市青少年科技创新大赛闭幕式";
    // An added filler word is not a changed fact.
    let filler = "本台明天将直播全市青少年科技创新大赛正式开幕式";
    // Two words added in two places is a rewrite, not a repost.
    let two_fillers = "本台明天将正式直播全市青少年科技创新大赛积极开幕式";
    let strict = ConfirmationConfig::default();
    assert!(!texts_join(strict.clone(), &[opening, closing]));
    assert!(texts_join(strict.clone(), &[opening, filler]));
    assert!(!texts_join(strict, &[opening, two_fillers]));
    let lenient = ConfirmationConfig {
        content_word_check: false,
        ..ConfirmationConfig::default()
    };
    assert!(texts_join(lenient, &[opening, closing]));
}

#[test]
fn very_short_texts_join_only_the_same_letters() {
    let mut engine = engine();
    let first = engine.add_text("帮我订明早的闹钟", 0);
    assert_ne!(engine.add_text("帮我订明早的闹钟吧", 1).root, first.root);
    // Punctuation and width are not letters: the exact path joins.
    assert_eq!(engine.add_text("帮我订明早的闹钟！", 2).root, first.root);
    let mut lenient = engine_with(ConfirmationConfig {
        min_fuzzy_chars: 0,
        ..ConfirmationConfig::default()
    });
    let first = lenient.add_text("帮我订明早的闹钟", 0);
    assert_eq!(lenient.add_text("帮我订明早的闹钟吧", 1).root, first.root);
}

#[test]
fn long_neighbours_with_unrelated_headlines_stay_apart() {
    let notice = "本号所发内容仅供读者参考，不构成任何投资、医疗或法律方面的建议，读者据此操作风险自担，本号对因使用上述内容而产生的任何直接或间接损失不承担责任，也不对其准确性、完整性和及时性作出任何保证。\
        转载请注明出处，未经许可不得用于商业用途，违者将依法追究相关责任。\
        如对内容有疑问，请通过页面下方的留言功能与编辑部联系，我们会尽快回复并处理相关问题。";
    let mut engine = engine();
    let first = engine
        .add_document(&article("支教老师到岗", notice), 0)
        .expect("text");
    let other = engine
        .add_document(&article("观鸟步道开放", notice), 1)
        .expect("text");
    // One fingerprint (the body dominates), but the headlines disagree.
    assert_ne!(other.root, first.root);
    let mut lenient = engine_with(ConfirmationConfig {
        neighbour_headline_check: false,
        confirm_identical_fingerprints: false,
        ..ConfirmationConfig::default()
    });
    let first = lenient
        .add_document(&article("支教老师到岗", notice), 0)
        .expect("text");
    let other = lenient
        .add_document(&article("观鸟步道开放", notice), 1)
        .expect("text");
    assert_eq!(other.root, first.root);
}

#[test]
fn long_neighbours_that_share_less_than_half_their_body_stay_apart_unless_allowed() {
    // One headline and one longest sentence (so one simhash), and the
    // rest of the two bodies different: a yearly notice, not a reprint.
    let longest = "市委组织部近日下发通知，要求各级党组织在元旦春节期间认真开展走访慰问老党员和生活困难党员活动。";
    let notice = |rest: &str| {
        article(
            "组织部下发通知开展节日走访慰问",
            &format!("{longest}{rest}"),
        )
    };
    let this_year = notice(
        "通知要求用心用情做好走访工作。对新中国成立前入党的老党员要普遍走访。\
         要关心关爱基层干部。做好因公牺牲干部家属的慰问。",
    );
    let last_year = notice(
        "各地要结合实际制定方案。慰问资金由党费列支并及时拨付。\
         严禁借慰问之名送礼。活动情况请于一月底前报送。",
    );
    let apart = |min_neighbour_jaccard: f64| {
        let mut engine = engine_with(ConfirmationConfig {
            min_neighbour_jaccard,
            ..ConfirmationConfig::default()
        });
        let first = engine.add_document(&this_year, 0).expect("text");
        let second = engine.add_document(&last_year, 1).expect("text");
        second.root != first.root
    };
    assert!(apart(0.5));
    assert!(!apart(0.0), "the same fingerprint joins without the floor");
}

#[test]
fn an_identical_fingerprint_with_other_figures_takes_a_free_one() {
    let report = |figure: &str| {
        article(
            "本周蔬菜价格",
            &format!(
                "市农业部门今天发布本周主要蔬菜批发价格监测情况，各品种价格总体平稳，供应充足，市场运行有序，\
                 部分叶菜受天气影响上市量略有减少，根茎类蔬菜库存较多，预计下周价格仍将保持稳定。\
                 其中白菜每公斤{figure}元，与上周相比有所变化。"
            ),
        )
    };
    let mut engine = engine();
    let first = engine.add_document(&report("1.8"), 0).expect("text");
    let second = engine.add_document(&report("2.3"), 1).expect("text");
    // The longest sentence (and so the simhash) is the same in both.
    let analyzer = engine.analyzer().clone();
    let own = analyzer.analyze_document(&report("2.3")).expect("text");
    assert_eq!(own.fingerprint(), first.fingerprint);
    assert_ne!(second.root, first.root);
    assert_eq!((second.fingerprint ^ first.fingerprint).count_ones(), 1);
    // A later copy of the second report finds its node again.
    let again = engine.add_document(&report("2.3"), 2).expect("text");
    assert_eq!(again.root, second.root);
    // Off: rule 1 joins on the fingerprint alone.
    let mut trusting = engine_with(ConfirmationConfig {
        confirm_identical_fingerprints: false,
        ..ConfirmationConfig::default()
    });
    let first = trusting.add_document(&report("1.8"), 0).expect("text");
    let second = trusting.add_document(&report("2.3"), 1).expect("text");
    assert_eq!(second.root, first.root);
}

#[test]
fn a_report_recurring_past_the_confirmed_probes_still_takes_a_free_node() {
    // Twelve weekly reports of one frame: one fingerprint, other figures.
    // Past the confirmed flips, a report used to join the first one's node
    // unconfirmed; each must stay its own story, and a copy of one still
    // finds it.
    let report = |week: u32| {
        article(
            "本周蔬菜价格",
            &format!(
                "市农业部门今天发布本周主要蔬菜批发价格监测情况，各品种价格总体平稳，供应充足，市场运行有序，\
                 部分叶菜受天气影响上市量略有减少，根茎类蔬菜库存较多，预计下周价格仍将保持稳定。\
                 其中白菜每公斤{}.{}元，与上周相比有所变化。",
                week + 1,
                week % 10
            ),
        )
    };
    let mut engine = engine();
    let weeks = 2 + IDENTICAL_FINGERPRINT_PROBES + 2;
    let placed: Vec<_> = (0..weeks)
        .map(|week| {
            engine
                .add_document(&report(week), i64::from(week))
                .expect("text")
        })
        .collect();
    let roots: std::collections::HashSet<_> = placed.iter().map(|placed| placed.root).collect();
    assert_eq!(roots.len(), placed.len(), "every week is its own story");
    let first = placed[0].fingerprint;
    assert!(
        placed
            .iter()
            .all(|placed| (placed.fingerprint ^ first).count_ones() <= 1)
    );
    let last = weeks - 1;
    let again = engine.add_document(&report(last), 99).expect("text");
    assert_eq!(again.root, placed[last as usize].root);
}

#[test]
fn unrelated_short_texts_are_separate() {
    let mut engine = engine();
    let open = engine.add_text("打开蓝牙", 0);
    assert_ne!(engine.add_text("关闭蓝牙", 1).root, open.root);
}

#[test]
fn analysis_outside_the_engine_places_like_add_text() {
    let mut direct = engine();
    let mut split = engine();
    let analyzer = split.analyzer().clone();
    for text in [
        "周末去哪儿玩？这五个公园的秋景美到不想走",
        "转发：周末去哪儿玩？这五个公园的秋景美到不想走",
        "周末去哪儿玩？这五个公园的秋景美到不想走",
    ] {
        let expected = direct.add_text(text, 0);
        let prepared = analyzer.fingerprinter().prepare(text);
        assert_eq!(split.place(analyzer.analyze(&prepared), 0), expected);
    }
}

#[test]
fn a_rejected_only_document_leaves_no_class_behind() {
    let mut engine = engine();
    let placed = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    assert!(engine.forget_document(placed.fingerprint));
    assert_eq!(engine.forest().stats().nodes, 0);
    let stats = engine.stats();
    assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
    // Nothing left to take back.
    assert!(!engine.forget_document(placed.fingerprint));
}

#[test]
fn forgetting_a_root_with_members_keeps_the_class() {
    let mut engine = engine();
    let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 1);
    assert_eq!(repost.root, original.root);
    assert!(engine.forget_document(original.fingerprint));
    let class = engine.forest().class(original.root).expect("class stays");
    assert_eq!(class.documents, 1);
    // Taking back the last member removes the leaf, then the empty root.
    assert!(engine.forget_document(repost.fingerprint));
    assert_eq!(engine.forest().stats().nodes, 0);
    assert_eq!(engine.stats().side_data_nodes, 0);
}

#[test]
fn a_node_with_other_documents_stays_when_one_is_taken_back() {
    let mut engine = engine();
    let first = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    let second = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 1);
    assert!(second.exact_hit);
    assert!(engine.forget_document(first.fingerprint));
    let node = engine.forest().node(first.fingerprint).expect("node stays");
    assert_eq!(node.documents, 1);
    assert!(
        engine
            .add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 2)
            .exact_hit
    );
}

#[test]
fn a_post_and_its_repost_with_a_comment_join_across_the_short_bound() {
    // 70 letters, and a repost that puts a comment before and after it,
    // past the 100-letter short bound: they meet as posts.
    let post = "地铁三号线东延段今天正式开通运营，沿线共设车站七座，首班车早上六点从起点站发出，末班车晚上十一点收车，票价按里程计算，学生和老人可以享受半价优惠";
    let repost = format!(
        "【扩散】以后上班方便多了！{post}[鼓掌][鼓掌] 转自本地生活号，欢迎大家在评论区留言讨论交流"
    );
    assert!(texts_join(ConfirmationConfig::default(), &[post, &repost]));
    assert!(!texts_join(
        ConfirmationConfig {
            repost_reading: false,
            ..ConfirmationConfig::default()
        },
        &[post, &repost]
    ));
}

#[test]
fn a_tweet_with_a_comment_in_front_and_its_end_cut_joins() {
    let headline =
        "City council approves plan to expand the northern library network with four branches";
    let repost = "Retweeted Metro Desk City council approves plan to expand the northern library network with four .";
    assert!(texts_join(
        ConfirmationConfig::default(),
        &[headline, repost]
    ));
}

#[test]
fn one_sentence_and_the_same_sentence_going_on_stay_apart() {
    let sentence =
        "The striker was suspended for eight games by the league on Friday for a dangerous tackle";
    let more = "The striker was suspended for eight games by the league on Friday for a dangerous tackle, and his club immediately appealed the decision";
    assert!(!texts_join(
        ConfirmationConfig::default(),
        &[sentence, more]
    ));
}

#[test]
fn a_document_tries_a_bounded_number_of_short_candidates_and_still_finds_its_copy() {
    let mut engine = engine();
    let template =
        |figure: usize| format!("全市第{figure}批新增就业岗位一万个，创历史新高，市民纷纷点赞");
    let original = engine.add_text(&template(1), 0);
    // Forty texts of the same frame with other figures: each its own class.
    for figure in 2..42 {
        engine.add_text(&template(figure), figure as Millis);
    }
    let before = engine.stats().confirmations;
    let repost = engine.add_text(&format!("转发：{}", template(1)), 100);
    let tried = engine.stats().confirmations - before;
    assert_eq!(repost.root, original.root);
    // Simhash neighbours come on top of the short-text search's own bound.
    assert!(tried <= MAX_SHORT_CONFIRMATIONS as u64 + 4, "tried {tried}");
    let before = engine.stats().confirmations;
    engine.add_text(&template(99), 101);
    let tried = engine.stats().confirmations - before;
    // Forty candidates, all refused (another figure): the bound holds.
    assert!(
        tried >= MAX_SHORT_CONFIRMATIONS as u64,
        "tried only {tried}"
    );
    assert!(tried <= MAX_SHORT_CONFIRMATIONS as u64 + 4, "tried {tried}");
}

#[test]
fn one_confirmed_member_of_a_class_is_enough() {
    let mut engine = engine();
    let text = "周末去哪儿玩？这五个公园的秋景美到不想走，快收藏";
    let original = engine.add_text(text, 0);
    // Copies of one class, each a distinct node (different prefixes).
    for (index, prefix) in ["转发：", "推荐：", "分享：", "收藏："].iter().enumerate() {
        let copy = engine.add_text(&format!("{prefix}{text}"), index as Millis + 1);
        assert_eq!(copy.root, original.root);
    }
    let before = engine.stats().confirmations;
    let last = engine.add_text(&format!("好文：{text}"), 10);
    assert_eq!(last.root, original.root);
    let tried = engine.stats().confirmations - before;
    // Without the bound each of the five members would be tried.
    assert!(tried <= 3, "tried {tried}");
}

#[test]
fn two_notices_of_one_form_that_swap_the_streets_stay_apart_and_a_reprint_joins() {
    let closure = |between: &str| {
        article(
            "Road closure",
            &format!(
                "Elm Street between {between} will be closed to through traffic from May 2 through \
                 May 9 for sewer work, the Riverton Public Works Department said. Work will take \
                 place during the day. Local traffic and emergency vehicles will have access. \
                 Drivers should use Mill Road as a detour, and detour signs will be posted. The \
                 schedule may change because of weather. For updates, call the department."
            ),
        )
    };
    let place = |confirmation: ConfirmationConfig| {
        let mut engine = engine_with(confirmation);
        let first = engine
            .add_document(&closure("Oak Avenue and Cedar Lane"), 0)
            .expect("text");
        let other = engine
            .add_document(&closure("Birch Road and Walnut Drive"), 1)
            .expect("text");
        let mut reprint = closure("Oak Avenue and Cedar Lane");
        reprint["title"] = "Road closure (Riverton Daily)".into();
        let reprinted = engine.add_document(&reprint, 2).expect("text");
        (first.root, other.root, reprinted.root)
    };
    let (first, other, reprinted) = place(ConfirmationConfig::default());
    assert_ne!(first, other, "another notice of the form");
    assert_eq!(first, reprinted, "a reprint credited in the headline");
    let (first, other, _) = place(ConfirmationConfig {
        lead_span_check: false,
        ..ConfirmationConfig::default()
    });
    assert_eq!(first, other, "without the check, the form's notices join");
}
