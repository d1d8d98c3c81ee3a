# Shared by tests/e2e/capacity_*.sh (sourced, not a test itself): run_common.bash (temp dir,
# children always killed, fail, run_knee, start_knee_serve; capacity_machine_why in
# timing.bash) and JSON checks of the knee-capacity/1 document.
source "$KNEE_SRC/tests/e2e/run_common.bash"

# cap_check FILE 'python expression over d' MESSAGE
cap_check() {
    python3 - "$1" "$2" "$3" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
if not eval(sys.argv[2], {"d": d}):
    print("FAIL: %s: %s\n  capacity %s verdict %s reasons %s" % (sys.argv[3], sys.argv[2], d.get("capacity"),
          d.get("verdict"), d.get("reasons")), file=sys.stderr)
    sys.exit(1)
PY
}

# cap_value FILE 'python expression over d': prints its value.
cap_value() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
