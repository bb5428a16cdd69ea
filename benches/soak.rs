//! Soak: a steady stream with expiry through the ledger and its state
//! directory, to show that what the process holds plateaus while the
//! forest stays at a flat size (issue 49).
//!
//! ```text
//! cargo bench --bench soak -- [DOCUMENTS] [--pool P] [--live L] [--every E]
//! ```
//!
//! The stream: a pool of `P` documents (default 50 000) made by
//! `../shared/bench/overlap.py` (60 % short), passed over again and again;
//! each pass gives every document a new edition (a few words changed or
//! added), which joins the class of the earlier ones or starts one of its
//! own, so classes live across passes while their nodes expire. One
//! document a virtual millisecond, a retention of `L` milliseconds
//! (default 100 000: about that many documents within it), expired as the
//! sidecar does (a bounded number per document). Effects go to a log in a
//! state directory under `TMPDIR`, and a snapshot is taken whenever the log
//! has grown by 32 MiB, copied in slices with documents placed between
//! them, as the sidecar does.
//!
//! Every `E` documents (default 50 000) a row: live nodes, the side file
//! (live bytes, mapped bytes, the process's resident file pages, which are
//! mostly the side file's), anonymous memory (`RssAnon`) and the
//! allocator's bytes in use, the state directory's size, what compaction
//! moved, and how long each write held the ledger (place and expiry, which
//! run the compaction steps; not the analysis) since the last row.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use neardup::config::EngineSettings;
use neardup::engine::EXPIRY_BUDGET_PER_DOCUMENT;
use neardup::ledger::{DocumentKey, Ledger};
use neardup::persist::store::snapshots::CAPTURE_SLICE_BYTES;
use neardup::persist::{FsyncPolicy, Store, StoreOptions};

const START_TIME: i64 = 1_700_000_000_000;
const SNAPSHOT_AFTER_LOG_BYTES: u64 = 32 << 20;
const MIB: f64 = (1 << 20) as f64;

fn argument(arguments: &[String], name: &str) -> Option<usize> {
    let position = arguments.iter().position(|argument| argument == name)?;
    arguments.get(position + 1)?.parse().ok()
}

/// The pool: `size` documents from `overlap.py`.
fn pool(size: usize) -> Vec<serde_json::Value> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/overlap.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(size.to_string())
        .output()
        .unwrap_or_else(|error| panic!("python3 {}: {error}", script.display()));
    assert!(output.status.success(), "{} failed", script.display());
    BufReader::new(output.stdout.as_slice())
        .lines()
        .map(|line| serde_json::from_str(&line.expect("a line")).expect("JSON"))
        .collect()
}

/// Edition `pass` of `document`: a few words changed or added, so the
/// text is new (a new node) and most often near the earlier editions.
fn edition(document: &serde_json::Value, pass: usize) -> serde_json::Value {
    let mut edition = document.clone();
    let content = document["content"].as_str().unwrap_or_default();
    let changed = match pass % 3 {
        0 => format!("{content}（更新{pass}）"),
        1 => format!("第{pass}版：{content}"),
        _ => format!("{content} 记者{pass}报道"),
    };
    edition["content"] = serde_json::Value::String(changed);
    let id = document["id"].as_str().unwrap_or_default();
    edition["id"] = serde_json::Value::String(format!("{id}-{pass}"));
    edition
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.metadata().ok())
                .map(|metadata| metadata.len())
                .sum()
        })
        .unwrap_or(0)
}

/// glibc's count of bytes in use (arena and mapped chunks).
fn allocator_in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

struct Soak {
    store: Store,
    ledger: Ledger,
    placed: usize,
    snapshots: usize,
    /// Microseconds each write held the ledger (place and expire, which
    /// run the compaction steps) since the last row.
    write_micros: Vec<f64>,
}

impl Soak {
    fn place(&mut self, document: &serde_json::Value) {
        let now = START_TIME + self.placed as i64;
        self.placed += 1;
        let analysis = self.ledger.engine().analyzer().analyze_document(document);
        let timer = Instant::now();
        if let Some(analysis) = analysis {
            let placed = self.ledger.place(analysis, now);
            let id = document["id"].as_str().unwrap_or_default();
            self.ledger
                .stored(DocumentKey::new("soak", id), placed.fingerprint);
        }
        self.ledger.expire(now, EXPIRY_BUDGET_PER_DOCUMENT);
        self.write_micros.push(timer.elapsed().as_secs_f64() * 1e6);
        self.store.append(self.ledger.take_journal());
    }

