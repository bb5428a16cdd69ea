//! Unit tests of the in-order comparison and the repost reading (property
//! tests in `tests/integration/edits_props.rs`).

use super::letters::{CREDIT_OPENINGS, CREDIT_WORDS, letter_of};
use super::*;

#[test]
fn an_added_prefix_and_tag_leave_the_shorter_text_whole() {
    let summary = compare(
        "周末去哪儿玩这五个公园",
        "转发：周末去哪儿玩？这五个公园 #出行#",
    );
    assert_eq!(summary.unmatched_in_shorter, 0);
    assert_eq!(summary.interior_substitutions, 0);
    assert!(!summary.numeral_replaced);
    assert!(!summary.identical());
}

#[test]
fn one_swapped_word_is_one_interior_substitution() {
    let summary = compare("市长今天会见外国客人", "市长今天会晤外国客人");
    assert_eq!(summary.unmatched_in_shorter, 1);
    assert_eq!(summary.interior_substitutions, 1);
    assert!(!summary.numeral_replaced);
}

#[test]
fn the_same_words_in_another_order_leave_much_unmatched() {
    let summary = compare("从东湖公园骑车到西山森林", "从西山森林骑车到东湖公园");
    assert!(summary.unmatched_in_shorter >= 4, "{summary:?}");
    // Two single-character swaps are two substitutions.
    let swapped = compare("请从北门进站南门出站", "请从南门进站北门出站");
    assert_eq!(swapped.interior_substitutions, 2);
}

#[test]
fn a_numeral_replaced_by_another_is_noticed() {
    assert!(
        compare(
            "第十届读书节第一次筹备会召开",
            "第十届读书节第二次筹备会召开"
        )
        .numeral_replaced
    );
    assert!(compare("七点半叫我起床", "九点半叫我起床").numeral_replaced);
    // Adding a word that contains a numeral is not a replacement.
    assert!(!compare("各地加强秋季防火", "各地进一步加强秋季防火").numeral_replaced);
}

#[test]
fn a_swapped_content_word_is_a_replacement_and_a_swapped_function_word_is_not() {
    let swapped = compare("本台明天将直播运动会开幕式", "本台明天将直播运动会闭幕式");
    assert!(swapped.content_word_changed && swapped.content_word_replaced);
    let function = compare("怎么评价这部新电影", "如何评价这部新电影");
    assert!(!function.content_word_changed, "{function:?}");
    let english = compare(
        "bank adds reserves via three day repurchases",
        "bank adds reserves via customer repurchases",
    );
    assert!(english.content_word_replaced, "{english:?}");
    let english_function = compare("output rose in the year", "output rose in a year");
    assert!(
        !english_function.content_word_changed,
        "{english_function:?}"
    );
}

#[test]
fn characters_added_inside_a_word_or_an_added_time_or_name_change_content() {
    // "李强" / "李克强": one character more makes another name.
    let inside = compare("李强会见外国客人", "李克强会见外国客人");
    assert!(inside.content_word_changed && !inside.content_word_replaced);
    let time = compare("宣传日活动举行", "宣传日活动今天举行");
    assert!(time.content_word_changed, "{time:?}");
    // A whole filler word between two words is not.
    let filler = compare("各地加强秋季防火", "各地进一步加强秋季防火");
    assert!(!filler.content_word_changed, "{filler:?}");
}

#[test]
fn a_credit_line_before_the_body_is_at_an_edge() {
    let summary = compare(
        "图书馆延长开放时间\u{1e}周一至周五开放至晚上九点",
        "图书馆延长开放时间\u{1e}来源第八报周一至周五开放至晚上九点",
    );
    assert!(!summary.content_word_changed, "{summary:?}");
    // Inside a field, an added name of a time is a change.
    let summary = compare(
        "图书馆延长开放时间\u{1e}周一至周五开放至晚上九点",
        "图书馆延长开放时间\u{1e}周一至周五明天开放至晚上九点",
    );
    assert!(summary.content_word_changed, "{summary:?}");
}

