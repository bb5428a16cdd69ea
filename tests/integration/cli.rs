//! The `neardup` binary end to end: `stamp` and `fingerprint` on our own
//! fixtures (tests/fixtures), through real processes and pipes.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn neardup(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .env_remove("NEARDUP_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("neardup starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    pipe.write_all(stdin.unwrap_or_default())
        .expect("stdin accepts input");
    drop(pipe);
    child.wait_with_output().expect("neardup finishes")
}

fn stdout_lines(output: &Output) -> Vec<String> {
    assert!(
        output.status.success(),
        "neardup failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .expect("utf-8 output")
        .lines()
        .map(str::to_string)
        .collect()
}

fn roots_by_id(lines: &[String]) -> HashMap<String, Option<String>> {
    lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("output lines are JSON");
            let id = value["id"]
                .as_str()
                .expect("fixture documents have ids")
                .to_string();
            (
                id,
                value
                    .get("cluster_root")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn stamp_groups_reprints_and_separates_the_rest() {
    let input = fixture("reprints.jsonl");
    let lines = stdout_lines(&neardup(
        &[
            "stamp",
            "--quiet",
            "--input",
            input.to_str().unwrap_or_default(),
        ],
        None,
    ));
    let roots = roots_by_id(&lines);
    let root = |id: &str| {
        roots[id]
            .clone()
            .unwrap_or_else(|| panic!("{id} is stamped"))
    };
    // Reprints with credit lines, punctuation and Traditional script.
    assert_eq!(root("a1"), root("a2"));
    assert_eq!(root("a1"), root("a3"));
    assert_eq!(root("b1"), root("b2"));
    // A short repost with a prefix and a hashtag.
    assert_eq!(root("c1"), root("c2"));
    // Different stories, and short texts that differ in one meaningful word.
    assert_ne!(root("a1"), root("b1"));
    assert_ne!(root("c1"), root("d1"));
    assert_ne!(root("e1"), root("e2"));
    // No text: passed through unstamped.
    assert_eq!(roots["f1"], None);
    // The class of the first document is named after its own fingerprint.
    let first: Value = serde_json::from_str(&lines[0]).expect("json");
    assert_eq!(first["cluster_root"], first["simhash"]);
    assert!(
        root("a1").len() == 16
            && root("a1")
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}

#[test]
fn short_text_search_can_be_turned_off() {
    let input = fixture("reprints.jsonl");
    let path = input.to_str().unwrap_or_default();
    let off = roots_by_id(&stdout_lines(&neardup(
        &[
            "stamp",
            "-q",
            "--short-text-search",
            "false",
            "--input",
            path,
        ],
        None,
    )));
    // The repost's simhash is far from the original's: only the LSH found it.
    assert_ne!(off["c1"], off["c2"]);
    // Long texts are unaffected.
    assert_eq!(off["a1"], off["a2"]);
}

#[test]
fn stamp_keeps_every_other_byte_and_the_order() {
    let input = std::fs::read_to_string(fixture("reprints.jsonl")).expect("fixture");
    let lines = stdout_lines(&neardup(&["stamp", "--quiet"], Some(input.as_bytes())));
    let originals: Vec<&str> = input.lines().collect();
    assert_eq!(lines.len(), originals.len());
    for (stamped, original) in lines.iter().zip(&originals) {
        if stamped == original {
            continue; // not stamped (no text)
        }
        let prefix = original.strip_suffix('}').expect("objects end with }");
        assert!(
            stamped.starts_with(prefix),
            "{stamped} does not keep {original}"
        );
        assert!(
            stamped[prefix.len()..].starts_with(",\"cluster_root\":\""),
            "{stamped}"
        );
    }
}

#[test]
fn stamp_bulk_stamps_index_and_create_sources_only() {
    let input = fixture("bulk.ndjson");
    let lines = stdout_lines(&neardup(
        &["stamp", "-q", "--input", input.to_str().unwrap_or_default()],
        None,
    ));
    let originals: Vec<String> = std::fs::read_to_string(&input)
        .expect("fixture")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), originals.len());
    let stamped_positions: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i] != originals[i])
        .collect();
    // index source, create source, index source; not actions, delete, update body.
    assert_eq!(stamped_positions, vec![1, 4, 8]);
    let root_at =
        |i: usize| serde_json::from_str::<Value>(&lines[i]).expect("json")["cluster_root"].clone();
    assert_eq!(root_at(1), root_at(4));
    assert_ne!(root_at(1), root_at(8));
}