    /// A snapshot as the sidecar takes one: the capture copied in slices,
    /// `between` documents placed between them (writes the lock lets
    /// through, with compaction running meanwhile).
    fn snapshot(&mut self, between: &mut impl Iterator<Item = serde_json::Value>) {
        self.store.sync(self.store.last_seq()).expect("log written");
        let capture = self.store.begin_snapshot(&self.ledger);
        self.store.start_segment().expect("new log segment");
        let pending = loop {
            if capture.copy_some(&self.ledger, CAPTURE_SLICE_BYTES) {
                break capture.take(&self.ledger).expect("capture copied");
            }
            capture.flush();
            for document in between.by_ref().take(20) {
                self.place(&document);
            }
        };
        let now = START_TIME + self.placed as i64;
        self.store
            .finish_snapshot(pending, now)
            .expect("snapshot written");
        self.snapshots += 1;
    }
}

fn main() {
    neardup::allocator::keep_large_blocks_mapped();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|argument| argument == "--list") {
        println!("soak: benchmark");
        return;
    }
    let documents: usize = arguments
        .first()
        .and_then(|argument| argument.parse().ok())
        .unwrap_or(1_000_000);
    let pool_size = argument(&arguments, "--pool").unwrap_or(50_000);
    let retention = argument(&arguments, "--live").unwrap_or(100_000);
    let every = argument(&arguments, "--every").unwrap_or(50_000);

    let pool = pool(pool_size);
    let dir = std::env::temp_dir().join(format!("neardup-bench-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = EngineSettings {
        retention: Some(format!("{}s", retention / 1000)),
        ..EngineSettings::default()
    };
    let parts = settings.parts().expect("settings");
    let (store, ledger, _) = Store::open(
        StoreOptions {
            dir: dir.clone(),
            fsync: FsyncPolicy::Never,
            snapshot_after_log_bytes: SNAPSHOT_AFTER_LOG_BYTES,
            settings_digest: "soak".to_string(),
        },
        |snapshot| neardup::persist::ledger_from_snapshot(parts.clone(), snapshot),
    )
    .expect("open");
    let mut soak = Soak {
        store,
        ledger,
        placed: 0,
        snapshots: 0,
        write_micros: Vec::new(),
    };
    println!(
        "soak: {documents} documents, pool {pool_size}, retention {} s at a document per ms, state in {}",
        retention / 1000,
        dir.display()
    );
    println!(
        "| documents | s | live nodes | side live MiB | side mapped MiB | resident file MiB | RssAnon MiB | allocated MiB | state dir MiB | moved MiB | compactions | snapshots | write p50 / p99 / max µs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let started = Instant::now();
    let mut stream = (0..)
        .flat_map(|pass| pool.iter().map(move |document| edition(document, pass)))
        .take(documents);
    let mut next_row = every;
    while let Some(document) = stream.next() {
        soak.place(&document);
        if soak.store.snapshot_due() {
            soak.snapshot(&mut stream);
        }
        if soak.placed >= next_row {
            next_row += every;
            soak.store.flush().expect("log written");
            let side = soak.ledger.engine().stats().side_file;
            let file_kib = support::status_kib("RssFile:").unwrap_or(0);
            let anon_kib = support::status_kib("RssAnon:").unwrap_or(0);
            let mut writes = std::mem::take(&mut soak.write_micros);
            writes.sort_by(f64::total_cmp);
            let at = |share: f64| {
                writes
                    .get(((writes.len().max(1) - 1) as f64 * share) as usize)
                    .copied()
                    .unwrap_or(0.0)
            };
            println!(
                "| {} | {:.0} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {:.0} / {:.0} / {:.0} |",
                soak.placed,
                started.elapsed().as_secs_f64(),
                soak.ledger.engine().forest().stats().nodes,
                side.live_bytes as f64 / MIB,
                side.mapped_bytes as f64 / MIB,
                file_kib as f64 / 1024.0,
                anon_kib as f64 / 1024.0,
                allocator_in_use() as f64 / MIB,
                directory_bytes(&dir) as f64 / MIB,
                side.moved_bytes as f64 / MIB,
                side.compactions,
                soak.snapshots,
                at(0.5),
                at(0.99),
                at(1.0),
            );
        }
    }
    drop(soak);
    let _ = std::fs::remove_dir_all(&dir);
}