#[test]
fn an_insertion_that_can_be_aligned_at_a_word_boundary_is_a_whole_word() {
    // "进入" / "进一步进入" also aligns as "进|一步进|入", inside 进入.
    let summary = compare("海带进入收获季节", "海带进一步进入收获季节");
    assert!(!summary.content_word_changed, "{summary:?}");
    // A dropped particle was a word of its own, even where the words
    // left around it read as one ("最牛的车" / "最牛车": 牛车).
    let summary = compare("他开着全城最牛的车去上班", "他开着全城最牛车去上班");
    assert!(!summary.content_word_changed, "{summary:?}");
    // Punctuation separates words: "火热？带你" is not "热带".
    let summary = compare("为何如此火热？带你看趋势", "为何如此火热？已带你看趋势");
    assert!(!summary.content_word_changed, "{summary:?}");
}

#[test]
fn an_added_prefix_is_one_leading_gap_even_when_it_shares_letters() {
    let summary = compare(
        "reagan says volcker will not serve",
        "breaking: reagan says volcker will not serve",
    );
    assert_eq!(summary.interior_substitutions, 0, "{summary:?}");
    assert!(!summary.content_word_changed, "{summary:?}");
    let mut gaps = 0;
    let (left, right) = (['a', 'b', 'c'], ['x', 'a', 'y', 'a', 'b', 'c']);
    assert_eq!(align(&left, &right, |_, _, _| gaps += 1), 3);
    assert_eq!(gaps, 1, "one leading gap, not a matched early 'a'");
}

#[test]
fn marked_tags_are_not_edits_and_words_run_into_the_text_are() {
    let tagged = compare(
        "国家医保局推动医保高质量发展",
        "【国内】国家医保局推动医保高质量全面发展 #医保#",
    );
    assert_eq!(tagged.unmarked_edits, 1, "one added word: {tagged:?}");
    assert!(!tagged.content_word_changed, "{tagged:?}");
    let run_in = compare("强降雨持续各地全力防汛", "长江中下游强降雨持续各地全力防汛");
    assert!(run_in.content_word_changed, "{run_in:?}");
    assert_eq!(run_in.unmarked_edits, 1, "{run_in:?}");
    // Two separate words added inside: a rewrite, not a repost.
    let two = compare(
        "组织部印发在防汛救灾中发挥作用的通知",
        "中共组织部印发在防汛抢险救灾中发挥作用的通知",
    );
    assert_eq!(two.unmarked_edits, 2, "{two:?}");
    // A two-character "转发" typed after the post is a repost's mark.
    let repost = compare("湖南一条高速隧道今天贯通", "湖南一条高速隧道今天贯通转发");
    assert!(!repost.content_word_changed, "{repost:?}");
}

#[test]
fn credit_lines_are_marked_and_ordinary_words_are_not() {
    let credited = |text: &str| -> String {
        let letters = Letters::of(text);
        letters
            .chars
            .iter()
            .zip(&letters.credit)
            .filter(|&(_, &credit)| credit)
            .map(|(&c, _)| c)
            .collect()
    };
    assert_eq!(credited("（来源：新华社）全市秋粮收获过半"), "来源新华社");
    assert_eq!(credited("全市秋粮收获过半——来自人民网"), "来自人民网");
    assert_eq!(credited("来自世界各地的选手 齐聚赛场"), "");
    // English words are chunks of their own: the word after the opener.
    assert_eq!(credited("rates rise via reuters"), "viareuters");
    let swapped = compare(
        "（来源：新华社）全市秋粮收获过半",
        "（来源：人民网）全市秋粮收获过半",
    );
    assert_eq!(swapped.unmatched_in_shorter, 0, "{swapped:?}");
    assert!(!swapped.content_word_changed && swapped.unmarked_edits == 0);
}

#[test]
fn a_dropped_content_word_inside_is_noticed() {
    let summary = compare(
        "本台明天将直播全国政协十四届二次会议",
        "本台明天将直播十四届全国人大二次会议",
    );
    assert!(summary.content_word_dropped, "{summary:?}");
    assert!(!compare("今天的天气很好", "今天天气很好").content_word_dropped);
}

#[test]
fn gaps_are_reported_with_their_position() {
    let mut gaps = Vec::new();
    let (left, right) = ([9, 1, 2, 3, 4], [1, 7, 3, 4, 5, 6]);
    let common = align(&left, &right, |ours, theirs, position| {
        gaps.push((left[ours].to_vec(), right[theirs].to_vec(), position));
    });
    assert_eq!(common, 3);
    assert_eq!(
        gaps,
        vec![
            (vec![9], vec![], GapPosition::Leading),
            (vec![2], vec![7], GapPosition::Interior),
            (vec![], vec![5, 6], GapPosition::Trailing),
        ]
    );
    let mut positions = Vec::new();
    align(&[1], &[2], |_, _, position| positions.push(position));
    assert_eq!(positions, vec![GapPosition::Leading]);
}

