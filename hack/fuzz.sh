#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the project (func FuzzX in a _test.go file) for FUZZTIME
# each (default 3s: the smoke `make test` runs; `make fuzz` runs longer). A failing input is
# written by Go into the package's testdata/fuzz/FuzzX/, where it stays as a regression seed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
fuzztime=${FUZZTIME:-3s}

grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./.cache/' | sort | while read -r file; do
  pkg=./$(dirname "${file#./}")
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
    echo "fuzz: $target ($pkg, $fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" | grep -v '^fuzz: elapsed' || {
      echo "fuzz: $target failed; the input is in $pkg/testdata/fuzz/$target/" >&2
      exit 1
    }
  done
done
