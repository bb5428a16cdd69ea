//! HTML of the Explorer pages, from plain values: no I/O here. This file
//! holds what both pages use (labels, escaping, links, the layout); the
//! pages are `list_page.rs` and `class_page.rs`.
//!
//! Every piece of text that came from a document, the cluster or the
//! request goes through [`escape`] (element text and double-quoted
//! attribute values alike), and links are written only for `http(s)` URLs:
//! documents are not trusted. Dynamic parts are drawn by the server (SVG
//! included), so the pages read without JavaScript; the script only adds
//! the compare box, local times and opening a member's comparison.

use chrono::{DateTime, Utc};

use crate::units::Millis;
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
    pub(super) fn t(self, english: &'static str, chinese: &'static str) -> &'static str {
        match self {
            Lang::En => english,
            Lang::Zh => chinese,
        }
    }

    pub(super) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    pub(super) fn html_lang(self) -> &'static str {
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
pub(super) fn link(path: &str, lang: Lang, index: Option<&str>, extra: &[(&str, &str)]) -> String {
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

pub(super) fn layout(lang: Lang, title: &str, switch_to: &str, body: &str) -> String {
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

/// Time as every page shows it: `YYYY-MM-DD HH:MM UTC`, which the script
/// rewrites to the viewer's local time in the same fields.
pub(super) fn time_element(millis: Millis) -> String {
    match DateTime::<Utc>::from_timestamp_millis(millis) {
        Some(time) => format!(
            "<time datetime=\"{}\">{}</time>",
            time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            time_text(millis)
        ),
        None => "–".to_string(),
    }
}

/// The text of [`time_element`] (for places that cannot hold markup: SVG
/// titles and axis labels).
pub(super) fn time_text(millis: Millis) -> String {
    DateTime::<Utc>::from_timestamp_millis(millis).map_or_else(
        || "–".to_string(),
        |time| time.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

pub(super) fn duration_text(lang: Lang, millis: Millis) -> String {
    let hours = millis as f64 / 3_600_000.0;
    if hours >= 1.0 {
        format!("{hours:.0} {}", lang.t("h", "小时"))
    } else {
        format!("{:.0} {}", millis as f64 / 60_000.0, lang.t("min", "分钟"))
    }
}