#[test]
fn punctuation_case_and_field_separators_are_ignored() {
    // Letters keep their case for the repost reading, and are compared
    // lowercased.
    let summary = compare("Hello, world!", "hello world");
    assert!(summary.identical());
    let summary = compare("标题\u{1e}正文", "标题正文");
    assert!(summary.identical());
}

#[test]
fn a_comment_around_a_post_lies_outside_the_shared_span() {
    let post = "Library opens new branch in the north end of town";
    let repost = "Great news for us. Library opens new branch in the north end of town #local";
    let reading = compare(post, repost).repost;
    assert_eq!(reading.span_chars, compare(post, repost).shorter_chars);
    assert_eq!(reading.cut_chars, 0);
    assert_eq!(reading.inside_edits, 0);
    assert_eq!(reading.clauses, 0, "{reading:?}");
}

#[test]
fn a_clause_that_continues_the_sentence_is_not_a_comment() {
    let sentence = "The council approved the budget for the new library";
    let longer = "The council approved the budget for the new library, and the mayor vetoed it";
    assert_eq!(compare(sentence, longer).repost.clauses, 1);
    // A new sentence (a capital after the break) is a comment.
    let commented = "The council approved the budget for the new library Finally some good news";
    assert_eq!(compare(sentence, commented).repost.clauses, 0);
    // Chinese words run into the text are part of the sentence.
    assert_eq!(
        compare(
            "强降雨持续到周末出行请注意安全",
            "长江中下游强降雨持续到周末出行请注意安全"
        )
        .repost
        .clauses,
        1
    );
}

#[test]
fn what_a_cut_post_hid_after_its_ellipsis_is_not_a_clause() {
    let full = "市图书馆今天起延长开放时间，周一至周五晚上闭馆时间推迟，周末全天开放，\
                读者可以在网上预约座位，馆内还新增了自助借还设备和儿童阅读区，欢迎市民前往";
    let cut = "市图书馆今天起延长开放时间，周一至周五晚上闭馆时间推迟，周末全天开放，\
               读者可以在网上预约座位，馆内还新... ";
    let reading = compare(cut, full).repost;
    assert!(reading.span_chars >= 40, "{reading:?}");
    assert_eq!(reading.clauses, 0, "{reading:?}");
    assert_eq!(reading.content_changes, 0, "{reading:?}");
    // The letters a node keeps end in the cut mark, and read the same.
    let kept = crate::fingerprint::letters::letters_with_breaks(cut);
    assert!(kept.ends_with(crate::fingerprint::letters::CUT_MARK));
    assert_eq!(compare(&kept, full).repost, reading);
    // Without the ellipsis the longer text's sentence goes on.
    let ended = cut.trim_end_matches([' ', '.']);
    assert_eq!(compare(ended, full).repost.clauses, 1);
    // A headline's span is too short to tell a cut from another story.
    let headline = "Council approves the budget...";
    let other = "Council approves the budget, mayor vetoes it at once";
    assert_eq!(compare(headline, other).repost.clauses, 1);
}

#[test]
fn what_a_platform_writes_after_its_cut_is_left_out() {
    let full = "市图书馆今天起延长开放时间，周一至周五晚上闭馆时间推迟，周末全天开放，\
                读者可以在网上预约座位，馆内还新增了自助借还设备和儿童阅读区，欢迎市民前往";
    let opening = "市图书馆今天起延长开放时间，周一至周五晚上闭馆时间推迟，周末全天开放，\
                   读者可以在网上预约座位，馆内还新";
    for trailer in ["…全文", "... 网页链接", "…… 全文：", "… via"] {
        let cut = format!("{opening}{trailer}");
        let reading = compare(&cut, full).repost;
        assert!(
            reading.cut_short && reading.rest_hidden_by_cut(),
            "{trailer}: {reading:?}"
        );
        assert_eq!(
            (reading.cut_chars, reading.clauses),
            (0, 0),
            "{trailer}: {reading:?}"
        );
        assert_eq!(reading.content_changes, 0, "{trailer}: {reading:?}");
    }
    // Five letters after an ellipsis are more text, not the platform's.
    let reading = compare(&format!("{opening}… 请大家转发"), full).repost;
    assert!(!reading.cut_short, "{reading:?}");
}

