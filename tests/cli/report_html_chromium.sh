#!/usr/bin/env bash
# report.html in a real browser. Runs `layersec demo --quick` into a results
# folder whose name carries markup (`<img src=x onerror=...>`: it must reach
# the page as text, never as an element), then:
#   - checks the page is self-contained (no script, no external reference);
#   - renders it in headless Chromium (--dump-dom and --screenshot in one run,
#     every host name unresolvable) and fails on any console message, e.g. a
#     Content-Security-Policy refusal of a fetch;
#   - checks the rendered DOM: every table with its rows (the ten paper
#     sub-scenarios with the paper's columns labelled as the paper's, the
#     cost and key-establishment tables, the group sizes, the zonal network),
#     every chart with drawn series (overhead against the paper's, latency
#     CDFs, group size and growth against the paper's Table 21, the zonal ST
#     latency and BE throughput), the run's settings and the machine; the
#     bench tsn section from a recorded `layersec bench tsn --json` document
#     (tests/report/tsn_bench_sample.json) found as tsn.json in the folder:
#     every row, the TSN lab paper's figures labelled as the paper's, the
#     throughput and latency charts of both ports;
#   - keeps report.html, results.json and the screenshot report.png in
#     $LAYERSEC_TEST_ARTIFACTS/report_html (default: test-artifacts/ in the
#     directory ctest runs the test in).
# Then runs the demo twice more, briefly: on a terminal (script(1)) it shows a
# progress line on stderr; piped, stderr carries none.
# Chromium (Debian `chromium`, ~290 MB installed with its libraries) is not in
# scripts/install-deps.sh: without it the test skips (77) and says so.
# Usage: report_html_chromium.sh /path/to/layersec
set -euo pipefail
LAYERSEC="$1"
TSN_SAMPLE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../report" && pwd)/tsn_bench_sample.json"

chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "SKIP: chromium is not installed (apt-get install chromium); report.html is not rendered"
  exit 77
fi
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out="$tmp/results <img src=x onerror=alert(1)>"
# A bad --tsn-json fails at once (status 2, the file named), before any run.
echo '{"rows": [' > "$tmp/bad_tsn.json"
st=0
"$LAYERSEC" demo --quick --iterations 1 --no-plots --out "$tmp/bad" --tsn-json "$tmp/bad_tsn.json" \
  > "$tmp/bad_stdout.txt" 2> "$tmp/bad_stderr.txt" || st=$?
[[ $st -eq 2 ]] || fail "demo with a truncated --tsn-json: status $st, want 2"
grep -q "bad_tsn.json: not valid JSON" "$tmp/bad_stderr.txt" || fail "the bad --tsn-json is not named"
[[ ! -e "$tmp/bad/results.json" ]] || fail "the demo ran with a bad --tsn-json"
# The bench tsn results found in the results folder join the page.
mkdir -p "$out"
cp "$TSN_SAMPLE" "$out/tsn.json"
if ! "$LAYERSEC" demo --quick --iterations 10 --seed 5 --no-plots --out "$out" > "$tmp/stdout.txt" 2> "$tmp/stderr.txt"; then
  cat "$tmp/stdout.txt" "$tmp/stderr.txt"
  fail "layersec demo exited non-zero"
fi
page="$out/report.html"
[[ -s "$page" ]] || fail "report.html missing or empty"
grep -q "^report: .*report.html" "$tmp/stdout.txt" || fail "the demo did not say where report.html is"
grep -q "^report.html: the bench tsn results of .*tsn.json" "$tmp/stdout.txt" || fail "the demo did not take tsn.json"
if grep -q $'\r' "$tmp/stderr.txt"; then fail "progress lines on a pipe"; fi

