#!/usr/bin/env bash
# CI: `scan --format prometheus` against a real Prometheus (Debian's
# package). promtool checks the exposition of a real fleet scan; then a
# Prometheus on a free localhost port scrapes it from a tiny static HTTP
# server, and its query API must give the counts the scan's NDJSON summary
# gives. Everything started here is stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
fi
cargo build -q -p cudnnlog-cli
bin=target/debug/cudnnlog
fleet=fixtures/wild/cases

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/www" "$work/tsdb"
# The scan exits 1 when a job failed: the metrics are written all the same.
"$bin" scan --fail-on never --format prometheus -o "$work/www/metrics" "$fleet"
"$bin" scan --fail-on never --format ndjson "$fleet" | tail -n 1 >"$work/summary.json"
promtool check metrics <"$work/www/metrics"
echo "promtool: the exposition of $fleet is valid"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
http_port=$(free_port)
python3 -m http.server "$http_port" --bind 127.0.0.1 --directory "$work/www" \
    >"$work/http.log" 2>&1 &
pids+=($!)
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: cudnnlog
    static_configs:
      - targets: ["127.0.0.1:$http_port"]
EOF
promtool check config "$work/prometheus.yml"
prometheus --config.file="$work/prometheus.yml" \
    --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" \
    >"$work/prometheus.log" 2>&1 &
pids+=($!)

# Waits for the first scrape, then checks each count against the summary.
python3 - "$prom_port" "$work/summary.json" <<'EOF'
import json, sys, time, urllib.parse, urllib.request

port, summary = sys.argv[1], json.load(open(sys.argv[2]))
assert summary["type"] == "fleet_summary", summary


def query(q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return {
        tuple(sorted((k, v) for k, v in s["metric"].items() if k not in ("instance", "job"))): float(s["value"][1])
        for s in body["data"]["result"]
    }


deadline = time.time() + 60
while True:
    try:
        got = query("cudnnlog_jobs")
        if got:
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("no scrape of cudnnlog_jobs within 60 s")
    time.sleep(0.5)

for outcome in ("failed", "degraded", "clean", "unreadable"):
    key = (("__name__", "cudnnlog_jobs"), ("outcome", outcome))
    assert got[key] == summary[outcome], (outcome, got[key], summary[outcome])
total = query("sum(cudnnlog_jobs)")[()]
assert total == summary["jobs"], (total, summary["jobs"])

by_class = query("cudnnlog_jobs_by_class")
classes = {dict(k)["class"]: v for k, v in by_class.items()}
for cls, n in summary["by_primary"].items():
    assert classes.get(cls, classes["unknown"]) >= n, (cls, n)
    if cls in classes:
        assert classes[cls] == n, (cls, classes[cls], n)
assert sum(classes.values()) == sum(summary["by_primary"].values())
assert classes["unknown"] == 0, classes["unknown"]

if "by_action" in summary:
    by_action = {dict(k)["action"]: v for k, v in query("cudnnlog_jobs_by_action").items()}
    for action in ("retry", "stop", "investigate"):
        assert by_action[action] == summary["by_action"].get(action, 0), (action, by_action)

stamp = query("cudnnlog_scan_timestamp_seconds")[(("__name__", "cudnnlog_scan_timestamp_seconds"),)]
assert abs(stamp - time.time()) < 600, stamp
print(f"prometheus: scraped {len(classes)} classes; jobs {int(total)}: "
      + ", ".join(f"{o} {int(got[(('__name__', 'cudnnlog_jobs'), ('outcome', o))])}"
                  for o in ("failed", "degraded", "clean", "unreadable")))
EOF