#[test]
fn a_word_rewritten_around_a_letter_it_keeps_is_one_edit() {
    let edits = |ours: &str, theirs: &str| compare(ours, theirs).repost.inside_edits;
    // 修建 / 建造: one text has a letter before 建, the other one after.
    assert_eq!(
        edits(
            "市里计划修建一座新的跨江大桥",
            "市里计划建造一座新的跨江大桥"
        ),
        1
    );
    // Two letters changed two letters apart are two edits.
    assert_eq!(
        edits(
            "市里计划修建一座新的跨江大桥",
            "市里计划建一造座新的跨江大桥"
        ),
        2
    );
    // Letters added on the same side around a kept one: two edits.
    assert_eq!(
        edits(
            "市里计划建一座新的跨江大桥",
            "市里计划修建造一座新的跨江大桥"
        ),
        2
    );
}

#[test]
fn a_word_swapped_for_its_opposite_is_a_changed_fact() {
    let text = "据统计，今年前三个季度全市外贸进出口总额同比增长百分之十二，其中民营企业贡献最大";
    let facts = |other: &str| compare(text, other).repost.fact_changes;
    assert_eq!(facts(&text.replacen("增长", "下降", 1)), 1);
    assert_eq!(facts(&text.replacen("增长", "减少", 1)), 1);
    // A near-synonym is no fact (it may still count as a reworded word).
    assert_eq!(facts(&text.replacen("增长", "提高", 1)), 0);
}

#[test]
fn a_wire_byline_after_a_headline_is_not_a_clause() {
    let headline = "Council approves the budget for the new library";
    let clauses = |longer: &str| compare(headline, longer).repost.clauses;
    assert_eq!(clauses(&format!("{headline} by JANE DOE")), 0);
    assert_eq!(
        clauses(&format!("{headline} by JOHN Q. PUBLIC and MARY ROE")),
        0
    );
    // Who did it, in capitals or not, says more.
    assert_eq!(clauses(&format!("{headline} by NYPD officers")), 1);
    assert_eq!(clauses(&format!("{headline} by a narrow vote")), 1);
}

#[test]
fn hashtags_mentions_and_glued_repost_markers_at_an_edge_are_not_clauses() {
    let headline = "CITY COUNCIL APPROVES NEW LIBRARY BUDGET";
    let clauses = |longer: &str| compare(headline, longer).repost.clauses;
    assert_eq!(
        clauses("#local city council approves new library budget #news"),
        0
    );
    assert_eq!(
        clauses("city council approves new library budget @citydesk"),
        0
    );
    // The same words without the sign continue the sentence.
    assert_eq!(clauses("local city council approves new library budget"), 1);
    // Only tags: one plain word among them makes it a clause again.
    assert_eq!(
        clauses("#local news city council approves new library budget"),
        1
    );
    let post = "南湖大桥主体结构今天顺利合龙";
    assert_eq!(
        compare(post, "南湖大桥主体结构今天顺利合龙转发！！")
            .repost
            .clauses,
        0
    );
    assert_eq!(
        compare(post, "南湖大桥主体结构今天顺利合龙通车在即")
            .repost
            .clauses,
        1
    );
}

#[test]
fn an_inserted_word_is_judged_where_it_aligns_as_one_word() {
    // "进一步" before "进入" may be aligned as "一步进", three words; it is one adverb.
    let adverb = compare("南湖工程进入收尾阶段", "南湖工程进一步进入收尾阶段");
    assert_eq!(adverb.repost.content_changes, 0, "{adverb:?}");
    // Words that say more are a clause wherever they align.
    let clause = compare("南湖工程进入收尾阶段", "南湖工程加快建设并进入收尾阶段");
    assert_eq!(clause.repost.content_changes, 1, "{clause:?}");
}

