//! The Explorer's class page: a class's members on a timeline, and each
//! member compared with the root (the rule that joined it, the figures, the
//! words that differ).

use std::fmt::Write;

use super::overview::ClassSummary;
use super::render::{Lang, escape, layout, link, time_element, time_text};
use crate::explain::{Explanation, Figure, Rule, Span};
use crate::units::{Fingerprint, Millis, format_fingerprint};

/// One document of a class, as the class page shows it.
pub struct MemberView {
    pub index: String,
    pub id: String,
    pub title: String,
    pub outlet: Option<String>,
    pub url: Option<String>,
    /// The document's own time (`published_at` and the like), else its
    /// variant's arrival.
    pub time: Option<Millis>,
    /// `time` is the arrival (the document has no time of its own).
    pub time_is_arrival: bool,
    pub simhash: Option<Fingerprint>,
    pub comparison: Comparison,
}

/// A member against the class's root document.
pub enum Comparison {
    /// This is the root document.
    Root,
    /// The explanation and the field-by-field diff.
    Compared {
        explanation: Box<Explanation>,
        fields: Vec<FieldDiff>,
    },
    /// Not compared (beyond the page's limit, or no text), and why.
    NotCompared(String),
}

/// One fingerprinted field of the root and of the member, cut into runs.
pub struct FieldDiff {
    pub field: String,
    pub root: Vec<Span>,
    pub member: Vec<Span>,
}

/// What the class page shows.
pub struct ClassPageView<'a> {
    pub lang: Lang,
    pub root: Fingerprint,
    pub index: Option<&'a str>,
    /// The forest's view of the class (`None`: expired or unknown).
    pub summary: Option<&'a ClassSummary>,
    /// Documents the cluster found with this `cluster_root`.
    pub cluster_total: u64,
    pub members: &'a [MemberView],
    pub notice: Option<String>,
}

pub fn class_page(view: &ClassPageView<'_>) -> String {
    let lang = view.lang;
    let root = format_fingerprint(view.root);
    let mut body = String::new();
    let back = link("", lang, view.index, &[]);
    let headline = view
        .members
        .iter()
        .find(|member| matches!(member.comparison, Comparison::Root))
        .or(view.members.first())
        .map_or_else(|| root.clone(), |member| member.title.clone());
    let _ = write!(
        body,
        "<p><a href=\"{}\">← {}</a></p>\n<h1>{}</h1>\n<p class=\"class-id\">cluster_root <code>{root}</code></p>\n",
        escape(&back),
        lang.t("all stories", "全部报道"),
        escape(&headline),
    );
    match view.summary {
        Some(summary) => {
            let _ = writeln!(
                body,
                "<dl class=\"stats\" data-documents=\"{documents}\" data-nodes=\"{nodes}\" data-members=\"{listed}\">\
                 <div><dt>{l_documents}</dt><dd>{documents}</dd></div><div><dt>{l_nodes}</dt><dd>{nodes}</dd></div>\
                 <div><dt>{l_cluster}</dt><dd>{cluster}</dd></div><div><dt>{l_first}</dt><dd>{first}</dd></div>\
                 <div><dt>{l_last}</dt><dd>{last}</dd></div></dl>",
                documents = summary.documents,
                nodes = summary.nodes,
                listed = view.members.len(),
                cluster = view.cluster_total,
                first = time_element(summary.first_arrival),
                last = time_element(summary.last_arrival),
                l_documents = lang.t("documents (forest)", "文档（森林）"),
                l_nodes = lang.t("variants", "变体"),
                l_cluster = lang.t("found in the cluster", "集群中找到"),
                l_first = lang.t("first arrival", "首次到达"),
                l_last = lang.t("last arrival", "最近到达"),
            );
        }
        None => {
            let _ = writeln!(
                body,
                "<p class=\"notice\">{} ({} {})</p>",
                lang.t(
                    "This class is no longer in the forest (expired, or never seen by this sidecar).",
                    "该类已不在森林中（已过期，或此 sidecar 从未见过）。"
                ),
                view.cluster_total,
                lang.t("documents in the cluster", "篇文档在集群中"),
            );
        }
    }
    if let Some(notice) = &view.notice {
        let _ = writeln!(body, "<p class=\"notice\">{}</p>", escape(notice));
    }
    body.push_str(&timeline(lang, view.members));
    body.push_str(&members_table(lang, view.members));
    body.push_str(&comparisons(lang, view.members));
    let title = format!("{headline} · neardup");
    let switch_lang = match lang {
        Lang::En => Lang::Zh,
        Lang::Zh => Lang::En,
    };
    let switch_to = link(&format!("classes/{root}"), switch_lang, view.index, &[]);
    layout(lang, &title, &switch_to, &body)
}