#[test]
fn stamp_field_names_are_configurable() {
    let input = br#"{"title":"t","content":"some text to stamp here"}"#;
    let lines = stdout_lines(&neardup(
        &[
            "stamp",
            "-q",
            "--root-field",
            "story",
            "--simhash-field",
            "fp",
        ],
        Some(input),
    ));
    let value: Value = serde_json::from_str(&lines[0]).expect("json");
    assert!(
        value["story"].is_string()
            && value["fp"].is_string()
            && value.get("cluster_root").is_none()
    );
}

#[test]
fn invalid_line_stops_with_its_line_number_or_is_skipped() {
    let input =
        b"{\"content\":\"first text\"}\n\n{\"content\": oops}\n{\"content\":\"third text\"}\n";
    let failed = neardup(&["stamp", "-q"], Some(input));
    assert_eq!(failed.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("line 3") && stderr.contains("invalid JSON"),
        "{stderr}"
    );

    let skipped = neardup(&["stamp", "-q", "--skip-invalid"], Some(input));
    let lines = stdout_lines(&skipped);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], "{\"content\": oops}");
    assert!(lines[3].contains("cluster_root"));

    let not_an_object = neardup(&["stamp", "-q", "--format", "jsonl"], Some(b"[1,2]\n"));
    assert_eq!(not_an_object.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&not_an_object.stderr).contains("line 1: expected a JSON object")
    );
}

#[test]
fn byte_order_mark_before_the_first_line_is_kept_and_ignored() {
    let input = "\u{feff}{\"content\":\"text after a byte order mark\"}\n";
    let lines = stdout_lines(&neardup(&["stamp", "-q"], Some(input.as_bytes())));
    assert!(lines[0].starts_with("\u{feff}{\"content\""), "{}", lines[0]);
    assert!(lines[0].contains("\"cluster_root\":\""));
}

#[test]
fn a_last_action_without_its_source_line_is_ignored_as_the_cluster_does() {
    let input = b"{\"index\":{\"_id\":\"1\"}}\n{\"content\":\"a\"}\n{\"create\":{\"_id\":\"2\"}}\n";
    let lines = stdout_lines(&neardup(&["stamp", "-q"], Some(input)));
    assert_eq!(lines.len(), 3);
    assert!(lines[1].contains("\"cluster_root\":\""), "{}", lines[1]);
    assert_eq!(lines[2], "{\"create\":{\"_id\":\"2\"}}");
}

#[test]
fn malformed_bulk_action_is_reported_like_the_cluster_does() {
    let output = neardup(
        &["stamp", "-q", "--format", "bulk"],
        Some(b"{\"upsert\":{}}\n{}\n"),
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("expected one of [create, delete, index, update] but found [upsert]"),
        "{stderr}"
    );
}

#[test]
fn replayed_time_expires_old_classes() {
    let original = "转发：周末去哪儿玩？这五个公园的秋景美到不想走";
    let repost = "周末去哪儿玩？这五个公园的秋景美到不想走 #秋游#";
    let input = |second_time: &str| {
        format!(
            "{{\"id\":\"x\",\"content\":\"{original}\",\"at\":\"2024-05-01T00:00:00Z\"}}\n\
             {{\"id\":\"y\",\"content\":\"{repost}\",\"at\":\"{second_time}\"}}\n"
        )
    };
    // The time sits at a nested path, read like the fingerprinted fields.
    let nest = |text: String| {
        text.replace("\"at\":", "\"meta\":{\"published\":")
            .replace("Z\"}", "Z\"}}")
    };
    let input = |second_time: &str| nest(input(second_time));
    let args = [
        "stamp",
        "-q",
        "--time-field",
        "meta.published",
        "--retention",
        "48h",
    ];
    let soon = roots_by_id(&stdout_lines(&neardup(
        &args,
        Some(input("2024-05-02T00:00:00Z").as_bytes()),
    )));
    assert_eq!(soon["x"], soon["y"]);
    let late = roots_by_id(&stdout_lines(&neardup(
        &args,
        Some(input("2024-05-04T00:00:01Z").as_bytes()),
    )));
    assert_ne!(late["x"], late["y"]);
}