# 1. Self-contained, as written.
python3 - "$page" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
# Text is escaped, so every "<" starts a tag the writer made: look inside tags only.
tags = re.findall(r"<[a-zA-Z][^>]*>", html)
names = {re.match(r"<([a-zA-Z0-9]+)", t).group(1).lower() for t in tags}
for bad in ("script", "link", "iframe", "object", "embed", "img", "base"):
    assert bad not in names, f"report.html has a <{bad}> element"
for t in tags:
    assert not re.search(r"\s(src|srcset|action|formaction)=", t), f"a fetching attribute: {t[:80]}"
    for h in re.findall(r'\shref="([^"]*)"', t):
        assert h.startswith("#"), f"a link out of the page: {h}"
    for u in re.findall(r"url\(([^)]*)", t):
        assert u.startswith("#"), f"url() to something not in the page: {u}"
    for u in re.findall(r"(?:https?|ftp)://[^\s\"']*", t):
        assert u == "http://www.w3.org/2000/svg", f"a URL in a tag: {u}"
style = html[html.index("<style>"):html.index("</style>")]
assert "url(" not in style and "@import" not in style, "the stylesheet fetches something"
assert "default-src 'none'" in html, "no Content-Security-Policy"
print(f"report_html: self-contained ({len(html)} bytes)")
PY

# 2. Render it: DOM and screenshot in one run, no network.
# render PAGE PNG DOM: fails on a render error or any console message.
render() {
  local uri profile
  uri="$(python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).resolve().as_uri())' "$1")"
  profile="$(mktemp -d)"
  if ! timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
      --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars --enable-logging=stderr --log-level=0 \
      --window-size=1400,10000 --screenshot="$2" --dump-dom "$uri" > "$3" 2> "$tmp/chromium.log"; then
    rm -rf "$profile"
    tail -20 "$tmp/chromium.log"
    fail "chromium could not render $1"
  fi
  rm -rf "$profile"
  if grep -q "CONSOLE" "$tmp/chromium.log"; then
    grep "CONSOLE" "$tmp/chromium.log" >&2
    fail "the page logged console messages (a refused fetch?)"
  fi
  head -c 8 "$2" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || fail "no PNG screenshot"
  # A blank page compresses to a few KiB; the rendered report is far larger.
  [[ "$(stat -c %s "$2")" -gt 100000 ]] || fail "the screenshot of $1 looks blank"
}
render "$page" "$tmp/report.png" "$tmp/dom.html"

# 3. The rendered DOM has every table and chart, with data. The checker's
# helpers are shared with the bench page (step 6).
cat > "$tmp/dom_check.py" <<'PY'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.by_id, self.tags = [], {}, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        node = {"tag": tag, "attrs": a, "children": [], "text": []}
        if self.stack:
            self.stack[-1]["children"].append(node)
        self.tags.append(node)
        if "id" in a:
            self.by_id[a["id"]] = node
        if tag not in ("meta", "br", "hr", "input", "img", "link", "col", "area", "base", "wbr", "source"):
            self.stack.append(node)
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1]["tag"] == tag:
            self.stack.pop()
    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break
    def handle_data(self, data):
        for n in self.stack:
            n["text"].append(data)

def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)

def text(n):
    return "".join(n["text"])

dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
tags = {n["tag"] for n in dom.tags}
for bad in ("script", "img", "iframe", "object", "embed", "link"):
    assert bad not in tags, f"a <{bad}> element in the rendered page"

def table(id_, rows, paper=False):
    t = dom.by_id.get(id_)
    assert t is not None and t["tag"] == "table", f"table {id_} missing"
    body = [n for n in walk(t) if n["tag"] == "tbody"]
    n = len([c for c in body[0]["children"] if c["tag"] == "tr"]) if body else 0
    assert n == rows, f"table {id_}: {n} rows, expected {rows}"
    heads = [text(n) for n in walk(t) if n["tag"] == "th" and "paper" in n["attrs"].get("class", "")]
    if paper:
        assert any("the paper's" in h for h in heads), f"table {id_}: no column group labelled the paper's"
    return t