/// Members placed on one time axis; the root document stands out.
fn timeline(lang: Lang, members: &[MemberView]) -> String {
    const WIDTH: i64 = 1000;
    let times: Vec<Millis> = members.iter().filter_map(|member| member.time).collect();
    let (Some(&start), Some(&end)) = (times.iter().min(), times.iter().max()) else {
        return String::new();
    };
    let span = (end - start).max(1);
    let x = |time: Millis| 20 + (time - start) * (WIDTH - 40) / span;
    let mut svg = format!(
        "<section class=\"timeline\"><h2>{}</h2>\n<svg viewBox=\"0 0 {WIDTH} 64\" role=\"img\" aria-label=\"{}\">\
         <line class=\"axis\" x1=\"20\" y1=\"34\" x2=\"{}\" y2=\"34\"/>",
        lang.t("Timeline", "时间线"),
        lang.t("documents over time", "文档随时间分布"),
        WIDTH - 20,
    );
    for (position, member) in members.iter().enumerate() {
        let Some(time) = member.time else { continue };
        let class = if matches!(member.comparison, Comparison::Root) {
            "dot root"
        } else {
            "dot"
        };
        // Alternate rows so dots at the same time stay visible.
        let y = if position % 2 == 0 { 28 } else { 40 };
        let _ = write!(
            svg,
            "<a href=\"#member-{position}\"><circle class=\"{class}\" cx=\"{}\" cy=\"{y}\" r=\"6\">\
             <title>{} · {} · {}</title></circle></a>",
            x(time),
            escape(&member_time_text(lang, member)),
            escape(member.outlet.as_deref().unwrap_or("")),
            escape(&member.title),
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"20\" y=\"60\">{}</text><text x=\"{}\" y=\"60\" text-anchor=\"end\">{}</text></svg></section>",
        escape(&time_text(start)),
        WIDTH - 20,
        escape(&time_text(end)),
    );
    svg
}

/// A member's time as text, marked when it is the arrival.
fn member_time_text(lang: Lang, member: &MemberView) -> String {
    match member.time {
        Some(time) if member.time_is_arrival => {
            format!("{} {}", time_text(time), lang.t("(arrived)", "（到达）"))
        }
        Some(time) => time_text(time),
        None => String::new(),
    }
}

/// A member's time cell: the same element as every page's times.
fn member_time_cell(lang: Lang, member: &MemberView) -> String {
    match member.time {
        Some(time) if member.time_is_arrival => {
            format!("{} {}", time_element(time), lang.t("(arrived)", "（到达）"))
        }
        Some(time) => time_element(time),
        None => String::new(),
    }
}

fn rule_text(lang: Lang, rule: Rule) -> &'static str {
    match lang {
        Lang::En => rule.describe(),
        Lang::Zh => match rule {
            Rule::SameText => "规范化后文字相同（精确快速路径）",
            Rule::SameFingerprint => "simhash 相同，文字确认",
            Rule::SimhashNeighbour => "simhash 距离不超过 k，文字确认",
            Rule::ShortTextShingles => "短文本经字符片段检索找到，已确认",
            Rule::LongTextSketch => "长文本经正文草图检索找到，已确认",
            Rule::KeptApart => "分开：某项检查拒绝，或未被检索到",
        },
    }
}

