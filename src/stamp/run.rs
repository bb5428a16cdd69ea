//! One run of `neardup stamp` from a reader to a writer: one thread places
//! each document as it is read; more hand the run to the pipeline.

use std::io::{BufRead, Write};
use std::time::Instant;

use super::options::{StampError, StampOptions, StampSummary};
use super::pipeline;
use super::placer::Placer;
use super::read::{LineReader, PROGRESS_EVERY_LINES, Pending};
use crate::engine::{EXPIRY_BUDGET_PER_DOCUMENT, Engine};

/// Stamp `input` into `output`. `on_progress` is called now and then with the
/// number of input bytes consumed so far.
pub fn stamp(
    engine: &mut Engine,
    input: impl BufRead + Send,
    mut output: impl Write + Send,
    options: &StampOptions,
    mut on_progress: impl FnMut(u64) + Send,
) -> Result<StampSummary, StampError> {
    let started = Instant::now();
    let mut reader = LineReader::new(input, options);
    let mut placer = Placer::new(options);
    let placed = if options.threads > 1 {
        engine.track_changes();
        pipeline::stamp_on_threads(
            engine,
            &mut reader,
            &mut output,
            &mut placer,
            options.threads,
            &mut on_progress,
        )
    } else {
        stamp_one_by_one(
            engine,
            &mut reader,
            &mut output,
            &mut placer,
            &mut on_progress,
        )
    };
    // Everything before a bad line is written, as it would be one line at
    // a time.
    output.flush()?;
    placed?;
    // A last action without its source line is ignored, as the cluster
    // (and the sidecar) ignore it.
    on_progress(reader.bytes_read);
    let mut summary = StampSummary {
        stamped: placer.summary.stamped,
        without_text: placer.summary.without_text,
        exact_hits: placer.summary.exact_hits,
        expired_nodes: placer.summary.expired_nodes,
        decisions_kept: placer.summary.decisions_kept,
        decisions_taken_again: placer.summary.decisions_taken_again,
        fields_without_text: std::mem::take(&mut placer.summary.fields_without_text),
        ..reader.summary
    };
    summary.classes = placer.class_documents.len() as u64;
    if let Some((&root, &documents)) = placer
        .class_documents
        .iter()
        .max_by_key(|&(&root, &documents)| (documents, std::cmp::Reverse(root)))
    {
        summary.largest_class_root = Some(root);
        summary.largest_class_documents = documents;
    }
    let forest_stats = engine.forest().stats();
    summary.nodes = forest_stats.nodes as u64;
    summary.approx_heap_bytes =
        (forest_stats.approx_heap_bytes + engine.stats().approx_heap_bytes) as u64;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// One thread: each document placed as it is read.
fn stamp_one_by_one<R: BufRead>(
    engine: &mut Engine,
    reader: &mut LineReader<'_, R>,
    output: &mut impl Write,
    placer: &mut Placer<'_>,
    on_progress: &mut impl FnMut(u64),
) -> Result<(), StampError> {
    while let Some(pending) = reader.next_line()? {
        match pending {
            Pending::Line(line) => output.write_all(&line)?,
            Pending::Document(document) => {
                let (removed, _) = engine.expire(document.now, EXPIRY_BUDGET_PER_DOCUMENT);
                placer.summary.expired_nodes += removed as u64;
                let (prepared, gaps) = match document.document() {
                    Some(source) => engine.fingerprinter().prepare_document_noting_gaps(source),
                    None => (None, Vec::new()),
                };
                placer.count_gaps(gaps);
                let placed = prepared.map(|prepared| engine.add_prepared(&prepared, document.now));
                placer.write(*document, placed, output)?;
            }
        }
        if reader.summary.lines.is_multiple_of(PROGRESS_EVERY_LINES) {
            on_progress(reader.bytes_read);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::read::{looks_like_bulk_action, split_terminator};
    use super::*;
    use crate::bulk;

    #[test]
    fn bulk_actions_are_recognised() {
        assert!(looks_like_bulk_action(br#"{"index":{"_index":"a"}}"#));
        assert!(looks_like_bulk_action(br#"{"delete":{}}"#));
        assert!(!looks_like_bulk_action(br#"{"title":"x","content":"y"}"#));
        assert!(!looks_like_bulk_action(br#"{"index":"x"}"#));
        let error = bulk::parse_action(br#"{"upsert":{}}"#, 1)
            .err()
            .map(|error| error.reason)
            .unwrap_or_default();
        assert!(error.contains("but found [upsert]"), "{error}");
    }

    #[test]
    fn terminators_are_kept_apart() {
        assert_eq!(split_terminator(b"ab\r\n"), (&b"ab"[..], &b"\r\n"[..]));
        assert_eq!(split_terminator(b"ab"), (&b"ab"[..], &b""[..]));
    }

    /// A stream with reposts inside and across batches, in both input
    /// shapes, a line without text, a byte-order mark and CRLF ends.
    fn overlapping_input(bulk: bool) -> Vec<u8> {
        let pieces = [
            "市政府召开新闻发布会介绍城市更新工作进展",
            "会议指出要坚持以居民需求为导向统筹推进基础设施建设",
            "The council approved a plan to expand the library network",
            "Officials said construction would begin next spring",
            "气象部门提醒未来三天大部分地区将出现明显降温",
        ];
        let mut input = b"\xEF\xBB\xBF".to_vec();
        for i in 0..700usize {
            let title = format!("{} {}", pieces[i % 5], i % 37);
            let content = match i % 4 {
                0 => pieces.join("。"),
                1 => format!("转发：{}", pieces[(i / 4) % 5]),
                2 => format!("{}。{}", pieces[i % 5], i % 11),
                _ => format!("{} {}", pieces[(i + 2) % 5], i),
            };
            if bulk {
                input.extend_from_slice(b"{\"index\":{\"_index\":\"news\"}}\r\n");
            }
            let line = if i == 300 {
                serde_json::json!({ "id": i, "other": "no text here" })
            } else {
                serde_json::json!({ "id": i, "title": title, "content": content })
            };
            input.extend_from_slice(line.to_string().as_bytes());
            input.extend_from_slice(b"\r\n");
        }
        input
    }

    fn run(input: &[u8], threads: usize) -> (Vec<u8>, StampSummary) {
        run_with(input, threads, None)
    }

    /// A run with `retention` and arrival times read from `time`.
    fn run_with(input: &[u8], threads: usize, retention: Option<&str>) -> (Vec<u8>, StampSummary) {
        let mut engine = crate::config::EngineSettings {
            retention: retention.map(str::to_string),
            ..crate::config::EngineSettings::default()
        }
        .build()
        .expect("valid settings");
        let options = StampOptions {
            threads,
            time_field: retention.map(|_| "time".to_string()),
            ..StampOptions::default()
        };
        let mut output = Vec::new();
        let summary =
            stamp(&mut engine, input, &mut output, &options, |_| {}).expect("valid input");
        (output, summary)
    }

    #[test]
    fn the_stamps_do_not_depend_on_the_threads() {
        for bulk in [false, true] {
            let input = overlapping_input(bulk);
            let (one, one_summary) = run(&input, 1);
            for threads in [2, 3, 8] {
                let (many, many_summary) = run(&input, threads);
                assert!(one == many, "{threads} threads, bulk {bulk}");
                // Both ways of placing a decision taken ahead were taken:
                // some stood, some were taken again (what this guards).
                assert!(many_summary.decisions_kept > 0, "{many_summary:?}");
                assert!(many_summary.decisions_taken_again > 0, "{many_summary:?}");
                assert_eq!(
                    many_summary.decisions_kept + many_summary.decisions_taken_again,
                    many_summary.stamped
                );
                assert_eq!(one_summary.classes, many_summary.classes);
                assert_eq!(one_summary.stamped, many_summary.stamped);
                assert_eq!(
                    one_summary.fields_without_text,
                    many_summary.fields_without_text
                );
            }
            assert_eq!(
                (
                    one_summary.decisions_kept,
                    one_summary.decisions_taken_again
                ),
                (0, 0)
            );
            assert_eq!(one_summary.without_text, 1);
            // The line without text lacks both fields.
            assert_eq!(one_summary.fields_without_text.get("title"), Some(&1));
            assert_eq!(one_summary.fields_without_text.get("content"), Some(&1));
            assert!(one_summary.largest_class_documents > 50, "{one_summary}");
            assert!(one.starts_with(b"\xEF\xBB\xBF"));
        }
    }

    /// Briefs of many sites, each site's under its own long footer, and
    /// reposts: sentences turn common while a run goes on, and decisions
    /// that read them are taken again.
    fn footer_input() -> Vec<u8> {
        let subjects = [
            "图书馆",
            "游泳馆",
            "夜市",
            "菜市场",
            "公交线",
            "社区食堂",
            "博物馆",
        ];
        let acts = [
            "延长开放时间",
            "完成改造",
            "恢复营业",
            "调整票价",
            "开通新线路",
        ];
        let mut input = Vec::new();
        for i in 0..420usize {
            let site = i % 6;
            let footer = format!(
                "\n第{site}融媒体中心每天早上推送当地要闻天气和路况周末推出乡村美食和文旅专题。\n第{site}热线全天有人值守欢迎读者提供身边的新鲜事和好点子。\n第{site}客户端首页的活动专区可以报名参加亲子研学读书会和城市定向赛。"
            );
            let story = if i % 5 == 4 { i - 2 } else { i };
            let (subject, act) = (subjects[story % 7], acts[(story / 7) % 5]);
            let line = serde_json::json!({
                "title": format!("快讯｜{subject}{act}{}", story / 35),
                "content": format!("{subject}今天宣布{act}，第{}期工作开始。{footer}", story / 35),
            });
            input.extend_from_slice(line.to_string().as_bytes());
            input.push(b'\n');
        }
        input
    }

    #[test]
    fn sentences_learned_during_a_run_do_not_depend_on_the_threads() {
        let input = footer_input();
        let run_learning = |threads: usize, classes: u8| {
            let mut engine = crate::config::EngineSettings {
                common_sentence_classes: Some(classes),
                ..crate::config::EngineSettings::default()
            }
            .build()
            .expect("valid settings");
            let options = StampOptions {
                threads,
                ..StampOptions::default()
            };
            let mut output = Vec::new();
            stamp(&mut engine, input.as_slice(), &mut output, &options, |_| {})
                .expect("valid input");
            (output, engine.stats().common_sentences)
        };
        let (one, learned) = run_learning(1, 3);
        assert!(learned > 0);
        let (unlearned, _) = run_learning(1, 0);
        assert!(one != unlearned, "learning changes some stamps");
        for threads in [2, 8] {
            let (many, _) = run_learning(threads, 3);
            assert!(one == many, "{threads} threads");
        }
    }

    #[test]
    fn lines_before_a_bad_line_are_written() {
        let mut input = overlapping_input(false);
        input.extend_from_slice(b"{not json\n");
        let mut engine = crate::config::EngineSettings::default()
            .build()
            .expect("default settings");
        let options = StampOptions {
            threads: 2,
            ..StampOptions::default()
        };
        let mut output = Vec::new();
        let error = stamp(&mut engine, input.as_slice(), &mut output, &options, |_| {});
        assert!(matches!(
            error,
            Err(StampError::InvalidLine { line: 701, .. })
        ));
        let written = output.split(|&byte| byte == b'\n').count() - 1;
        assert_eq!(written, 700);
    }

    /// Expiry between two placements is a change no decision is checked
    /// against: every decision taken before it is taken again.
    #[test]
    fn expiry_during_a_run_does_not_change_the_stamps() {
        let mut input = Vec::new();
        for (i, line) in String::from_utf8(overlapping_input(false))
            .expect("utf-8")
            .trim_start_matches('\u{feff}')
            .lines()
            .enumerate()
        {
            let mut document: serde_json::Value = serde_json::from_str(line).expect("json");
            // A minute apart: with a retention of an hour, the first
            // documents expire while the last are placed.
            document["time"] = serde_json::json!(1_700_000_000 + 60 * i as i64);
            input.extend_from_slice(document.to_string().as_bytes());
            input.push(b'\n');
        }
        let (one, one_summary) = run_with(&input, 1, Some("1h"));
        assert!(one_summary.expired_nodes > 100, "{one_summary}");
        for threads in [2, 8] {
            let (many, many_summary) = run_with(&input, threads, Some("1h"));
            assert!(one == many, "{threads} threads");
            // Expiry is a barrier: decisions taken before it are taken
            // again.
            assert!(many_summary.decisions_taken_again > 0, "{many_summary:?}");
            // The heap differs: tracking changes costs memory; one thread
            // takes no decision ahead.
            assert_eq!(
                one_summary,
                StampSummary {
                    elapsed: one_summary.elapsed,
                    approx_heap_bytes: one_summary.approx_heap_bytes,
                    decisions_kept: 0,
                    decisions_taken_again: 0,
                    ..many_summary
                }
            );
        }
    }

    /// A worker that panics with a later chunk's turn waiting on it: the
    /// others stop (they would wait for that chunk for ever) and the panic
    /// reaches the caller.
    #[test]
    fn a_panicking_worker_stops_the_others_and_the_panic_is_raised() {
        let mut input = overlapping_input(false);
        let marked = serde_json::json!({
            "title": super::super::pipeline::tests::PANIC_MARKER,
            "content": "x",
        });
        input.extend_from_slice(marked.to_string().as_bytes());
        input.push(b'\n');
        let more = overlapping_input(false);
        // A byte-order mark only at the start of the input.
        input.extend_from_slice(more.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&more));
        let (sender, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| run(&input, 2));
            let _ = sender.send(outcome.is_err());
        });
        let panicked = received
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the run ends");
        assert!(panicked);
    }

    /// Output that fails after a while.
    struct FailingWriter {
        left: usize,
    }

    impl Write for FailingWriter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.left < bytes.len() {
                return Err(std::io::Error::other("disk full"));
            }
            self.left -= bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_stops_every_thread_with_the_error() {
        let input = overlapping_input(false);
        for threads in [1, 2, 8] {
            let mut engine = crate::config::EngineSettings::default()
                .build()
                .expect("default settings");
            let options = StampOptions {
                threads,
                ..StampOptions::default()
            };
            let output = FailingWriter { left: 20_000 };
            let result = stamp(&mut engine, input.as_slice(), output, &options, |_| {});
            assert!(
                matches!(&result, Err(StampError::Io(error)) if error.to_string() == "disk full"),
                "{threads} threads: {result:?}"
            );
        }
    }
}
