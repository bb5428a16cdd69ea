//! HTML of the Explorer pages, from plain values: no I/O here.
//!
//! Every piece of text that came from a document, the cluster or the
//! request goes through [`escape`] (element text and double-quoted
//! attribute values alike), and links are written only for `http(s)` URLs:
//! documents are not trusted. Dynamic parts are drawn by the server (SVG
//! included), so the pages read without JavaScript; the script only adds
//! the compare box, local times and opening a member's comparison.

use std::collections::HashMap;
use std::fmt::Write;

use chrono::{DateTime, Utc};

use super::overview::{ClassSummary, Order, Overview, SPARKLINE_BUCKETS};
use crate::explain::{Explanation, Figure, Rule, Span};
use crate::units::{Fingerprint, Millis, format_fingerprint};
use crate::upstream::encode_component;

/// Where the Explorer lives.
pub const BASE: &str = "/_neardup/ui/";

/// The language of the labels (`?lang=zh`); document text is shown as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub fn parse(text: Option<&str>) -> Lang {
        match text {
            Some(code) if code.starts_with("zh") => Lang::Zh,
            _ => Lang::En,
        }
    }

    /// The label in this language.
    fn t(self, english: &'static str, chinese: &'static str) -> &'static str {
        match self {
            Lang::En => english,
            Lang::Zh => chinese,
        }
    }

    fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    fn html_lang(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }
}

/// Text safe inside an element or a double- or single-quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A link to an Explorer page keeping the language and the index filter.
fn link(path: &str, lang: Lang, index: Option<&str>, extra: &[(&str, &str)]) -> String {
    let mut url = format!("{BASE}{path}");
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    if lang == Lang::Zh {
        pairs.push(("lang", lang.code()));
    }
    if let Some(index) = index {
        pairs.push(("index", index));
    }
    pairs.extend_from_slice(extra);
    for (position, (name, value)) in pairs.iter().enumerate() {
        url.push(if position == 0 { '?' } else { '&' });
        url.push_str(name);
        url.push('=');
        url.push_str(&encode_component(value));
    }
    url
}

fn layout(lang: Lang, title: &str, switch_to: &str, body: &str) -> String {
    let other = match lang {
        Lang::En => "中文",
        Lang::Zh => "English",
    };
    format!(
        "<!doctype html>\n<html lang=\"{html_lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<link rel=\"stylesheet\" href=\"{BASE}explorer.css\">\n</head>\n\
         <body>\n<header class=\"top\"><a class=\"brand\" href=\"{home}\">neardup Explorer</a>\
         <a class=\"lang\" href=\"{switch}\">{other}</a></header>\n<main>\n{body}</main>\n\
         <script src=\"{BASE}explorer.js\" defer></script>\n</body>\n</html>\n",
        html_lang = lang.html_lang(),
        title = escape(title),
        home = escape(&link("", lang, None, &[])),
        switch = escape(switch_to),
    )
}

/// Time as the page shows it (UTC; the script rewrites it to local time).
fn time_element(millis: Millis) -> String {
    match DateTime::<Utc>::from_timestamp_millis(millis) {
        Some(time) => format!(
            "<time datetime=\"{}\">{}</time>",
            time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            time.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        None => "–".to_string(),
    }
}

fn duration_text(lang: Lang, millis: Millis) -> String {
    let hours = millis as f64 / 3_600_000.0;
    if hours >= 1.0 {
        format!("{hours:.0} {}", lang.t("h", "小时"))
    } else {
        format!("{:.0} {}", millis as f64 / 60_000.0, lang.t("min", "分钟"))
    }
}

/// What the list page shows.
pub struct ListView<'a> {
    pub lang: Lang,
    pub overview: &'a Overview,
    pub order: Order,
    pub index: Option<&'a str>,
    /// Documents of each class in the filtered index (from the cluster).
    pub in_index: Option<&'a HashMap<Fingerprint, u64>>,
    /// The root document's title of each class, when the cluster gave it.
    pub titles: &'a HashMap<Fingerprint, String>,
    /// Something the viewer should know (a failed title lookup).
    pub notice: Option<String>,
    pub retention: Option<Millis>,
    pub max_distance: u32,
}