#[test]
fn summary_line_reports_documents_and_classes() {
    let input = fixture("reprints.jsonl");
    let path = input.to_str().unwrap_or_default();
    // Not a terminal: quiet unless asked.
    let quiet = neardup(&["stamp", "--input", path], None);
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let output = neardup(&["stamp", "--summary", "--input", path], None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("stamped 10 of 11 documents into"),
        "{stderr}"
    );
    assert!(stderr.contains("largest 3 documents"), "{stderr}");
}

#[test]
fn summary_names_fingerprinted_fields_the_documents_lack() {
    let input = "{\"title\":\"Weather update\",\"body\":\"Rain today in the north\"}\n\
                 {\"title\":\"Weather update\",\"body\":\"Sun tomorrow in the south\"}\n";
    let output = neardup(&["stamp", "--summary"], Some(input.as_bytes()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("no text in `content` in 2 documents"),
        "{stderr}"
    );
    assert!(stderr.contains("into 1 class "), "{stderr}");
    assert!(stderr.contains("1 exact reprint;"), "{stderr}");
}

#[test]
fn fingerprint_command_prints_hex_and_folds_script() {
    let output = neardup(&["fingerprint", "经济发展", "經濟發展"], None);
    let lines = stdout_lines(&output);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1]);
    assert_eq!(lines[0].len(), 16);
    let json = stdout_lines(&neardup(
        &["fingerprint", "--json"],
        Some("some text".as_bytes()),
    ));
    let value: Value = serde_json::from_str(&json[0]).expect("json");
    assert_eq!(value["short"], Value::Bool(true));
}