#[test]
fn a_swapped_name_or_figure_inside_the_span_is_a_fact() {
    let reading = compare(
        "第十届读书节第一次筹备会今天在市图书馆召开",
        "第十届读书节第二次筹备会今天在市图书馆召开",
    )
    .repost;
    assert_eq!(reading.figure_changes, 1, "{reading:?}");
    let reading = compare(
        "Harry paid $ 7,000 to paint the portrait",
        "Harry paid 7,500 to paint the portrait",
    )
    .repost;
    assert_eq!(reading.figure_changes, 1, "{reading:?}");
}

#[test]
fn digits_lost_from_the_front_of_a_number_are_not_another_figure() {
    let reading = compare(
        "The band raised $620G after the interview aired",
        "The band raised 20G after the interview aired",
    )
    .repost;
    assert_eq!(reading.figure_changes, 0, "{reading:?}");
    assert_eq!(reading.inside_edits, 1);
}

#[test]
fn in_a_post_a_replaced_title_is_cut_but_in_a_headline_it_is_the_news() {
    let body = "今天上午市政府召开新闻发布会，介绍了城市更新三年行动计划的主要内容和时间安排，并回答了记者提问";
    let post = format!("【城市更新三年行动】{body}");
    let repost = format!("【你关心的都在这里】{body}");
    let reading = compare(&post, &repost).repost;
    assert_eq!(
        (reading.content_changes, reading.fact_changes),
        (0, 0),
        "{reading:?}"
    );
    let reading = compare("青春之城|今晚在综合频道开播", "淬火|今晚在综合频道开播").repost;
    assert!(
        reading.content_changes + reading.fact_changes > 0,
        "{reading:?}"
    );
}

#[test]
fn the_fast_letter_reading_is_the_lowercased_letter_or_digit() {
    let slow =
        |c: char| normalize::is_letter_or_digit(c).then(|| c.to_lowercase().next().unwrap_or(c));
    let samples = (0..0x3400u32)
        .chain(0x4d00..0xa100)
        .chain(0x1_0000..0x1_0400)
        .chain(0x2_0000..0x2_0100)
        .filter_map(char::from_u32);
    for c in samples {
        assert_eq!(letter_of(c), slow(c), "{c:?}");
    }
}

#[test]
fn two_reposts_that_label_one_post_their_own_way_differ_in_nothing() {
    let config = crate::confirm::ConfirmationConfig::default();
    let read = |ours: &str, theirs: &str| compare_with(ours, theirs, &config.synonyms);
    let post = "城北区举办春季植树活动 新增绿地3.2万亩";
    let labelled = [
        format!("转发：{post}"),
        format!("转发微博//@林间小路：{post}"),
        format!("快讯｜{post}"),
        format!("RT {post}"),
    ];
    for ours in &labelled {
        for theirs in &labelled {
            let summary = read(ours, theirs);
            assert_eq!(
                summary.repost.cut_chars, 0,
                "{ours} / {theirs}: {summary:?}"
            );
            assert_eq!(
                summary.repost.inside_edits, 0,
                "{ours} / {theirs}: {summary:?}"
            );
            assert!(
                crate::confirm::repost_allows_join(&summary, &config),
                "{ours} / {theirs}: {summary:?}"
            );
        }
    }
    // A label is a chunk of its own at the opening: a word that begins
    // with one, or one inside the text, is read as the text.
    let credit = |text: &str| super::letters::Letters::of(text).credit;
    assert_eq!(credit("分享：城北区新增门店")[..3], [true, true, false]);
    assert!(!credit("分享经济在城北区迎来新机遇").contains(&true));
    assert!(!credit("城北区今日快讯：春季植树活动新增绿地").contains(&true));
    assert!(!credit("转发").contains(&true));
}

#[test]
fn credit_words_are_found_wherever_they_stand() {
    let may_hold_credit = |text: &str| OutlineLetters::of(text).may_hold_credit;
    assert!(may_hold_credit("今天下雨。来源：新华社"));
    assert!(may_hold_credit("Rain today (Reporting by Jane Doe)"));
    assert!(may_hold_credit("编辑"));
    assert!(!may_hold_credit("今天北京下雨"));
    assert!(!may_hold_credit("来到源头"));
    // A repost's label opens the text.
    assert!(may_hold_credit("转发：今天北京下雨"));
    assert!(may_hold_credit("RT @weather: rain today"));
    // Every opening that marks a credit by itself is a credit word too.
    for opening in CREDIT_OPENINGS.iter().chain(&["来自"]) {
        assert!(CREDIT_WORDS.contains(opening), "{opening}");
    }
}

