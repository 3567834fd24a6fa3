#!/usr/bin/env bash
# Checks deploy/ without a cluster or a network (a CTest test, tests/CMakeLists.txt):
#  - every YAML file parses (all documents), the dashboard JSON parses;
#  - the Kubernetes objects agree: the HPA's target is a Deployment here, PDB and Service selectors
#    match its pods, Service ports name its container ports, the HPA's metrics are served by a
#    prometheus-adapter rule, Envoy's DNS cluster names a headless Service here;
#  - promtool accepts the Prometheus rules, and the PromQL of the dashboard and adapter rules;
#  - every gmmscore_ metric, and every label, these expressions use is exported by a live
#    gmmscored: started on free ports with MODEL, sent one stream that succeeds and one that fails
#    (labelled counters have no series before their first increment), then scraped.
# usage: scripts/check_deploy.sh GMMSCORED MODEL [GMMSCORE [FEATS]]
#   GMMSCORE  the client that drives the streams (default: tools/gmmscore of GMMSCORED's build)
#   FEATS     a Kaldi archive of MODEL's features (default: feats.ark beside MODEL)
# Environment: PYTHON (python3 with PyYAML), PROMTOOL (promtool). Needs: prometheus, python3-yaml.
set -euo pipefail

fail() { echo "check_deploy: FAIL: $*" >&2; exit 1; }
[ $# -ge 2 ] || { sed -n 's/^# usage: //p' "$0" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
gmmscored=$1
model=$2
gmmscore=${3:-$(dirname "$gmmscored")/../tools/gmmscore}
feats=${4:-$(dirname "$model")/feats.ark}
python=${PYTHON:-python3}
promtool=${PROMTOOL:-promtool}
[ -x "$gmmscored" ] || fail "no gmmscored at $gmmscored"
[ -x "$gmmscore" ] || fail "no gmmscore client at $gmmscore (third argument)"
[ -r "$model" ] || fail "cannot read model $model"
[ -r "$feats" ] || fail "cannot read features $feats (fourth argument)"
command -v "$promtool" >/dev/null || fail "promtool not found (Debian package prometheus)"
"$python" -c 'import yaml' 2>/dev/null || fail "$python cannot import yaml (python3-yaml)"

tmp=$(mktemp -d)
daemon=""
cleanup() {
  if [ -n "$daemon" ]; then
    kill "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # runs the EXIT trap

# The Python half: `static` parses and cross-checks the files, writing the expressions found to
# refs.json and a rules file for promtool; `live` compares them with a scrape.
cat >"$tmp/check.py" <<'PY'
import glob, json, os, re, sys
import yaml

mode, root, tmp = sys.argv[1:4]
problems = []
NAME = re.compile(r'(?<![\w:])gmmscore_\w+')  # recording rules (gmmscore:...) are not exported
MATCHER = re.compile(r'([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)\s*"')
GROUPING = re.compile(r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)')
LEGEND = re.compile(r'\{\{\s*(\w+)\s*\}\}')
# Labels Prometheus adds at scrape time (kubernetes_sd relabelling: namespace, pod).
TARGET_LABELS = {"instance", "job", "namespace", "pod"}

def rel(path): return os.path.relpath(path, root)

def labels_of(expr, legend=""):
    found = set(MATCHER.findall(expr)) | set(LEGEND.findall(legend or ""))
    for group in GROUPING.findall(expr):
        found |= {l.strip() for l in group.split(",") if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", l)}
    return found

def static():
    refs, promql = [], []  # promql: (where, expr) for promtool
    def ref(where, expr, legend="", more_labels=(), check_syntax=True):
        refs.append({"where": where, "names": sorted(set(NAME.findall(expr))),
                     "labels": sorted(labels_of(expr, legend) | set(more_labels))})
        if check_syntax: promql.append((where, expr))
    docs = {}
    for path in sorted(glob.glob(f"{root}/deploy/**/*.y*ml", recursive=True)):
        try:
            with open(path) as f: docs[rel(path)] = [d for d in yaml.safe_load_all(f) if d]
        except yaml.YAMLError as e:
            problems.append(f"{rel(path)}: not YAML: {e}")
    k8s = [(p, d) for p, ds in docs.items() if p.startswith("deploy/kubernetes/")
           for d in ds if isinstance(d, dict) and "kind" in d]
    kinds = lambda kind: [(p, d) for p, d in k8s if d["kind"] == kind]
    deployments = {d["metadata"]["name"]: d["spec"]["template"] for _, d in kinds("Deployment")}

    for path, d in kinds("PodDisruptionBudget") + kinds("Service"):
        what = f"{path}: {d['kind']} {d['metadata']['name']}"
        sel = d["spec"]["selector"]
        sel = sel.get("matchLabels", sel) if d["kind"] == "PodDisruptionBudget" else sel
        pods = [t for t in deployments.values()
                if sel and sel.items() <= t["metadata"]["labels"].items()]
        if not pods:
            problems.append(f"{what}: selector {sel} matches no Deployment's pods")
        ports = {p.get("name") for t in pods for c in t["spec"]["containers"]
                 for p in c.get("ports", [])}
        for port in d["spec"].get("ports", []) if d["kind"] == "Service" else []:
            if isinstance(port.get("targetPort"), str) and port["targetPort"] not in ports:
                problems.append(f"{what}: targetPort {port['targetPort']} is no container port")
    # prometheus-adapter: a ConfigMap whose data holds the config, or the config itself.
    adapter = {}  # exposed metric name -> where
    for path, ds in docs.items():
        for d in ds:
            configs = [d]
            if d.get("kind") == "ConfigMap":
                configs = [yaml.safe_load(v) for v in d.get("data", {}).values()]
            for cfg in configs:
                if not isinstance(cfg, dict) or not isinstance(cfg.get("rules"), list): continue
                for i, rule in enumerate(cfg["rules"]):
                    where = f"{path}: rules[{i}]"
                    series = NAME.findall(rule["seriesQuery"])
                    ref(where + " seriesQuery", rule["seriesQuery"], check_syntax=False,
                        more_labels=rule.get("resources", {}).get("overrides", {}))
                    if len(series) != 1:
                        problems.append(f"{where}: seriesQuery should name one gmmscore_ series")
                        continue
                    # Go's ${1} in `as` is Python's \g<1>.
                    name = rule.get("name", {})
                    as_ = re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>", name.get("as", "")) or r"\g<0>"
                    adapter[re.sub(name.get("matches", ".*"), as_, series[0])] = where
                    ref(where + " metricsQuery", rule["metricsQuery"]
                        .replace("<<.Series>>", series[0])
                        .replace("<<.LabelMatchers>>", 'namespace="default",pod=~"gmmscored-.*"')
                        .replace("<<.GroupBy>>", "pod"))
    for path, d in kinds("HorizontalPodAutoscaler"):
        target = d["spec"]["scaleTargetRef"]
        if target["kind"] != "Deployment" or target["name"] not in deployments:
            problems.append(f"{path}: scaleTargetRef {target['kind']}/{target['name']} "
                            "is no Deployment in deploy/kubernetes")
        for m in d["spec"].get("metrics", []):
            if m["type"] not in ("Pods", "Object"): continue
            metric = m[m["type"].lower()]["metric"]["name"]
            if metric not in adapter:
                problems.append(f"{path}: metric {metric} is served by no prometheus-adapter "
                                f"rule (they serve {sorted(adapter)})")
    # Envoy: DNS clusters must resolve a headless Service defined here.
    headless = {d["metadata"]["name"] for _, d in kinds("Service")
                if d["spec"].get("clusterIP") == "None"}
    for path, ds in docs.items():
        for d in ds:
            for c in (d.get("static_resources") or {}).get("clusters", []):
                if c.get("type") not in ("STRICT_DNS", "LOGICAL_DNS"): continue
                for e in c["load_assignment"]["endpoints"]:
                    for lb in e["lb_endpoints"]:
                        host = lb["endpoint"]["address"]["socket_address"]["address"]
                        if host.split(".")[0] not in headless:
                            problems.append(f"{path}: cluster {c['name']}: {host} is no "
                                            "headless Service in deploy/kubernetes")
    rules = "deploy/prometheus/gmmscored-rules.yml"  # promtool checks these itself
    for group in docs.get(rules, [{}])[0].get("groups", []):
        for r in group["rules"]:
            ref(f"{rules}: {r.get('record') or r.get('alert')}", r["expr"], check_syntax=False)
    dash_path = f"{root}/deploy/grafana/gmmscore-dashboard.json"
    try:
        with open(dash_path) as f: dash = json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{rel(dash_path)}: not JSON: {e}")
        dash = {}
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))
    for p in panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            where = f"dashboard panel '{p.get('title')}' {t.get('refId')}"
            ds = t.get("datasource") or p.get("datasource") or {}
            if not str(ds.get("uid", "")).startswith("$"):
                problems.append(f"{where}: datasource {ds} is not the templated one")
            # Grafana's variables replaced, so that promtool can parse the query.
            expr = re.sub(r"\$\{?\w+\}?", ".*", re.sub(r"\$__\w+", "5m", t["expr"]))
            ref(where, expr, t.get("legendFormat"))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else str(q or "")
        if v.get("type") == "query":
            lv = re.fullmatch(r"\s*label_values\(\s*(.+?)\s*,\s*(\w+)\s*\)\s*", q)
            ref(f"dashboard variable {v['name']}", lv.group(1) if lv else q, check_syntax=False,
                more_labels=[lv.group(2)] if lv else [])
    with open(f"{tmp}/refs.json", "w") as f: json.dump(refs, f, indent=1)
    with open(f"{tmp}/promql.yml", "w") as f:
        yaml.safe_dump({"groups": [{"name": "deploy_check", "rules": [
            {"record": f"deploy_check:expr_{i}", "expr": e} for i, (_, e) in enumerate(promql)]}]},
            f)
    with open(f"{tmp}/promql.txt", "w") as f:
        f.writelines(f"deploy_check:expr_{i}: {w}\n" for i, (w, _) in enumerate(promql))
    print(f"check_deploy: {len(docs)} YAML files, the dashboard and {len(refs)} expressions parsed")

def live():
    families, samples = {}, {}  # family -> type; sample name -> label names
    with open(f"{tmp}/metrics.txt") as f:
        for line in f:
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split()[:4]
                families[name] = kind
            elif line.strip() and not line.startswith("#"):
                name = re.match(r"[\w:]+", line).group(0)
                samples.setdefault(name, set()).update(re.findall(r'(\w+)="', line))
    def family(name):
        for suffix in ("_bucket", "_sum", "_count"):
            base = name[: -len(suffix)]
            if name.endswith(suffix) and families.get(base) in ("histogram", "summary"):
                return base
        return name
    labels = {}  # family -> label names of its samples
    for name, ls in samples.items(): labels.setdefault(family(name), set()).update(ls)
    with open(f"{tmp}/refs.json") as f: refs = json.load(f)
    used = set()
    for r in refs:
        allowed = set(TARGET_LABELS)
        for name in r["names"]:
            used.add(family(name))
            if name in samples or name in families:  # a histogram's base name counts
                allowed |= labels.get(family(name), set())
            else:
                problems.append(f"{r['where']}: metric {name} is not exported by gmmscored")
        if not r["names"]: continue  # uses recording rules only: labels checked where recorded
        for label in sorted(set(r["labels"]) - allowed):
            problems.append(f"{r['where']}: label '{label}' is on none of {r['names']}")
    unused = sorted(f for f in families if f.startswith("gmmscore_") and f not in used)
    if unused: print(f"check_deploy: note: exported, used nowhere in deploy/: {', '.join(unused)}")
    if not problems:
        print(f"check_deploy: the {len(used)} gmmscore_ metrics deploy/ uses are exported, with "
              f"the labels it uses: {', '.join(sorted(used))}")

static() if mode == "static" else live()
for p in problems: print(f"check_deploy: FAIL: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY

echo "check_deploy: parsing deploy/"
"$python" -u "$tmp/check.py" static "$root" "$tmp" || fail "deploy/ files (above)"
echo "check_deploy: promtool check rules"
"$promtool" check rules "$root/deploy/prometheus/gmmscored-rules.yml" ||
  fail "promtool rejects deploy/prometheus/gmmscored-rules.yml"
# The dashboard's and the adapter's queries, as recording rules, so that promtool parses them.
"$promtool" check rules "$tmp/promql.yml" >"$tmp/promtool.log" 2>&1 || {
  cat "$tmp/promtool.log" "$tmp/promql.txt" >&2
  fail "promtool rejects a dashboard or adapter query (deploy_check:expr_N: where, listed above)"
}

echo "check_deploy: starting $gmmscored"
"$gmmscored" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --plaintext --backend cpu \
  --scorer-threads 1 --drain-timeout 1s --model "check=$model" >"$tmp/gmmscored.log" 2>&1 &
daemon=$!
for _ in $(seq 300); do
  grep -q '^gmmscored: serving' "$tmp/gmmscored.log" && break
  if ! kill -0 "$daemon" 2>/dev/null; then
    cat "$tmp/gmmscored.log" >&2
    daemon=""
    fail "gmmscored exited"
  fi
  sleep 0.1
done
grep -q '^gmmscored: serving' "$tmp/gmmscored.log" ||
  { cat "$tmp/gmmscored.log" >&2; fail "gmmscored not serving after 30 s"; }
# "gmmscored: listening on port P, metrics on port M"
ports=$(sed -n 's/.*listening on port \([0-9]*\), metrics on port \([0-9]*\).*/\1 \2/p' \
  "$tmp/gmmscored.log")
read -r port metrics_port <<<"$ports" || true
[ -n "${metrics_port:-}" ] || { cat "$tmp/gmmscored.log" >&2; fail "no ports in gmmscored's log"; }

# Traffic: frames and windows by model and device, and a failure (reason unknown_model).
"$gmmscore" stream --server "127.0.0.1:$port" --plaintext --model check --feats "ark:$feats" \
  --out ark:/dev/null --quiet || fail "a stream to gmmscored failed"
if "$gmmscore" stream --server "127.0.0.1:$port" --plaintext --model no-such-model \
  --feats "ark:$feats" --out ark:/dev/null --quiet 2>/dev/null; then
  fail "a stream naming no-such-model succeeded"
fi
"$python" -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
  "http://127.0.0.1:$metrics_port/metrics" >"$tmp/metrics.txt" || fail "cannot scrape /metrics"
# Lint the exposition (naming and types) of gmmscored's own metrics.
grep -v '^\(# [A-Z]* \)\?exposer_' "$tmp/metrics.txt" | "$promtool" check metrics ||
  fail "promtool check metrics objects to gmmscored's /metrics (above)"
"$python" -u "$tmp/check.py" live "$root" "$tmp" ||
  fail "deploy/ uses metrics or labels gmmscored does not export (above)"
echo "check_deploy: OK"