pub fn list_page(view: &ListView<'_>) -> String {
    let lang = view.lang;
    let stats = &view.overview.stats;
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1>\n<dl class=\"stats\" data-documents=\"{}\" data-roots=\"{}\" data-nodes=\"{}\">\
         <div><dt>{}</dt><dd>{}</dd></div><div><dt>{}</dt><dd>{}</dd></div>\
         <div><dt>{}</dt><dd>{}</dd></div><div><dt>{}</dt><dd>{}</dd></div>\
         <div><dt>{}</dt><dd>{}</dd></div><div><dt>k</dt><dd>{}</dd></div></dl>\n",
        lang.t("Stories in the retention window", "保留期内的报道"),
        stats.documents,
        stats.roots,
        stats.nodes,
        lang.t("documents", "文档"),
        stats.documents,
        lang.t("classes", "类"),
        stats.roots,
        lang.t("variants", "变体"),
        stats.nodes,
        lang.t("expired variants", "已过期变体"),
        stats.expired_nodes,
        lang.t("retention", "保留期"),
        view.retention.map_or_else(
            || lang.t("never expires", "不过期").to_string(),
            |r| duration_text(lang, r)
        ),
        view.max_distance,
    );
    // Controls: order links and the index filter (a GET form).
    body.push_str("<nav class=\"controls\"><span class=\"orders\">");
    for (order, label) in [
        (Order::Largest, lang.t("largest", "最大")),
        (Order::Growing, lang.t("fastest-growing", "增长最快")),
        (Order::Newest, lang.t("newest", "最新")),
    ] {
        let href = link("", lang, view.index, &[("sort", order.name())]);
        let current = if order == view.order {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            body,
            "<a href=\"{}\"{current}>{}</a>",
            escape(&href),
            escape(label)
        );
    }
    let _ = writeln!(
        body,
        "</span><form class=\"filter\" method=\"get\" action=\"{BASE}\">\
         <input type=\"hidden\" name=\"sort\" value=\"{}\">{}\
         <label>{} <input name=\"index\" value=\"{}\" placeholder=\"news-*\" size=\"16\"></label>\
         <button type=\"submit\">{}</button></form></nav>",
        view.order.name(),
        if lang == Lang::Zh {
            "<input type=\"hidden\" name=\"lang\" value=\"zh\">"
        } else {
            ""
        },
        lang.t("index", "索引"),
        escape(view.index.unwrap_or("")),
        lang.t("filter", "筛选"),
    );
    if let Some(notice) = &view.notice {
        let _ = writeln!(body, "<p class=\"notice\">{}</p>", escape(notice));
    }
    if view.overview.classes.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"empty\">{}</p>",
            lang.t(
                "No class yet: documents written through the sidecar appear here.",
                "暂无类：经由 sidecar 写入的文档会出现在这里。"
            )
        );
    } else {
        body.push_str(&classes_table(view));
    }
    let _ = writeln!(
        body,
        "<p class=\"note\">{}</p>",
        lang.t(
            "Sizes count documents, as /_neardup/stats does; arrivals and growth count new variants (distinct fingerprints) by the time they first arrived.",
            "规模按文档计数，与 /_neardup/stats 一致；到达曲线与增长按新变体（不同指纹）首次到达的时间计数。"
        )
    );
    body.push_str(&compare_box(lang, view.index));
    let title = lang.t("neardup Explorer", "neardup 浏览器");
    let switch_lang = match lang {
        Lang::En => Lang::Zh,
        Lang::Zh => Lang::En,
    };
    let switch_to = link("", switch_lang, view.index, &[("sort", view.order.name())]);
    layout(lang, title, &switch_to, &body)
}