#[test]
fn a_word_swapped_for_its_thesaurus_synonym_is_no_fact_even_when_tagged_as_one() {
    // jieba reads "同比增加" as one word it tags as a numeral; the thesaurus
    // pairs 增长 / 增加.
    let lead = "记者从市商务局获悉，前三季度，全市外贸进出口总值同比增长19.4%。";
    let reading = compare_with(lead, &lead.replace("增长", "增加"), &Synonyms::builtin()).repost;
    assert_eq!(
        (reading.content_changes, reading.fact_changes),
        (0, 0),
        "{reading:?}"
    );
}

#[test]
fn a_last_word_swapped_for_its_synonym_before_a_tag_is_no_change() {
    // The alignment ends the shared span before the swapped word, so the
    // word and the tag after it are one gap outside the span.
    let post = "2月22日，城北街道启动义务植树活动，干部群众5447余人参加。";
    let repost = format!("{} #城北新闻#", post.replace("参加", "参与"));
    let reading = compare_with(post, &repost, &Synonyms::builtin()).repost;
    assert_eq!(
        (reading.content_changes, reading.fact_changes),
        (0, 0),
        "{reading:?}"
    );
    // A word the thesaurus does not pair still counts.
    let other = format!("{} #城北新闻#", post.replace("参加", "围观"));
    let reading = compare_with(post, &other, &Synonyms::builtin()).repost;
    assert!(
        reading.content_changes + reading.fact_changes > 0,
        "{reading:?}"
    );
}

#[test]
fn a_compound_reworded_with_one_character_is_no_change_unless_its_opposite() {
    let reading =
        |ours: &str, theirs: &str| compare_with(ours, theirs, &Synonyms::default()).repost;
    let post = "城北五一假期接待游客30.5万人次，同比明显回升";
    let reworded = reading(post, &post.replace("游客", "旅客"));
    assert_eq!(reworded.content_changes, 0, "{reworded:?}");
    // Opposites and a series are other facts.
    let headline = "第十四届运动会在城北体育中心隆重开幕";
    assert_eq!(
        reading(headline, &headline.replace("开幕", "闭幕")).content_changes,
        1
    );
    // A start and a finish are other facts too.
    let works = "城北区人民路改造工程今天正式开工，预计明年五月通车";
    assert_eq!(
        reading(works, &works.replace("开工", "完工")).content_changes,
        1
    );
    let medal = "城北选手在省运会女子跳水比赛中夺得金牌";
    assert_eq!(
        reading(medal, &medal.replace("金牌", "银牌")).content_changes,
        1
    );
    // Two characters of a word replaced are another word.
    assert_eq!(
        reading(post, &post.replace("游客", "市民")).content_changes,
        1
    );
}

#[test]
fn a_partys_full_name_swapped_in_a_short_form_is_a_changed_fact() {
    let facts = |ours: &str, theirs: &str| {
        compare_with(ours, theirs, &Synonyms::default())
            .repost
            .fact_changes
    };
    // Behind a role word, also at the text's start; a one-sided gap inside
    // a name of one surname ("岳宁鹏" / "岳秋宁").
    let plaintiff = |party: &str| {
        format!("原告{party}不服被告城南区市场监督管理局作出的行政处罚决定，向本院提起行政诉讼。")
    };
    assert!(facts(&plaintiff("田志远"), &plaintiff("韩晓梅")) > 0);
    let appeal = |party: &str| {
        format!("上诉人{party}因与被上诉人城南建设工程有限公司买卖合同纠纷一案，向本院提起上诉。")
    };
    assert!(facts(&appeal("岳宁鹏"), &appeal("岳秋宁")) > 0);
    assert!(facts(&appeal("岳宁鹏"), &format!("转发：{}", appeal("岳宁鹏"))) == 0);
    // English: a capitalised name after its role word.
    let hearing = |party: &str| {
        format!(
            "Superior Court: Plaintiff {party} v. Cobalt Logistics Inc., a hearing is set for March 3."
        )
    };
    assert!(facts(&hearing("Joshua Dixon"), &hearing("John Dixon")) > 0);
    // Two first names that share letters: the alignment matches "an" and
    // leaves a gap on one side only at each end.
    assert!(facts(&hearing("Sean Dixon"), &hearing("Andrew Dixon")) > 0);
    // A word added to a name, or the same name reposted, is no swap.
    assert!(facts(&hearing("John Dixon"), &hearing("John Dixon Jr")) == 0);
    assert!(
        facts(
            &hearing("John Dixon"),
            &format!("RT {}", hearing("John Dixon"))
        ) == 0
    );
    // A name grown into a hashtag around the other's is the same name.
    let audit =
        |party: &str| format!("Auditors will look again at the tender of {party} this spring");
    assert!(facts(&audit("Marlow"), &audit("#CityOfMarlow")) == 0);
}

