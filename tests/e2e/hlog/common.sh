# Shared set-up of the hlog interop tests: the JDK and the reference jar must be there —
# a missing JDK fails the test loudly (scripts/deps.sh --test installs default-jdk-headless and
# libhdrhistogram-java); it never skips.
set -euo pipefail
: "${KNEE:?KNEE must name the knee binary}" "${KNEE_SRC:?}" "${KNEE_BUILD:?}"
JAR=/usr/share/java/hdrhistogram.jar
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v javac >/dev/null || fail "javac not found: install default-jdk-headless (scripts/deps.sh --test)"
command -v java >/dev/null || fail "java not found: install default-jdk-headless (scripts/deps.sh --test)"
[[ -f $JAR ]] || fail "$JAR not found: install libhdrhistogram-java (scripts/deps.sh --test)"
export TZ=UTC # Java and knee print StartTime dates in local time; make them agree
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cls"
javac -d "$tmp/cls" -cp "$JAR" "$KNEE_SRC/tests/e2e/hlog/HlogRef.java"
ref() { java -cp "$JAR:$tmp/cls" HlogRef "$@"; }
processor() { java -cp "$JAR" org.HdrHistogram.HistogramLogProcessor "$@"; }
# same FILE1 FILE2 WHAT: identical, or show the first differences and fail
same() {
  if ! diff -u "$1" "$2" > "$tmp/diff"; then
    head -20 "$tmp/diff" >&2
    fail "$3: knee and the Java reference differ"
  fi
  echo "ok: $3 ($(grep -c . "$1") lines identical)"
}