fn classes_table(view: &ListView<'_>) -> String {
    let lang = view.lang;
    let mut table = String::new();
    let _ = write!(
        table,
        "<table class=\"classes\">\n<thead><tr><th>#</th><th>{}</th><th class=\"num\">{}</th>{}\
         <th class=\"num\">{}</th><th>{}</th><th>{}</th><th>{}</th><th class=\"num\">{}</th></tr></thead>\n<tbody>\n",
        lang.t("story", "报道"),
        lang.t("documents", "文档"),
        if view.in_index.is_some() {
            format!("<th class=\"num\">{}</th>", lang.t("in index", "本索引"))
        } else {
            String::new()
        },
        lang.t("variants", "变体"),
        lang.t("first arrival", "首次到达"),
        lang.t("last arrival", "最近到达"),
        lang.t("arrivals", "到达曲线"),
        lang.t("new, last hour", "近一小时新增"),
    );
    for (rank, class) in view.overview.classes.iter().enumerate() {
        let root = format_fingerprint(class.root);
        let href = link(&format!("classes/{root}"), lang, view.index, &[]);
        let title = view
            .titles
            .get(&class.root)
            .map(|title| format!("<span class=\"title\">{}</span>", escape(title)))
            .unwrap_or_default();
        let in_index = view.in_index.map_or(String::new(), |counts| {
            format!(
                "<td class=\"num\">{}</td>",
                counts.get(&class.root).copied().unwrap_or(0)
            )
        });
        let _ = writeln!(
            table,
            "<tr class=\"class\" data-root=\"{root}\" data-documents=\"{documents}\">\
             <td class=\"rank\">{rank}</td><td><a href=\"{href}\">{title}<code>{root}</code></a></td>\
             <td class=\"num size\">{documents}</td>{in_index}<td class=\"num\">{nodes}</td>\
             <td>{first}</td><td>{last}</td><td>{spark}</td><td class=\"num\">{recent}</td></tr>",
            rank = rank + 1,
            href = escape(&href),
            documents = class.documents,
            nodes = class.nodes,
            first = time_element(class.first_arrival),
            last = time_element(class.last_arrival),
            spark = sparkline(class),
            recent = class.recent_nodes,
        );
    }
    table.push_str("</tbody>\n</table>\n");
    table
}

/// Bars of new variants per bucket, scaled to the class's own peak.
fn sparkline(class: &ClassSummary) -> String {
    const BAR: usize = 5;
    const HEIGHT: u32 = 24;
    let peak = class.arrivals.iter().copied().max().unwrap_or(0).max(1);
    let total: u32 = class.arrivals.iter().sum();
    let mut svg = format!(
        "<svg class=\"spark\" viewBox=\"0 0 {width} {HEIGHT}\" width=\"{width}\" height=\"{HEIGHT}\" \
         role=\"img\" aria-label=\"{total}\"><line x1=\"0\" y1=\"{base}\" x2=\"{width}\" y2=\"{base}\"/>",
        width = BAR * SPARKLINE_BUCKETS,
        base = HEIGHT - 1,
    );
    for (position, &count) in class.arrivals.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let height = (count * (HEIGHT - 2)).div_ceil(peak).max(2);
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{height}\"><title>{count}</title></rect>",
            position * BAR,
            HEIGHT - height,
            BAR - 1,
        );
    }
    svg.push_str("</svg>");
    svg
}

