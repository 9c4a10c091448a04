#!/usr/bin/env bash
# Runs every Go native fuzz target for a bounded time each.
#   ./hack/fuzz.sh 5s     CI's smoke run (.ci/run calls it)
#   make fuzz             60s per target (FUZZTIME=10m make fuzz for longer)
# A crash leaves its input in <package>/testdata/fuzz/<Target>/: commit it
# (it becomes a regression test that plain `go test` replays) and fix the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
time="${1:-5s}"

# Every `func FuzzXxx(` in a fuzz_test.go, as "package target" lines.
targets=$(grep -l --include=fuzz_test.go -r '^func Fuzz' fn tests 2>/dev/null | sort | while read -r f; do
  for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    echo "./$(dirname "$f") $t"
  done
done)
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

failed=0
while read -r pkg target; do
  echo "== $target ($pkg, $time)"
  # -parallel 2: this is a 2-core machine; more workers only thrash.
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -parallel 2 "$pkg"; then
    failed=1
    echo "fuzz.sh: $target failed; its input is under $pkg/testdata/fuzz/$target/" >&2
  fi
done <<<"$targets"
exit $failed