/// How a member joined, in one phrase.
fn joined_how(lang: Lang, comparison: &Comparison) -> (String, &'static str) {
    match comparison {
        Comparison::Root => (
            lang.t("root: the class's first document", "根：类中最早的文档")
                .to_string(),
            "rule root",
        ),
        Comparison::Compared { explanation, .. } if explanation.joins => {
            (rule_text(lang, explanation.rule).to_string(), "rule joined")
        }
        Comparison::Compared { .. } => (
            lang.t(
                "through another member: not close enough to the root alone",
                "经由类中另一成员加入：单独与根比较不够接近",
            )
            .to_string(),
            "rule indirect",
        ),
        Comparison::NotCompared(reason) => (reason.clone(), "rule unknown"),
    }
}

fn members_table(lang: Lang, members: &[MemberView]) -> String {
    let mut table = format!(
        "<section><h2>{} ({})</h2>\n<table class=\"members\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th>\
         <th>{}</th><th class=\"num\">{}</th><th>{}</th></tr></thead>\n<tbody>\n",
        lang.t("Documents", "文档"),
        members.len(),
        lang.t("published (or arrived)", "发布时间（或到达时间）"),
        lang.t("outlet", "来源"),
        lang.t("title", "标题"),
        lang.t("index / id", "索引 / id"),
        lang.t("Hamming", "汉明距离"),
        lang.t("joined by", "加入规则"),
    );
    for (position, member) in members.iter().enumerate() {
        let title = match member.url.as_deref().filter(|url| is_web_link(url)) {
            Some(url) => format!(
                "<a href=\"{}\" rel=\"noopener noreferrer nofollow\" target=\"_blank\">{}</a>",
                escape(url),
                escape(&member.title)
            ),
            None => escape(&member.title),
        };
        let distance = match &member.comparison {
            Comparison::Compared { explanation, .. } => explanation
                .figures
                .iter()
                .find(|figure| figure.name == "hamming_distance")
                .map_or_else(String::new, |figure| escape(&figure.value)),
            Comparison::Root => "0".to_string(),
            Comparison::NotCompared(_) => String::new(),
        };
        let (how, how_class) = joined_how(lang, &member.comparison);
        let _ = writeln!(
            table,
            "<tr class=\"member\" id=\"member-{position}\" data-index=\"{index}\" data-id=\"{id}\" data-simhash=\"{simhash}\">\
             <td>{time}</td><td>{outlet}</td><td>{title}</td>\
             <td><code>{index}</code> / <code>{id}</code></td><td class=\"num\">{distance}</td>\
             <td><a class=\"{how_class}\" href=\"#pair-{position}\">{how}</a></td></tr>",
            index = escape(&member.index),
            id = escape(&member.id),
            time = member_time_cell(lang, member),
            outlet = escape(member.outlet.as_deref().unwrap_or("")),
            how = escape(&how),
            simhash = member.simhash.map(format_fingerprint).unwrap_or_default(),
        );
    }
    table.push_str("</tbody>\n</table>\n</section>\n");
    table
}