def chart(id_, series, paper=False):
    f = dom.by_id.get(id_)
    assert f is not None and f["tag"] == "figure", f"chart {id_} missing"
    svg = [n for n in walk(f) if n["tag"] == "svg"]
    assert svg and int(svg[0]["attrs"].get("data-points", "0")) > 0, f"chart {id_}: nothing drawn"
    groups = [n for n in walk(svg[0]) if n["tag"] == "g" and "series" in n["attrs"].get("class", "").split()]
    drawn = [g for g in groups if any(c["tag"] in ("path", "circle", "rect") for c in walk(g))]
    assert len(drawn) >= series, f"chart {id_}: {len(drawn)} series drawn, expected {series}"
    if paper:
        assert any("paper" in g["attrs"]["class"] for g in drawn), f"chart {id_}: no series of the paper's"
        assert "the paper's" in text(f), f"chart {id_}: the paper's figures not labelled"

PY
python3 - "$tmp/dom.html" "$tmp/dom_check.py" "$out/results.json" "$out/zonal.json" "$TSN_SAMPLE" <<'PY'
import json, sys
exec(open(sys.argv[2], encoding="utf-8").read())
t = table("table-paper-scenarios-sim", 10, paper=True)
# The figures are the run's: every row's p99 (ours, µs) and mean (the paper's, ms) as results.json has them.
by_id = {r["paper"]["id"]: r for r in json.load(open(sys.argv[3]))["scenarios"] if (r.get("paper") or {}).get("id")}
body = [n for n in walk(t) if n["tag"] == "tbody"][0]
for tr in [c for c in body["children"] if c["tag"] == "tr"]:
    cells = [text(c) for c in tr["children"] if c["tag"] in ("th", "td")]
    r = by_id[cells[0]]
    assert cells[6] == "%.*f" % (0 if r["p99_us"] >= 1000 else 1, r["p99_us"]), f"{cells[0]}: p99 {cells[6]} vs {r['p99_us']}"
    assert cells[10] == "%.2f" % r["paper"]["mean_ms"], f"{cells[0]}: the paper's mean {cells[10]}"
table("table-paper-cost-sim", 10, paper=True)
table("table-establishment-paper-scenarios", 4, paper=True)
table("table-group-size", 6, paper=True)
table("table-zonal", len(json.load(open(sys.argv[4]))["rows"]))  # a row per zonal.json row
chart("chart-overhead-mean-sim", 2, paper=True)
chart("chart-overhead-p99-sim", 2, paper=True)
chart("chart-cdf-paper-scenarios", 10)
chart("chart-group-size", 4)
chart("chart-group-growth", 3, paper=True)
chart("chart-cdf-group-size", 6)
chart("chart-zonal", 6)
chart("chart-zonal-be", 3)
tsn = json.load(open(sys.argv[5]))
table("table-tsn", len(tsn["rows"]))  # every row of the bench tsn document
table("table-tsn-paper", 6, paper=True)
assert "the TSN lab paper's" in text(dom.by_id["table-tsn-paper"]), "the TSN paper's figures are not labelled"
for port in sorted({r["port_mbit_s"] for r in tsn["rows"]}):
    chart(f"chart-tsn-throughput-{port}", 2)
    chart(f"chart-tsn-latency-{port}", 3)
badges = [n for n in walk(dom.by_id["tsn"]) if "badge" in n["attrs"].get("class", "")]
assert len(badges) == len(tsn["goals"]), f"{len(badges)} goal badges, {len(tsn['goals'])} goals"
for sec in ("run", "paper-scenarios", "group-size", "zonal", "tsn", "notes"):
    assert dom.by_id.get(sec, {}).get("tag") == "section", f"section {sec} missing"
run = text(dom.by_id["run"])
for fact in ("CPU", "cores", "kernel", "build type", "compiler", "commit", "started (UTC)", "seed", "group sizes"):
    assert fact in run, f"the run section does not name {fact}"
