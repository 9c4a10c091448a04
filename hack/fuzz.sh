#!/usr/bin/env bash
# Runs every Go native fuzz target, bounded per target.
#   ./hack/fuzz.sh 300x fn   CI's smoke run (.ci/run calls it): 300 inputs per
#                            target below fn/ (the parsers and the engine)
#   make fuzz                60s per target (FUZZTIME=10m make fuzz for longer),
#                            every target, tests/admission's differential ones too
# The optional second argument keeps the targets below those directories:
# a target's first run rebuilds its package's dependencies with coverage
# instrumentation, and tests/admission's link KubeRay's controllers and
# controller-runtime, minutes of a cold CI run for 300 inputs (their seeds
# still run in every `go test`).
# The bound is a count (Nx) or a duration. CI uses a count: Go 1.26's fuzz
# coordinator can fail a time-bounded run with "context deadline exceeded"
# and no crasher when the deadline lands while a worker is busy
# (golang/go#75804). A failure that leaves no new testdata/fuzz file is
# that flake, not a bug: it is retried once. A real crash leaves its input
# in <package>/testdata/fuzz/<Target>/: commit it (it becomes a regression
# test that plain `go test` replays) and fix the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
bound="${1:-300x}"
dirs="${2:-fn tests}"
# Minimising a crasher is bounded too (default 60s per crasher).
minimize="${FUZZMINIMIZETIME:-10s}"

# Every `func FuzzXxx(` in a fuzz_test.go, as "package target" lines.
# shellcheck disable=SC2086 # dirs is a list
targets=$(grep -l --include=fuzz_test.go -r '^func Fuzz' $dirs 2>/dev/null | sort | while read -r f; do
  for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    echo "./$(dirname "$f") $t"
  done
done)
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

# corpus counts the files a crash would add for one target.
corpus() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | wc -l; }

fuzz() { # pkg target
  # -parallel 2: this is a 2-core machine; more workers only thrash.
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$bound" -fuzzminimizetime "$minimize" -parallel 2 "$1" </dev/null
}

failed=0
while read -r pkg target; do
  echo "== $target ($pkg, $bound)"
  before=$(corpus "$pkg" "$target")
  s=$SECONDS
  if fuzz "$pkg" "$target"; then
    echo "   $target: $((SECONDS - s)) s"
    continue
  fi
  if [ "$(corpus "$pkg" "$target")" = "$before" ]; then
    echo "fuzz.sh: $target failed without a new crasher (golang/go#75804?); retrying once" >&2
    if fuzz "$pkg" "$target"; then
      continue
    fi
  fi
  failed=1
  echo "fuzz.sh: $target failed; its input is under $pkg/testdata/fuzz/$target/" >&2
done <<<"$targets"
exit $failed