fn is_web_link(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

fn comparisons(lang: Lang, members: &[MemberView]) -> String {
    let Some(root) = members
        .iter()
        .find(|member| matches!(member.comparison, Comparison::Root))
    else {
        return String::new();
    };
    let mut out = format!(
        "<section class=\"pairs\"><h2>{}</h2>\n<p class=\"note\">{}</p>\n",
        lang.t("Each document against the root", "逐篇与根文档对比"),
        lang.t(
            "Shared text is plain, differing text is highlighted (width, case, Traditional/Simplified and punctuation are not differences). The figures are those the engine weighs for this pair alone.",
            "相同的文字不加标记，不同的文字高亮（全半角、大小写、繁简和标点不算差异）。指标是引擎单独比较这两篇时所用的。"
        ),
    );
    // The copy that changed most is open: the one worth a look first.
    let most_changed = members
        .iter()
        .enumerate()
        .filter_map(|(position, member)| match &member.comparison {
            Comparison::Compared { fields, .. } => Some((changed_chars(fields), position)),
            _ => None,
        })
        .max_by_key(|&(changed, position)| (changed, std::cmp::Reverse(position)))
        .map(|(_, position)| position);
    for (position, member) in members.iter().enumerate() {
        let Comparison::Compared {
            explanation,
            fields,
        } = &member.comparison
        else {
            continue;
        };
        let open = if Some(position) == most_changed {
            " open"
        } else {
            ""
        };
        let (how, how_class) = joined_how(lang, &member.comparison);
        let _ = write!(
            out,
            "<details class=\"pair\" id=\"pair-{position}\"{open}><summary><span class=\"{how_class}\">{how}</span> \
             {outlet} · {title}</summary>\n<div class=\"sides\"><div class=\"side-head\">{l_root} · {root_outlet}</div>\
             <div class=\"side-head\">{l_member} · {outlet}</div>\n",
            how = escape(&how),
            outlet = escape(member.outlet.as_deref().unwrap_or(&member.id)),
            title = escape(&member.title),
            l_root = lang.t("root", "根"),
            root_outlet = escape(root.outlet.as_deref().unwrap_or(&root.id)),
            l_member = lang.t("this document", "本文档"),
        );
        for field in fields {
            let _ = writeln!(
                out,
                "<div class=\"field-name\">{name}</div><div class=\"field-name\">{name}</div>\
                 <div class=\"text root-text\">{}</div><div class=\"text member-text\">{}</div>",
                spans_html(&field.root),
                spans_html(&field.member),
                name = escape(&field.field),
            );
        }
        out.push_str("</div>\n");
        out.push_str(&figures_table(lang, explanation));
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
    out
}

/// Characters marked as differing, on both sides.
fn changed_chars(fields: &[FieldDiff]) -> usize {
    fields
        .iter()
        .flat_map(|field| field.root.iter().chain(&field.member))
        .filter(|span| span.differs)
        .map(|span| span.text.chars().count())
        .sum()
}

fn spans_html(spans: &[Span]) -> String {
    let mut html = String::new();
    for span in spans {
        if span.differs {
            let _ = write!(
                html,
                "<mark class=\"differs\">{}</mark>",
                escape(&span.text)
            );
        } else {
            html.push_str(&escape(&span.text));
        }
    }
    html
}

fn figure_label(lang: Lang, figure: &Figure) -> &'static str {
    match figure.name {
        "hamming_distance" => lang.t("Hamming distance", "汉明距离"),
        "same_text" => lang.t("same text", "文字相同"),
        "jaccard" => lang.t("Jaccard (bigrams)", "Jaccard（二元组）"),
        "containment" => lang.t("containment", "包含度"),
        "numbers" => lang.t("numbers", "数字"),
        "places" => lang.t("names (places)", "名称（地名）"),
        "edits" => lang.t("edits in reading order", "按顺序的改动"),
        "body_jaccard" => lang.t("body Jaccard (5-grams)", "正文 Jaccard（5 元组）"),
        "headline" => lang.t("headline check", "标题检查"),
        "kinds" => lang.t("text kinds", "文本类型"),
        _ => "",
    }
}

fn figures_table(lang: Lang, explanation: &Explanation) -> String {
    let mut table = format!(
        "<table class=\"figures\"><caption class=\"{}\">{}</caption>\n<thead><tr><th>{}</th><th>{}</th><th>{}</th><th></th></tr></thead><tbody>\n",
        if explanation.joins { "joins" } else { "apart" },
        escape(rule_text(lang, explanation.rule)),
        lang.t("figure", "指标"),
        lang.t("value", "数值"),
        lang.t("requirement", "要求"),
    );
    for figure in &explanation.figures {
        let (mark, class) = match figure.passes {
            Some(true) => ("✓", "pass"),
            Some(false) => ("✗", "fail"),
            None => ("·", "info"),
        };
        let label = match figure_label(lang, figure) {
            "" => figure.name,
            label => label,
        };
        let _ = writeln!(
            table,
            "<tr class=\"{class}\" data-figure=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{mark}</td></tr>",
            figure.name,
            escape(label),
            escape(&figure.value),
            escape(match lang {
                Lang::En => &figure.requirement.english,
                Lang::Zh => &figure.requirement.chinese,
            }),
        );
    }
    table.push_str("</tbody></table>\n");
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_times_are_the_pages_one_time_element_marked_when_arrived() {
        let member = |time_is_arrival| MemberView {
            index: "news".into(),
            id: "1".into(),
            title: "t".into(),
            outlet: None,
            url: None,
            time: Some(1_773_106_500_000),
            time_is_arrival,
            simhash: None,
            comparison: Comparison::Root,
        };
        let published = member_time_cell(Lang::En, &member(false));
        assert_eq!(published, time_element(1_773_106_500_000));
        assert!(
            published.contains(">2026-03-10 01:35 UTC</time>"),
            "{published}"
        );
        let arrived = member_time_cell(Lang::Zh, &member(true));
        assert!(arrived.ends_with("</time> （到达）"), "{arrived}");
        assert_eq!(
            member_time_text(Lang::En, &member(true)),
            "2026-03-10 01:35 UTC (arrived)"
        );
    }

    #[test]
    fn requirements_follow_the_page_language() {
        let pair = |text: &str| {
            let fingerprinter = crate::fingerprint::Fingerprinter::new(Default::default())
                .expect("default fingerprinter");
            let prepared = fingerprinter.prepare(text);
            (fingerprinter, prepared)
        };
        let (fingerprinter, first) =
            pair("本市今天召开城市更新工作推进会，总结了老旧小区改造的进展。");
        let (_, second) = pair("本市今天召开城市更新工作推进会，总结了老旧小区改造的新进展。");
        let confirmation = crate::confirm::ConfirmationConfig::default();
        let mut explanation =
            crate::explain::explain(&fingerprinter, &confirmation, 3, &first, &second)
                .expect("explained");
        let english = figures_table(Lang::En, &explanation);
        let chinese = figures_table(Lang::Zh, &explanation);
        assert!(english.contains("for simhash neighbours"), "{english}");
        assert!(chinese.contains("simhash 近邻"), "{chinese}");
        assert!(!chinese.contains("for simhash neighbours"), "{chinese}");
        explanation.requirements_in_chinese();
        let answer = serde_json::to_value(&explanation).expect("serialised");
        assert!(
            answer["figures"][0]["requirement"]
                .as_str()
                .is_some_and(|text| text.starts_with("simhash 近邻"))
        );
    }

    #[test]
    fn document_text_is_escaped_everywhere() {
        let hostile = "<img src=x onerror=alert(1)>\"'&";
        assert_eq!(
            escape(hostile),
            "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"
        );
        let member = |comparison| MemberView {
            index: hostile.to_string(),
            id: hostile.to_string(),
            title: hostile.to_string(),
            outlet: Some(hostile.to_string()),
            url: Some("javascript:alert(1)".to_string()),
            time: Some(0),
            time_is_arrival: false,
            simhash: None,
            comparison,
        };
        let explanation = Explanation {
            joins: true,
            rule: Rule::SameText,
            reason: Rule::SameText.describe(),
            figures: Vec::new(),
        };
        let members = [
            member(Comparison::Root),
            member(Comparison::Compared {
                explanation: Box::new(explanation),
                fields: vec![FieldDiff {
                    field: hostile.to_string(),
                    root: vec![Span {
                        text: hostile.to_string(),
                        differs: false,
                    }],
                    member: vec![Span {
                        text: hostile.to_string(),
                        differs: true,
                    }],
                }],
            }),
        ];
        let page = class_page(&ClassPageView {
            lang: Lang::En,
            root: 1,
            index: Some(hostile),
            summary: None,
            cluster_total: 2,
            members: &members,
            notice: Some(hostile.to_string()),
        });
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("javascript:"), "{page}");
        assert!(page.contains("<mark class=\"differs\">&lt;img"));
    }
}