#[test]
fn a_verb_reworded_in_a_post_joins_and_a_noun_or_a_headline_does_not() {
    let config = crate::confirm::ConfirmationConfig::default();
    let joins = |ours: &str, theirs: &str| {
        crate::confirm::repost_allows_join(&compare_with(ours, theirs, &config.synonyms), &config)
    };
    // A post of 20 to 39 letters: one verb swapped for another that no
    // thesaurus lists, and a tag added.
    let post = "城北区卫生健康局表示，今年全区共建成社区卫生服务站12个。";
    let reworded = format!("转发：{} #城北#", post.replace("表示", "透露"));
    let reading = compare_with(post, &reworded, &config.synonyms).repost;
    assert_eq!(
        (reading.content_changes, reading.predicate_swaps),
        (1, 1),
        "{reading:?}"
    );
    assert!(joins(post, &reworded));
    // A noun swapped names another thing.
    let orchard = "城北区今年春季在滨河公园种植苹果树三千株，市民可以认领。";
    assert!(!joins(orchard, &orchard.replace("苹果", "香蕉")));
    // A headline is mostly its one fact: its verb swapped is another story.
    let headline = "城北图书馆举办读书分享活动";
    assert!(!joins(headline, &headline.replace("举办", "策划")));
}

#[test]
fn a_word_whose_sense_is_reversed_is_a_changed_fact_however_long_the_post() {
    let reading =
        |ours: &str, theirs: &str| compare_with(ours, theirs, &Synonyms::default()).repost;
    let post = "城北图书馆自下周一起恢复周末读书分享活动，读者可以在图书馆官方平台提前预约参加，每场限额五十人。";
    assert!(post.chars().count() > 40);
    // 恢复 / 暂停: no listed pair of opposite characters, one side stops.
    assert!(reading(post, &post.replace("恢复", "暂停")).fact_changes > 0);
    // Two words that both lower something keep the sense.
    let figure = "今年一季度城北区工业用电量同比下降，主要是部分高耗能企业主动调整生产计划所致。";
    assert_eq!(
        reading(figure, &figure.replace("下降", "减少")).fact_changes,
        0
    );
}

#[test]
fn a_verb_of_an_act_not_yet_done_swapped_for_one_done_is_a_changed_fact() {
    let config = crate::confirm::ConfirmationConfig::default();
    let reading = |ours: &str, theirs: &str| compare_with(ours, theirs, &config.synonyms).repost;
    let joins = |ours: &str, theirs: &str| {
        crate::confirm::repost_allows_join(&compare_with(ours, theirs, &config.synonyms), &config)
    };
    let post = "城北图书馆本周开展青少年科普读书月活动，欢迎市民参加。";
    // Planned and held: another stage of the act, in any length of post.
    assert!(reading(post, &post.replace("开展", "筹备")).fact_changes > 0);
    assert!(!joins(
        post,
        &format!("转发：{}", post.replace("开展", "筹备"))
    ));
    let long = "城北图书馆本周开展青少年科普读书月活动，欢迎市民带孩子参加，活动期间每天下午安排两场专家讲座和互动实验。";
    assert!(long.chars().count() > 40);
    assert!(reading(long, &long.replace("开展", "筹备")).fact_changes > 0);
    // A deed reworded as a deed, a plan as a plan: one stage.
    assert!(joins(
        post,
        &format!("转发：{}", post.replace("开展", "举办"))
    ));
    let plan = "城北图书馆本周筹备青少年科普读书月活动，欢迎市民参加。";
    assert_eq!(reading(plan, &plan.replace("筹备", "准备")).fact_changes, 0);
}