fn compare_box(lang: Lang, index: Option<&str>) -> String {
    format!(
        "<section class=\"compare\" id=\"compare\">\n<h2>{heading}</h2>\n<p class=\"note\">{hint}</p>\n\
         <form id=\"compare-form\" data-endpoint=\"/_neardup/fingerprint\" data-index=\"{index}\" \
         data-joins=\"{joins}\" data-apart=\"{apart}\" data-failed=\"{failed}\" data-figure=\"{figure}\" \
         data-value=\"{value}\" data-requirement=\"{requirement}\">\n\
         <div class=\"columns\"><textarea name=\"left\" rows=\"7\" placeholder=\"{first}\"></textarea>\
         <textarea name=\"right\" rows=\"7\" placeholder=\"{second}\"></textarea></div>\n\
         <button type=\"submit\">{button}</button>\n</form>\n<div id=\"compare-result\" aria-live=\"polite\"></div>\n\
         <noscript><p class=\"note\">{noscript}</p></noscript>\n</section>\n",
        heading = lang.t("Compare two texts", "比较两段文字"),
        hint = lang.t(
            "POST /_neardup/fingerprint with both texts: the decision the engine would make and the figures it weighs.",
            "把两段文字发给 POST /_neardup/fingerprint：引擎会作出的判定及其依据。"
        ),
        index = escape(index.unwrap_or("")),
        joins = lang.t("One story: the second text joins the first one's class", "同一报道：第二段会并入第一段的类"),
        apart = lang.t("Two stories: kept apart", "不同报道：分开"),
        failed = lang.t("The comparison failed", "比较失败"),
        figure = lang.t("figure", "指标"),
        value = lang.t("value", "数值"),
        requirement = lang.t("requirement", "要求"),
        first = lang.t("first text (the class's first document)", "第一段（类中最早的文档）"),
        second = lang.t("second text (a later copy)", "第二段（后来的副本）"),
        button = lang.t("Compare", "比较"),
        noscript = lang.t(
            "The compare box needs JavaScript; without it, POST the texts to /_neardup/fingerprint as {\"texts\": [a, b]}.",
            "比较框需要 JavaScript；也可以直接向 /_neardup/fingerprint 提交 {\"texts\": [a, b]}。"
        ),
    )
}

/// One document of a class, as the class page shows it.
pub struct MemberView {
    pub index: String,
    pub id: String,
    pub title: String,
    pub outlet: Option<String>,
    pub url: Option<String>,
    /// The document's own time (or its variant's arrival), for the timeline.
    pub time: Option<Millis>,
    /// That time as the document wrote it.
    pub time_text: String,
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
            escape(&member.time_text),
            escape(member.outlet.as_deref().unwrap_or("")),
            escape(&member.title),
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"20\" y=\"60\">{}</text><text x=\"{}\" y=\"60\" text-anchor=\"end\">{}</text></svg></section>",
        escape(&time_label(start)),
        WIDTH - 20,
        escape(&time_label(end)),
    );
    svg
}

fn time_label(millis: Millis) -> String {
    DateTime::<Utc>::from_timestamp_millis(millis).map_or_else(String::new, |time| {
        time.format("%Y-%m-%d %H:%M UTC").to_string()
    })
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
        lang.t("time", "时间"),
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
            time = escape(&member.time_text),
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
            escape(&figure.requirement),
        );
    }
    table.push_str("</tbody></table>\n");
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::ForestStats;

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
            time_text: hostile.to_string(),
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

    #[test]
    fn the_list_links_each_class_with_its_size() {
        let overview = Overview {
            stats: ForestStats {
                documents: 5,
                roots: 1,
                nodes: 2,
                ..ForestStats::default()
            },
            classes: vec![ClassSummary {
                root: 0xab,
                documents: 5,
                nodes: 2,
                first_arrival: 0,
                last_arrival: 1,
                recent_nodes: 2,
                arrivals: vec![1; SPARKLINE_BUCKETS],
            }],
            axis: super::super::overview::Range { start: 0, end: 10 },
        };
        let titles = HashMap::from([(0xab, "青禾地铁3号线 <b>".to_string())]);
        let page = list_page(&ListView {
            lang: Lang::Zh,
            overview: &overview,
            order: Order::Largest,
            index: Some("news-*"),
            in_index: None,
            titles: &titles,
            notice: None,
            retention: Some(3_600_000),
            max_distance: 3,
        });
        assert!(page.contains("data-root=\"00000000000000ab\" data-documents=\"5\""));
        assert!(page.contains("/_neardup/ui/classes/00000000000000ab?lang=zh&amp;index=news-*"));
        assert!(page.contains("青禾地铁3号线 &lt;b&gt;"));
        assert!(page.contains("<html lang=\"zh-CN\">"));
    }
}