# The results folder's name is shown as text: markup from a setting is not markup.
assert "results <img src=x onerror=alert(1)>" in run, "the results folder is not shown as text"
highlights = [n for n in dom.tags if n["attrs"].get("class") == "highlight"]
assert len(highlights) >= 4, f"{len(highlights)} highlights"
print(f"report_html: DOM OK ({len(dom.tags)} elements, {len(dom.by_id)} ids)")
PY

# 4. Keep the page, its data and the screenshot with the test results.
keep="${LAYERSEC_TEST_ARTIFACTS:-$PWD/test-artifacts}/report_html"
mkdir -p "$keep"
cp "$page" "$out/results.json" "$tmp/report.png" "$keep/"
echo "report_html: kept $keep/report.html and $keep/report.png"

# 6. `bench scenarios --out DIR` writes its page too: every series it ran as a
# table with its rows, the sweep charts drawn.
# Given files: the bench tsn document and the demo's zonal.json.
if ! "$LAYERSEC" bench scenarios --quick --iterations 5 --seed 5 --no-tp --out "$tmp/bench" \
    --tsn-json "$TSN_SAMPLE" --zonal-json "$out/zonal.json" \
    > "$tmp/bench_stdout.txt" 2> "$tmp/bench_stderr.txt"; then
  cat "$tmp/bench_stdout.txt" "$tmp/bench_stderr.txt"
  fail "layersec bench scenarios exited non-zero"
fi
grep -q "^report: .*report.html" "$tmp/bench_stdout.txt" || fail "bench scenarios did not say where report.html is"
render "$tmp/bench/report.html" "$tmp/report_bench.png" "$tmp/dom_bench.html"
python3 - "$tmp/dom_bench.html" "$tmp/dom_check.py" "$tmp/bench/results.json" "$TSN_SAMPLE" "$out/zonal.json" <<'PY'
import collections, json, sys
exec(open(sys.argv[2], encoding="utf-8").read())
rows = collections.Counter(r["series"] for r in json.load(open(sys.argv[3]))["scenarios"])
assert set(rows) >= {"payload", "group-size", "dtls-fanout", "background-load"}, f"series {sorted(rows)}"
for series, n in rows.items():
    table(f"table-{series}", n, paper=(series == "group-size"))
    if series != "dtls-fanout":  # the fan-out rows keep no samples (summaries only): no CDF
        chart(f"chart-cdf-{series}", 2)
chart("chart-payload", 2)
chart("chart-dtls-fanout", 4)
chart("chart-group-growth", 3, paper=True)
table("table-tsn", len(json.load(open(sys.argv[4]))["rows"]))
table("table-tsn-paper", 6, paper=True)
table("table-zonal", len(json.load(open(sys.argv[5]))["rows"]))
chart("chart-zonal", 6)
run = text(dom.by_id["run"])
assert "bench tsn results" in run and "bench zonal results" in run, "the run section does not name the given files"
assert "layersec bench scenarios" in run and "topology" in run, "the run section does not name the command and topology"
print(f"report_html: bench page DOM OK ({len(dom.tags)} elements, {sum(rows.values())} rows)")
PY
cp "$tmp/bench/report.html" "$keep/report_bench.html"
cp "$tmp/report_bench.png" "$keep/"

# 5. Progress: a line on a terminal, nothing when piped (checked above).
if command -v script > /dev/null; then
  script -qec "'$LAYERSEC' demo --quick --iterations 2 --groups 1 --no-plots --out '$tmp/tty' > /dev/null" \
    "$tmp/typescript" > /dev/null 2>&1 || fail "layersec demo on a terminal exited non-zero"
  grep -q $'\r\\[1/10\\] unsecured-unicast' "$tmp/typescript" || fail "no progress line on a terminal"
  echo "report_html: progress shown on a terminal"
else
  echo "report_html: script(1) not installed, the terminal progress line is not checked"
fi
echo "report_html: OK"
