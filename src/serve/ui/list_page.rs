//! The Explorer's list page: the classes, largest or newest first, with
//! their sizes, a sparkline of arrivals and the compare box.

use std::collections::HashMap;
use std::fmt::Write;

use super::overview::{ClassSummary, Order, Overview, SPARKLINE_BUCKETS};
use super::render::{BASE, Lang, duration_text, escape, layout, link, time_element};
use crate::units::{Fingerprint, Millis, format_fingerprint};

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
        let empty = match view.index {
            // Classes exist, but none has a document in the filtered index.
            Some(index) if !index.is_empty() => format!(
                "{} <code>{}</code>.",
                lang.t("No class has documents in", "没有类在以下索引中有文档："),
                escape(index)
            ),
            _ => lang
                .t(
                    "No class yet: documents written through the sidecar appear here.",
                    "暂无类：经由 sidecar 写入的文档会出现在这里。",
                )
                .to_string(),
        };
        let _ = writeln!(body, "<p class=\"empty\">{empty}</p>");
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

#[cfg(test)]
mod tests {
    use super::super::overview::Range;
    use super::*;
    use crate::forest::ForestStats;

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
            axis: Range { start: 0, end: 10 },
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

    #[test]
    fn an_empty_filter_result_says_so_rather_than_that_nothing_exists() {
        let overview = Overview {
            stats: ForestStats::default(),
            classes: Vec::new(),
            axis: Range { start: 0, end: 10 },
        };
        let titles = HashMap::new();
        let view = |index| ListView {
            lang: Lang::En,
            overview: &overview,
            order: Order::Largest,
            index,
            in_index: None,
            titles: &titles,
            notice: None,
            retention: None,
            max_distance: 3,
        };
        let filtered = list_page(&view(Some("blog-*")));
        assert!(filtered.contains("No class has documents in <code>blog-*</code>."));
        assert!(!filtered.contains("No class yet"));
        assert!(list_page(&view(None)).contains("No class yet"));
    }
}
