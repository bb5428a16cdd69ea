#!/usr/bin/env bash
# scripts/demo.sh — neardup end to end, on a fresh checkout.
#
#   1. prepares .venv/ (scripts/venv.sh: osmem-server, an in-memory
#      OpenSearch-compatible server) and builds neardup (cargo build --release);
#   2. starts osmem-server and, in front of it, `neardup serve
#      --install-template` (both on free loopback ports, both stopped on exit);
#   3. bulk-loads the 48 demo articles (tests/fixtures/demo/articles.jsonl)
#      through the sidecar with curl, exactly as an indexer would;
#   4. shows the list page (mappings/list-page.json), the detail page of the
#      largest story (mappings/detail-page.json) and the sidecar's stats.
#
# Nothing is written outside .venv/, target/ and a temporary directory.
# Set NEARDUP_BIN to use an existing binary instead of building.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
index="news-demo"
corpus="tests/fixtures/demo/articles.jsonl"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/neardup-demo.XXXXXX")"
osmem_pid="" sidecar_pid=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$sidecar_pid" ]; then kill "$sidecar_pid" 2>/dev/null || true; fi
    exec 3>&- 2>/dev/null || true # osmem-server exits when its stdin closes…
    if [ -n "$osmem_pid" ]; then kill "$osmem_pid" 2>/dev/null || true; fi # …or now
    for pid in $sidecar_pid $osmem_pid; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "$rc" != 0 ]; then
        for f in "$tmp"/*.log; do
            [ -s "$f" ] && { echo "--- $(basename "$f") (last lines)"; tail -n 20 "$f"; } >&2
        done
        echo "demo.sh: failed (exit $rc)" >&2
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { echo "demo.sh: $*" >&2; exit 1; }
step() { echo "==> $*" >&2; }

# Wait (up to 30 s) for a process's first stdout line, a JSON object; print
# the value of one of its keys.
first_line_value() { # pid file key
    local i line
    for i in $(seq 1 300); do
        line="$(head -n 1 "$2" 2>/dev/null || true)"
        if [ -n "$line" ]; then
            "$py" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$line" "$3"
            return
        fi
        kill -0 "$1" 2>/dev/null || die "$(basename "$2" .out) exited during startup"
        sleep 0.1
    done
    die "$(basename "$2" .out) did not start within 30 s"
}

# HTTP to the sidecar: req METHOD PATH [BODY-FILE] → body on stdout; any
# status >= 300 stops the demo with the response.
req() {
    local method="$1" path="$2" body="${3:-}" out="$tmp/response" code
    local args=(-sS -o "$out" -w '%{http_code}' -X "$method" --max-time 30)
    if [ -n "$body" ]; then
        local type=application/json
        case "$path" in *_bulk*) type=application/x-ndjson ;; esac
        args+=(-H "Content-Type: $type" --data-binary "@$body")
    fi
    code="$(curl "${args[@]}" "$sidecar$path")" || die "$method $path: no answer"
    [ "$code" -lt 300 ] || die "$method $path -> $code: $(head -c 2000 "$out")"
    cat "$out"
}

step "Python tools (scripts/venv.sh)"
bash scripts/venv.sh
py="$root/.venv/bin/python"

if [ -n "${NEARDUP_BIN:-}" ]; then
    neardup="$NEARDUP_BIN"
else
    step "building neardup (cargo build --release)"
    cargo build --release --quiet </dev/null
    neardup="$root/target/release/neardup"
fi

step "starting osmem-server and neardup serve"
# osmem-server exits when its stdin closes: its stdin is a fifo whose only
# writer is this script (fd 3), so it also goes away if this script is killed.
mkfifo "$tmp/osmem.in"
exec 3<>"$tmp/osmem.in"
.venv/bin/osmem-server -addr 127.0.0.1:0 -no-ja <"$tmp/osmem.in" >"$tmp/osmem.out" 2>"$tmp/osmem.log" 3>&- &
osmem_pid=$!
upstream="$(first_line_value "$osmem_pid" "$tmp/osmem.out" url)"

NO_COLOR=1 "$neardup" serve --upstream "$upstream" --listen 127.0.0.1:0 \
    --install-template --template-patterns 'news*' --state-dir "$tmp/state" \
    </dev/null >"$tmp/neardup.out" 2>"$tmp/neardup.log" 3>&- &
sidecar_pid=$!
# Watchdog: when this script ends however it ends (even kill -9), fd 3 closes,
# the fifo reads EOF and the sidecar is stopped too.
(cat >/dev/null; kill "$sidecar_pid" 2>/dev/null) <"$tmp/osmem.in" >/dev/null 2>&1 3>&- &
sidecar="$(first_line_value "$sidecar_pid" "$tmp/neardup.out" listen)"

# The index as a news site would map it (mappings/news-index.json, as the
# README shows; the neardup template, installed by --install-template for
# news*, adds cluster_root and simhash as keywords).
req PUT "/$index" mappings/news-index.json >/dev/null

# JSON lines → _bulk NDJSON (an index action with _id per article).
"$py" - "$corpus" "$index" >"$tmp/articles.bulk" <<'PY'
import json, sys
corpus, index = sys.argv[1], sys.argv[2]
with open(corpus, encoding="utf-8") as f:
    for line in f:
        if line.strip():
            doc = json.loads(line)
            print(json.dumps({"index": {"_index": index, "_id": doc["id"]}}))
            print(json.dumps(doc, ensure_ascii=False))
PY
step "POST /_bulk?refresh=true ($(($(wc -l <"$tmp/articles.bulk") / 2)) articles) through the sidecar"
req POST "/_bulk?refresh=true" "$tmp/articles.bulk" >"$tmp/bulk.json"

# The list page (every story on one page here: size 100 instead of 20), then
# the detail page of the largest story.
"$py" -c 'import json, sys; q = json.load(open(sys.argv[1])); q["size"] = 100; print(json.dumps(q))' \
    mappings/list-page.json >"$tmp/list-query.json"
req POST "/$index/_search" "$tmp/list-query.json" >"$tmp/list.json"
"$py" - "$tmp/list.json" "$tmp/largest" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
groups = r["hits"]["hits"]
def when(ts):  # 2026-03-10T09:35:00+08:00 -> 03-10 09:35
    return ts[5:10] + " " + ts[11:16]
print(f"\nList page (mappings/list-page.json: collapse on cluster_root, newest first)")
print(f"{r['hits']['total']['value']} articles, {r['aggregations']['stories']['value']} stories:")
for n, h in enumerate(groups, 1):
    s = h["_source"]
    size = h["inner_hits"]["similar"]["hits"]["total"]["value"]
    more = f"   (+{size - 1} similar)" if size > 1 else ""
    print(f"{n:3}. {when(s['published_at'])}  {s['source']}: {s['title']}{more}")
big = max(groups, key=lambda h: h["inner_hits"]["similar"]["hits"]["total"]["value"])
with open(sys.argv[2], "w") as f:
    f.write(f"{big['fields']['cluster_root'][0]} {big['_id']}\n")
PY
read -r root_id doc_id <"$tmp/largest"
sed -e "s/{{cluster_root}}/$root_id/g" -e "s/{{id}}/$doc_id/g" mappings/detail-page.json >"$tmp/detail-query.json"
req POST "/$index/_search" "$tmp/detail-query.json" >"$tmp/detail.json"
req GET "/$index/_doc/$doc_id" >"$tmp/doc.json" # passes through the sidecar unchanged
req GET "/_neardup/stats" >"$tmp/stats.json"

"$py" - "$tmp/doc.json" "$tmp/detail.json" "$tmp/stats.json" "$tmp/bulk.json" <<'PY'
import json, sys
doc, detail, stats, bulk = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:5])
def when(ts):
    return ts[5:10] + " " + ts[11:16]
s = doc["_source"]
others = detail["hits"]["hits"]
print(f"\nDetail page of the largest story (mappings/detail-page.json, cluster_root {s['cluster_root']})")
print(f"     {when(s['published_at'])}  {s['source']}: {s['title']}")
print(f"  also carried by ({detail['hits']['total']['value']} more, oldest first):")
for h in others:
    o = h["_source"]
    print(f"     {when(o['published_at'])}  {o['source']}: {o['title']}")
outlets = ", ".join(f"{b['key']} ({b['doc_count']})" for b in detail["aggregations"]["outlets"]["buckets"])
print(f"  outlets: {outlets}")
f, c = stats["forest"], stats["cluster_outcomes"]
errors = sum(1 for i in bulk["items"] if "error" in next(iter(i.values())))
print(f"\n/_neardup/stats: {f['documents']} documents in {f['roots']} classes "
      f"({f['nodes']} forest nodes); stored {c['stored']}, not stored {c['not_stored']}; "
      f"bulk item errors: {errors}; heap ~{stats['memory']['approx_heap_bytes'] / 2**20:.1f} MiB")
PY
echo
echo "Every stored article now carries \"cluster_root\" and \"simhash\"; e.g. $doc_id:"
"$py" -c 'import json,sys; s=json.load(open(sys.argv[1]))["_source"]; print("  cluster_root=%s simhash=%s" % (s["cluster_root"], s["simhash"]))' "$tmp/doc.json"