#[test]
fn a_notice_addressed_to_another_person_is_a_changed_fact() {
    let facts = |ours: &str, theirs: &str| compare(ours, theirs).repost.fact_changes;
    let summons = |name: &str| {
        format!(
            "{name}：本院受理原告城南建材有限公司诉你买卖合同纠纷一案，现依法向你公告送达起诉状副本。"
        )
    };
    // Names of no shared letter (the name reads as a title marked off), and
    // a given character more inside the same surname.
    assert!(facts(&summons("苏瑶"), &summons("任佳晨")) > 0);
    assert!(facts(&summons("韦舒"), &summons("韦亮舒")) > 0);
    assert_eq!(
        facts(&summons("苏瑶"), &format!("转发：{}", summons("苏瑶"))),
        0
    );
    // A repost's title marked off before the text may still change, and a
    // mention is no addressee.
    let post = "城北区今年新建社区卫生服务站十二个，覆盖常住居民约八万人，方便周边群众就近看病就医和购药。";
    assert_eq!(facts(&format!("快讯：{post}"), &format!("转发：{post}")), 0);
    assert_eq!(
        facts(&format!("@苏瑶：{post}"), &format!("@任佳晨：{post}")),
        0
    );
}

#[test]
fn a_notice_under_a_title_or_too_long_for_the_reading_keeps_its_addressee() {
    use crate::fingerprint::{FIELD_SEPARATOR, FingerprintConfig, Fingerprinter};
    // Under a title, the body's opening name is the addressee.
    let titled = |name: &str| {
        format!(
            "公告{FIELD_SEPARATOR}{name}：本院受理原告城南建材有限公司诉你买卖合同纠纷一案，现依法向你公告送达起诉状副本。"
        )
    };
    assert!(
        compare(&titled("苏瑶"), &titled("任佳晨"))
            .repost
            .fact_changes
            > 0
    );
    // Read from the letters a node keeps (one mark where punctuation stood).
    let opens_apart = |ours: &str, theirs: &str| {
        use crate::fingerprint::letters::letters_with_breaks;
        let theirs = letters_with_breaks(theirs);
        opens_to_another_person(&letters_with_breaks(ours), || &theirs)
    };
    // A text that opens with no name does not ask for the other's letters
    // (a candidate's are decoded from its record only if asked for).
    let no_name = crate::fingerprint::letters::letters_with_breaks("城北区，今年新建服务站");
    assert!(!opens_to_another_person(&no_name, || unreachable!(
        "the candidate's letters are read only when ours opens with a name"
    )));
    assert!(opens_apart(&titled("韦舒"), &titled("韦亮舒")));
    assert!(!opens_apart(&titled("韦舒"), &titled("韦舒")));
    assert!(!opens_apart(
        "城北区，今年新建服务站",
        "城南区，今年新建服务站"
    ));
    assert!(!opens_apart(
        "@苏瑶：今年新建服务站",
        "@任佳晨：今年新建服务站"
    ));
    // A summons of more than 100 letters is compared as a long text (its lead
    // keeps no colon): the whole engine keeps the two addressees apart, and
    // joins a reprint of one.
    let summons = |name: &str| {
        format!(
            "{name}：本院受理原告城南建材有限公司诉你买卖合同纠纷一案，现依法向你公告送达起诉状副本、应诉通知书、举证通知书及开庭传票。自公告之日起经过三十日即视为送达。提出答辩状和举证的期限分别为公告期满后十五日和三十日内，并定于举证期满后第三日上午九时在本院第六法庭公开开庭审理，逾期将依法缺席判决。"
        )
    };
    let fingerprinter = Fingerprinter::new(FingerprintConfig::default()).expect("valid");
    let joins = |first: &str, second: &str| {
        crate::explain::explain(
            &fingerprinter,
            &crate::confirm::ConfirmationConfig::default(),
            3,
            &fingerprinter.prepare(first),
            &fingerprinter.prepare(second),
        )
        .expect("k = 3 is valid")
        .joins
    };
    assert!(summons("苏瑶").chars().count() > 100);
    assert!(!joins(&summons("苏瑶"), &summons("任佳晨")));
    assert!(!joins(&summons("韦舒"), &summons("韦亮舒")));
    assert!(joins(
        &summons("苏瑶"),
        &format!("{}（来源：城南法院）", summons("苏瑶"))
    ));
}