#[test]
fn config_file_is_read_and_typos_are_rejected() {
    let dir = std::env::temp_dir().join(format!("neardup-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("good.toml");
    std::fs::write(
        &good,
        "root_field = \"group\"\n[engine]\nfields = [\"body\"]\n",
    )
    .expect("write");
    let lines = stdout_lines(&neardup(
        &["--config", good.to_str().unwrap_or_default(), "stamp", "-q"],
        Some(br#"{"body":"text in the body field"}"#),
    ));
    assert!(lines[0].contains("\"group\":"), "{}", lines[0]);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[engine]\nfeilds = [\"body\"]\n").expect("write");
    let output = neardup(
        &["--config", bad.to_str().unwrap_or_default(), "stamp", "-q"],
        Some(b""),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("feilds"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_thesaurus_or_a_synonyms_file_lets_a_swapped_verb_join_and_a_bad_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("neardup-synonyms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = concat!(
        r#"{"id":"a","content":"南湖大桥夜间施工期间实行单向通行"}"#,
        "\n",
        r#"{"id":"b","content":"南湖大桥夜间施工期间采取单向通行"}"#,
        "\n"
    );
    let stamp = |extra: &[&str]| {
        let mut args = vec!["stamp", "-q"];
        args.extend_from_slice(extra);
        roots_by_id(&stdout_lines(&neardup(&args, Some(input.as_bytes()))))
    };
    let plain = stamp(&["--builtin-thesaurus", "false"]);
    assert_ne!(
        plain["a"], plain["b"],
        "a swapped verb is a change without a thesaurus"
    );
    let builtin = stamp(&[]);
    assert_eq!(builtin["a"], builtin["b"], "the built-in thesaurus has it");
    let list = dir.join("synonyms.txt");
    std::fs::write(&list, "# house style\n實行, 采取\n").expect("write");
    let path = list.to_str().unwrap_or_default();
    let declared = stamp(&["--builtin-thesaurus", "false", "--synonyms", path]);
    assert_eq!(declared["a"], declared["b"]);
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "实行\n").expect("write");
    let output = neardup(
        &["stamp", "--synonyms", bad.to_str().unwrap_or_default()],
        Some(b""),
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 1"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_are_rejected_before_reading_input() {
    for args in [
        &["stamp", "--retention", "5 weeks"][..],
        &["stamp", "--mode", "longest:0"][..],
        &["stamp", "-k", "40"][..],
        &["stamp", "--min-short-jaccard", "1.5"][..],
    ] {
        let output = neardup(args, Some(b""));
        assert!(!output.status.success(), "{args:?} was accepted");
    }
}

#[test]
fn serve_refuses_a_state_directory_it_cannot_write_with_a_clear_error() {
    // A path below a regular file can never be created.
    let file = std::env::temp_dir().join(format!("neardup-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, b"x").expect("temp file");
    let state_dir = file.join("state");
    let output = neardup(
        &[
            "serve",
            "--upstream",
            "http://127.0.0.1:9",
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            &state_dir.to_string_lossy(),
        ],
        None,
    );
    let _ = std::fs::remove_file(&file);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("state directory"), "{stderr}");
    assert!(stderr.contains(&*state_dir.to_string_lossy()), "{stderr}");
}

#[test]
fn an_input_file_given_without_its_flag_names_the_flag() {
    let file = fixture("reprints.jsonl");
    let file = file.to_string_lossy();
    let output = neardup(&["stamp", &file], None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("neardup stamp --input {file}")),
        "{stderr}"
    );
}

#[test]
fn a_bad_serve_argument_is_named_before_the_state_directory_is_touched() {
    let root = std::env::temp_dir().join(format!("neardup-untouched-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let state_dir = root.join("state");
    let state = state_dir.to_string_lossy().to_string();
    for (args, expected) in [
        (
            vec!["--upstream", "127.0.0.1:9200"],
            "did you mean `http://127.0.0.1:9200`",
        ),
        // A mistyped scheme is suggested back whole (issue 44), not as
        // `http://http//…`.
        (
            vec!["--upstream", "http//127.0.0.1:9200"],
            "did you mean `http://127.0.0.1:9200`",
        ),
        (
            vec!["--upstream", "https:/search:9200"],
            "did you mean `https://search:9200`",
        ),
        (vec!["--upstream", "ftp://search:21"], "http or https"),
        (vec!["--listen", "nonsense"], "not host:port"),
        (
            vec!["--upstream-ca", "/nonexistent/http_ca.crt"],
            "--upstream-ca",
        ),
    ] {
        let mut full = vec!["serve", "--state-dir", state.as_str()];
        full.extend(args.iter().copied());
        let output = neardup(&full, None);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(
            !state_dir.exists(),
            "{args:?} created {}",
            state_dir.display()
        );
    }
    // A port in use, too.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let output = neardup(
        &["serve", "--state-dir", &state, "--listen", &address],
        None,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert!(
        !state_dir.exists(),
        "a port in use created {}",
        state_dir.display()
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_text_without_letters_or_digits_has_no_fingerprint() {
    let output = neardup(&["fingerprint", ""], None);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no letters or digits"), "{stderr}");
    let output = neardup(&["fingerprint", "……！！"], None);
    assert!(!output.status.success());
}

#[test]
fn a_state_directory_that_is_a_file_is_named_once() {
    let file = std::env::temp_dir().join(format!("neardup-file-state-{}", std::process::id()));
    std::fs::write(&file, b"x").expect("temp file");
    let output = neardup(
        &[
            "serve",
            "--upstream",
            "http://127.0.0.1:9",
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
        ]
        .into_iter()
        .chain([file.to_str().unwrap_or_default()])
        .collect::<Vec<_>>(),
        None,
    );
    let _ = std::fs::remove_file(&file);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("is a file, not a directory"), "{stderr}");
    assert!(!stderr.contains("caused by"), "{stderr}");
}

#[test]
fn a_bad_value_from_a_variable_names_the_variable() {
    let run = |args: &[&str], variable: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
        command.args(args).env_remove("NEARDUP_CONFIG");
        match variable {
            Some(value) => command.env("NEARDUP_MAX_DISTANCE", value),
            None => command.env_remove("NEARDUP_MAX_DISTANCE"),
        };
        let output = command.stdin(Stdio::null()).output().expect("neardup runs");
        assert_eq!(output.status.code(), Some(2));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let from_variable = run(&["stamp", "--input", "/dev/null"], Some("three"));
    assert!(
        from_variable.contains("invalid value 'three'"),
        "{from_variable}"
    );
    assert!(
        from_variable.contains("environment variable NEARDUP_MAX_DISTANCE"),
        "{from_variable}"
    );
    // Typed on the command line: the flag is what to fix, no note.
    let typed = run(&["stamp", "-k", "three", "--input", "/dev/null"], None);
    assert!(typed.contains("invalid value 'three'"), "{typed}");
    assert!(!typed.contains("environment variable"), "{typed}");
}

#[test]
fn help_describes_the_command() {
    let output = neardup(&["--help"], None);
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.starts_with("neardup groups near-duplicate articles as they are indexed."),
        "{help}"
    );
}
