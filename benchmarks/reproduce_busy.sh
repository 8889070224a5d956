#!/usr/bin/env bash
# `make reproduce` from a fresh clone while one other CPU-bound job runs (issue #32's target:
# <= 4 min on the 2-core CPU). Writes benchmarks/results/reproduce_busy.md.
#   bash benchmarks/reproduce_busy.sh [BRANCH]      (default: the current branch)
set -euo pipefail
repo=$(git rev-parse --show-toplevel)
branch=${1:-$(git -C "$repo" rev-parse --abbrev-ref HEAD)}
work=$(mktemp -d)
git clone -q -b "$branch" "$repo" "$work/clone"
commit=$(git -C "$work/clone" rev-parse --short HEAD)
before=$(uptime)
python3 -c "while 1: pass" &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
start=$(date +%s)
(cd "$work/clone" && make .venv/.stamp-run >"$work/venv.log" 2>&1)
mid=$(date +%s)
(cd "$work/clone" && make reproduce >"$work/reproduce.log" 2>&1)
end=$(date +%s)
kill $hog
count=$("$work/clone/.venv/bin/hardsoft" reproduce --list | grep -c .)
after=$(uptime)
cat >"$repo/benchmarks/results/reproduce_busy.md" <<MD
# \`make reproduce\` from a fresh clone with one other CPU-bound job

\`bash benchmarks/reproduce_busy.sh $branch\` (commit $commit; the other job: \`python3 -c "while 1: pass"\`)

date: $(date -u +%Y-%m-%dT%H:%M:%SZ) | machine: $(uname -srm) | cores: $(nproc)

| step | wall s |
|---|---:|
| venv and install (\`make .venv/.stamp-run\`) | $((mid - start)) |
| \`make reproduce\` ($count quick experiments) | $((end - mid)) |
| total | $((end - start)) |

uptime before: $before
uptime after: $after
MD
echo "wrote $repo/benchmarks/results/reproduce_busy.md"
