"""opensearch-py pointed at `neardup serve`, used exactly as a user would.

What was stored is always read back from the cluster (osmem) directly, never
through the sidecar. Counts are checked against GET /_neardup/stats, as
differences where other tests share the sidecar.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter, defaultdict

import pytest
from opensearchpy import ConflictError, helpers

from conftest import load_mapping

HEX16 = re.compile(r"^[0-9a-f]{16}$")
DEMO_INDEX = "news-demo"
# The demo corpus as a user would map it: `source` must be a keyword for the
# detail page's outlets aggregation, `published_at` a date for the sorts. The
# neardup template (installed by --install-template for news*) adds the
# stamped fields.
DEMO_MAPPINGS = {
    "properties": {
        "source": {"type": "keyword"},
        "url": {"type": "keyword"},
        "story": {"type": "keyword"},
        "published_at": {"type": "date"},
        "title": {"type": "text"},
        "content": {"type": "text"},
    }
}


# ---------------------------------------------------------------- helpers


def outcomes(stack) -> dict:
    """The counters that matter here, flattened: documents, stored, ..."""
    s = stack.stats()
    out = dict(s["cluster_outcomes"])
    out["documents"] = s["forest"]["documents"]
    out["roots"] = s["forest"]["roots"]
    return out


def delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in after if isinstance(after[k], int) and after[k] != before.get(k)}


def all_docs(direct, index: str) -> dict[str, dict]:
    """Every document of an index, read from the cluster: {_id: _source}."""
    direct.indices.refresh(index=index)
    r = direct.search(index=index, body={"size": 1000, "query": {"match_all": {}}})
    hits = r["hits"]["hits"]
    assert r["hits"]["total"]["value"] == len(hits), "more than one page of documents"
    return {h["_id"]: h["_source"] for h in hits}


def assert_stamped(src: dict, where: str):
    problems = [
        f"{field}={src.get(field)!r}"
        for field in ("cluster_root", "simhash")
        if not (isinstance(src.get(field), str) and HEX16.match(src[field]))
    ]
    assert not problems, f"{where}: not stamped with 16 lowercase hex digits: {', '.join(problems)}"


def class_sizes(stored: dict[str, dict]) -> Counter:
    """{cluster_root: number of documents} of stored documents (all stamped)."""
    for _id, src in stored.items():
        assert_stamped(src, _id)
    return Counter(src["cluster_root"] for src in stored.values())


def unique_text(tag: str, n: int = 12) -> dict:
    """A long synthetic article unlike anything else in these tests."""
    words = [f"{tag}{i}x{(i * 7919) % 1000}" for i in range(60)]
    sentences = [" ".join(words[i : i + 12]) + "." for i in range(0, 60, 12)]
    return {"title": f"Report {tag} on item {n}", "content": " ".join(sentences)}


def show(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True)[:3000]


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def demo(stack, client, direct, demo_docs):
    """The demo corpus bulk-loaded through the sidecar into news-demo.

    Yields what the later tests need: the documents as stored, the stats right
    after the load and the helpers.bulk result.
    """
    before = outcomes(stack)
    client.indices.create(index=DEMO_INDEX, body={"mappings": DEMO_MAPPINGS})
    actions = ({"_index": DEMO_INDEX, "_id": d["id"], "_source": d} for d in demo_docs)
    result = helpers.bulk(client, actions, chunk_size=20, raise_on_error=False)
    client.indices.refresh(index=DEMO_INDEX)
    after = outcomes(stack)
    stored = all_docs(direct, DEMO_INDEX)
    return {"before": before, "after": after, "bulk": result, "stored": stored}


# ---------------------------------------------------------------- tests


def test_bulk_demo_corpus_is_stamped(demo, stack, direct, demo_docs):
    ok, errors = demo["bulk"]
    assert errors == [], f"helpers.bulk reported item errors:\n{show(errors)}"
    assert ok == len(demo_docs) == 48

    stored = demo["stored"]
    assert sorted(stored) == sorted(d["id"] for d in demo_docs), "index does not hold exactly the corpus"
    assert direct.count(index=DEMO_INDEX)["count"] == 48
    for _id, src in stored.items():
        assert_stamped(src, f"{DEMO_INDEX}/{_id}")
    # The user's fields are untouched.
    for d in demo_docs:
        src = {k: v for k, v in stored[d["id"]].items() if k not in ("cluster_root", "simhash")}
        assert src == d, f"{d['id']}: source changed beyond the two stamps"

    # The template applied next to the explicit mappings.
    props = direct.indices.get_mapping(index=DEMO_INDEX)[DEMO_INDEX]["mappings"]["properties"]
    for field in ("cluster_root", "simhash"):
        assert props.get(field, {}).get("type") == "keyword", f"{field} mapped as {props.get(field)}"

    roots = Counter(src["cluster_root"] for src in stored.values())
    assert len(roots) < 48, "no two documents share a cluster_root: nothing was grouped"

    # Classes never mix stories (the corpus has same-topic negatives and
    # templated notices that must stay apart), and a class's id is the
    # fingerprint of one of its members (its root).
    by_root: dict[str, list[str]] = defaultdict(list)
    for _id, src in stored.items():
        by_root[src["cluster_root"]].append(_id)
    for root, ids in by_root.items():
        stories = {stored[i]["story"] for i in ids}
        assert len(stories) == 1, f"class {root} mixes stories {sorted(stories)}: {sorted(ids)}"
        assert root in {stored[i]["simhash"] for i in ids}, (
            f"class {root} ({sorted(ids)}): cluster_root is no member's simhash "
            f"{sorted(stored[i]['simhash'] for i in ids)}"
        )
    # Exact duplicates (same title and content) share their class.
    by_text: dict[tuple, set] = defaultdict(set)
    for src in stored.values():
        by_text[(src["title"], src["content"])].add(src["cluster_root"])
    split = {k[0]: v for k, v in by_text.items() if len(v) > 1}
    assert not split, f"identical articles in different classes: {split}"

    before, after = demo["before"], demo["after"]
    assert after["documents"] - before["documents"] == 48, f"stats delta {show(delta(before, after))}"
    assert after["stored"] - before["stored"] == 48, f"stats delta {show(delta(before, after))}"
    assert after["not_stored"] == before["not_stored"], f"stats delta {show(delta(before, after))}"
    if before["documents"] == 0:  # the sidecar saw nothing but this corpus
        assert after["documents"] == direct.count(index=DEMO_INDEX)["count"] == 48
        assert after["roots"] == len(roots), (
            f"stats forest.roots={after['roots']} but the index has {len(roots)} distinct cluster_root"
        )


def test_classes_endpoint_matches_index(demo, stack):
    stored = demo["stored"]
    sizes = class_sizes(stored)
    for root, size in sizes.items():
        cls = stack.get_json(f"/_neardup/classes/{root}")
        assert cls["cluster_root"] == root, show(cls)
        assert cls["documents"] == size, f"/_neardup/classes/{root}: {show(cls)}\nindex has {size}"


def test_streaming_bulk_mixed_actions(stack, client, direct):
    index = "news-mix"
    seed = [{"_index": index, "_id": f"m{i}", "_source": unique_text(f"mix{i}")} for i in range(3)]
    assert helpers.bulk(client, seed, refresh=True) == (3, [])
    m0_before = direct.get(index=index, id="m0")["_source"]
    before = outcomes(stack)

    actions = [
        {"_op_type": "index", "_index": index, "_id": "m3", **unique_text("mix3")},
        {"_op_type": "create", "_index": index, "_id": "m0", **unique_text("mixdup")},
        {"_op_type": "delete", "_index": index, "_id": "m1"},
        {"_op_type": "create", "_index": index, "_id": "m4", **unique_text("mix4")},
        {"_op_type": "update", "_index": index, "_id": "m2", "doc": {"tag": "updated"}},
        {"_op_type": "delete", "_index": index, "_id": "never-existed"},
        {"_op_type": "index", "_index": index, "_id": "m5", **unique_text("mix5")},
    ]
    results = list(
        helpers.streaming_bulk(client, actions, raise_on_error=False, raise_on_exception=False, chunk_size=500)
    )
    got = [(op, item[op]["_id"], item[op]["status"]) for _, item in results for op in item]
    want = [
        ("index", "m3", 201),
        ("create", "m0", 409),
        ("delete", "m1", 200),
        ("create", "m4", 201),
        ("update", "m2", 200),
        ("delete", "never-existed", 404),
        ("index", "m5", 201),
    ]
    assert got == want, f"per-item results (op, id, status):\n got {got}\nwant {want}\nfull:\n{show(results)}"
    assert [ok for ok, _ in results] == [True, False, True, True, True, False, True]
    conflict = results[1][1]["create"]
    assert conflict["error"]["type"] == "version_conflict_engine_exception", show(conflict)
    assert results[5][1]["delete"]["result"] == "not_found", show(results[5])

    after = outcomes(stack)
    d = delta(before, after)
    assert after["documents"] - before["documents"] == 2, f"+3 new (m3, m4, m5) -1 deleted (m1); stats delta {show(d)}"
    assert after["stored"] - before["stored"] == 3, f"stats delta {show(d)}"
    assert after["not_stored"] - before["not_stored"] == 1, f"the 409 create; stats delta {show(d)}"
    assert after["deleted"] - before["deleted"] == 1, f"stats delta {show(d)}"

    stored = all_docs(direct, index)
    assert sorted(stored) == ["m0", "m2", "m3", "m4", "m5"]
    for _id, src in stored.items():
        assert_stamped(src, f"{index}/{_id}")
    assert stored["m0"] == m0_before, "the rejected create changed m0"
    assert stored["m2"]["tag"] == "updated"


def test_retried_bulk_counts_once(stack, client, direct):
    index = "news-retry"
    actions = [{"_index": index, "_id": f"r{i}", "_source": unique_text(f"retry{i}")} for i in range(4)]
    s0 = outcomes(stack)
    assert helpers.bulk(client, copy.deepcopy(actions), refresh=True) == (4, [])
    s1 = outcomes(stack)
    first = all_docs(direct, index)
    assert helpers.bulk(client, copy.deepcopy(actions), refresh=True) == (4, [])
    s2 = outcomes(stack)
    second = all_docs(direct, index)

    assert s1["documents"] - s0["documents"] == 4, f"first bulk: stats delta {show(delta(s0, s1))}"
    assert s2["documents"] == s1["documents"], f"retry counted again: stats delta {show(delta(s1, s2))}"
    assert s2["roots"] == s1["roots"], f"retry made new classes: stats delta {show(delta(s1, s2))}"
    assert direct.count(index=index)["count"] == 4
    for _id in first:
        assert_stamped(second[_id], f"{index}/{_id}")
        assert (second[_id]["cluster_root"], second[_id]["simhash"]) == (
            first[_id]["cluster_root"],
            first[_id]["simhash"],
        ), f"{_id}: stamps changed on retry"


def test_single_document_api(stack, client, direct):
    index = "news-single"
    s0 = outcomes(stack)

    r = client.index(index=index, id="a", body=unique_text("singlea"), refresh=True)
    assert r["result"] == "created" and r["_id"] == "a", show(r)
    src = direct.get(index=index, id="a")["_source"]
    assert_stamped(src, "client.index")

    r = client.create(index=index, id="b", body=unique_text("singleb"), refresh=True)
    assert r["result"] == "created", show(r)
    assert_stamped(direct.get(index=index, id="b")["_source"], "client.create")

    r = client.index(index=index, body=unique_text("singlec"), refresh=True)  # POST /{index}/_doc
    auto_id = r["_id"]
    assert r["result"] == "created", show(r)
    assert_stamped(direct.get(index=index, id=auto_id)["_source"], "client.index without id")

    s1 = outcomes(stack)
    assert s1["documents"] - s0["documents"] == 3, f"stats delta {show(delta(s0, s1))}"

    with pytest.raises(ConflictError) as e:
        client.create(index=index, id="b", body=unique_text("singleconflict"))
    assert e.value.status_code == 409 and e.value.error == "version_conflict_engine_exception", repr(e.value)
    s2 = outcomes(stack)
    assert s2["documents"] == s1["documents"], f"409 create counted: stats delta {show(delta(s1, s2))}"
    assert s2["not_stored"] - s1["not_stored"] == 1, f"stats delta {show(delta(s1, s2))}"

    # Re-indexing the same id with the same body: still one document.
    r = client.index(index=index, id="a", body=unique_text("singlea"), refresh=True)
    assert r["result"] == "updated", show(r)
    assert outcomes(stack)["documents"] == s1["documents"]

    r = client.delete(index=index, id="a", refresh=True)
    assert r["result"] == "deleted", show(r)
    s3 = outcomes(stack)
    assert s1["documents"] - s3["documents"] == 1, f"delete not taken back: stats delta {show(delta(s1, s3))}"
    assert s3["deleted"] - s2["deleted"] == 1, f"stats delta {show(delta(s2, s3))}"
    assert sorted(all_docs(direct, index)) == sorted(["b", auto_id])


def test_list_page_counts_match_index(demo, client, direct):
    body = load_mapping("list-page.json")
    body["size"] = 100  # every group on one page (the file shows 20)
    page = client.search(index=DEMO_INDEX, body=body)

    agg = direct.search(
        index=DEMO_INDEX,
        body={"size": 0, "aggs": {"roots": {"terms": {"field": "cluster_root", "size": 1000}}}},
    )
    class_sizes = {b["key"]: b["doc_count"] for b in agg["aggregations"]["roots"]["buckets"]}

    groups = {}
    for hit in page["hits"]["hits"]:
        root = hit["fields"]["cluster_root"][0]
        assert root not in groups, f"cluster_root {root} appears in two groups"
        groups[root] = hit
    assert set(groups) == set(class_sizes), (
        f"groups {sorted(groups)}\nclasses in the index {sorted(class_sizes)}"
    )
    wrong = {
        root: (hit["inner_hits"]["similar"]["hits"]["total"]["value"], class_sizes[root])
        for root, hit in groups.items()
        if hit["inner_hits"]["similar"]["hits"]["total"]["value"] != class_sizes[root]
    }
    assert not wrong, f"inner_hits total vs class size (terms agg): {wrong}"
    assert page["aggregations"]["stories"]["value"] == len(class_sizes)
    assert page["hits"]["total"]["value"] == 48
    assert sum(class_sizes.values()) == 48

    # The group's representative is the newest member of its class.
    stored = demo["stored"]
    for root, hit in groups.items():
        newest = max(src["published_at"] for src in stored.values() if src["cluster_root"] == root)
        assert hit["_source"]["published_at"] == newest, f"group {root}: {show(hit)}"

    # The file as shipped pages 20 groups, newest first.
    shipped = client.search(index=DEMO_INDEX, body=load_mapping("list-page.json"))
    assert [h["_id"] for h in shipped["hits"]["hits"]] == [h["_id"] for h in page["hits"]["hits"]][:20]


def test_detail_page_lists_other_members(demo, client):
    stored = demo["stored"]
    sizes = class_sizes(stored)
    root, size = sizes.most_common(1)[0]
    members = sorted((src["published_at"], _id) for _id, src in stored.items() if src["cluster_root"] == root)
    first_id = members[0][1]
    text = json.dumps(load_mapping("detail-page.json"))
    body = json.loads(text.replace("{{cluster_root}}", root).replace("{{id}}", first_id))
    r = client.search(index=DEMO_INDEX, body=body)
    assert [h["_id"] for h in r["hits"]["hits"]] == [i for _, i in members[1:]], show(r)
    assert r["hits"]["total"]["value"] == size - 1
    outlets = Counter(stored[i]["source"] for _, i in members[1:])
    got = {b["key"]: b["doc_count"] for b in r["aggregations"]["outlets"]["buckets"]}
    assert got == dict(outlets), show(r["aggregations"])


def test_similar_endpoint(demo, client):
    stored = demo["stored"]
    sizes = class_sizes(stored)
    root, size = sizes.most_common(1)[0]
    ids = sorted(_id for _id, src in stored.items() if src["cluster_root"] == root)
    r = client.transport.perform_request("GET", f"/{DEMO_INDEX}/_neardup/similar/{ids[0]}")
    got = sorted(h["_id"] for h in r["hits"]["hits"])
    assert got == ids[1:], f"similar of {ids[0]} (class {root}, members {ids}):\n{show(r)}"


def test_passthrough_info_and_search(demo, client, direct):
    assert client.info() == direct.info()
    assert client.ping() is True
    assert client.count(index=DEMO_INDEX) == direct.count(index=DEMO_INDEX)

    body = {
        "size": 5,
        "query": {"match": {"content": "地铁"}},
        "sort": [{"published_at": "desc"}, "_score"],
        "aggs": {"outlets": {"terms": {"field": "source", "size": 3}}},
    }
    via, raw = client.search(index=DEMO_INDEX, body=body), direct.search(index=DEMO_INDEX, body=body)
    via.pop("took", None)
    raw.pop("took", None)
    assert via == raw, f"via sidecar:\n{show(via)}\ndirect:\n{show(raw)}"
    assert via["hits"]["total"]["value"] > 0

    # Errors pass through too, with the cluster's status and body.
    from opensearchpy import NotFoundError

    with pytest.raises(NotFoundError) as e1:
        client.search(index="news-missing", body={"query": {"match_all": {}}})
    with pytest.raises(NotFoundError) as e2:
        direct.search(index="news-missing", body={"query": {"match_all": {}}})
    assert e1.value.info == e2.value.info


def test_compressed_requests_are_stamped(stack, client, direct):
    """http_compress=True: request bodies are gzip-encoded (Content-Encoding: gzip)."""
    from opensearchpy import OpenSearch

    gz = OpenSearch(hosts=[stack.sidecar_url], http_compress=True, timeout=10, max_retries=0)
    index = "news-gzip"
    s0 = outcomes(stack)
    actions = [{"_index": index, "_id": f"g{i}", "_source": unique_text(f"gzip{i}")} for i in range(3)]
    assert helpers.bulk(gz, actions, refresh=True) == (3, [])
    r = gz.index(index=index, id="single", body=unique_text("gzipsingle"), refresh=True)
    assert r["result"] == "created", show(r)
    stored = all_docs(direct, index)
    assert sorted(stored) == ["g0", "g1", "g2", "single"]
    for _id, src in stored.items():
        assert_stamped(src, f"{index}/{_id}")
    assert outcomes(stack)["documents"] - s0["documents"] == 4
    gz.close()


def test_filter_path_keeps_error_bodies(client, direct):
    index = "news-filter-path"
    client.create(index=index, id="1", body=unique_text("fp1"), refresh=True)
    errors = []
    for c in (client, direct):
        with pytest.raises(ConflictError) as e:
            c.create(index=index, id="1", body=unique_text("fp1"), filter_path="_id")
        errors.append(e.value.info)
    assert errors[0] == errors[1], f"via sidecar: {errors[0]!r}\ndirect: {errors[1]!r}"
