#!/usr/bin/env bash
# Build parvis (installing what is missing) and check it, one named step
# after another.  The quick check (the default) is the first four steps;
# --all adds the long ones after them:
#   build      configure and build in _build/ (build-aux/ensure-built.sh)
#   check      'make check': the CMocka suites on the CPU backend and on every
#              OpenCL device found (PoCL without a GPU), the script tests
#   install    install to a scratch prefix and build the README's example
#              against it with pkg-config, shared and static (tests/test_install.sh)
#   python     install the Python package into _build/venv against the
#              library installed in _build/_prefix, then its pytest suite
#   fuzz       every file reader under libFuzzer with ASan and UBSan for
#              PARVIS_FUZZ_SECONDS seconds each (default 30; 0 skips)
#   sanitize   the CMocka suites under ASan+UBSan (CPU backend and PoCL) and
#              the thread test under TSan (PARVIS_SKIP_SANITIZERS=1 skips)
#   distcheck  the release tarball, built CPU-only (--disable-opencl), with
#              its suites and an install check
#   doc        the C API reference ('make doc': Doxygen, any warning fails)
#   debian     the Debian packages built, checked by lintian, installed,
#              used and purged (tests/test_debian.sh; needs root or sudo)
#   wheel      the Python wheel (tests/test_wheel.sh; a missing script fails)
# Each step's output goes to _build/tests/run-logs/STEP.log.  A failed step
# does not stop the later ones (except the build); at the end a summary
# lists every step, then the logs of what failed: for 'check' only the
# failing tests' logs.  The exit status is 1 when any step failed.
#
# Usage: tests/run.sh            the quick check: build check install python
#        tests/run.sh --all      every step, in the order above (.ci/run)
#        tests/run.sh STEP...    the steps named
# docs/install.md gives the measured times.
#
# To add a step: write a function run_NAME that returns 0 (pass), 77
# (skipped: print why) or anything else (fail), and add NAME to all_steps.
set -uo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
build="$top/_build"
logs="$build/tests/run-logs"
jobs="$(nproc 2>/dev/null || echo 2)"

quick_steps=(build check install python)
all_steps=("${quick_steps[@]}" fuzz sanitize distcheck doc debian wheel)

run_build() {
    "$top/build-aux/ensure-built.sh"
}

run_check() {
    make -C "$build" -j"$jobs" check
}

run_install() {
    bash "$top/tests/test_install.sh" "$build/tests/tmp/install"
}

run_python() {
    local python
    python="$("$top/python/install.sh")" || return 1
    # From the build tree, so that the source tree's parvis/ (without its
    # compiled extension) does not shadow the installed package.
    (cd "$build" && "$python" -m pytest -q -p no:cacheprovider \
        --rootdir "$top/python" "$top/python/tests")
}

run_fuzz() {
    local seconds=${PARVIS_FUZZ_SECONDS:-30}
    if [ "$seconds" -le 0 ]; then
        echo "PARVIS_FUZZ_SECONDS=$seconds: fuzz targets skipped"
        return 77
    fi
    make -C "$build" -s fuzz && bash "$top/tests/fuzz/run.sh" "$seconds"
}

run_sanitize() {
    if [ "${PARVIS_SKIP_SANITIZERS:-0}" = 1 ]; then
        echo "PARVIS_SKIP_SANITIZERS=1: sanitizer runs skipped"
        return 77
    fi
    bash "$top/tests/sanitize.sh"
}

run_distcheck() {
    make -C "$build" -j"$jobs" -s distcheck
}

run_doc() {
    make -C "$build" doc
}

run_debian() {
    bash "$top/tests/test_debian.sh" "$build/tests/tmp/debian"
}

run_wheel() {
    if [ ! -f "$top/tests/test_wheel.sh" ]; then
        echo "tests/test_wheel.sh is missing: the wheel cannot be checked"
        return 1
    fi
    bash "$top/tests/test_wheel.sh"
}

# ------------------------------------------------------------- reporting

# The failing tests of the last 'make check' and their logs (the .trs
# files name each test's result).
show_failed_tests() {
    local trs log any=0
    while IFS= read -r trs; do
        if grep -Eq '^:test-result: (FAIL|ERROR|XPASS)' "$trs"; then
            log="${trs%.trs}.log"
            any=1
            echo "----- ${log#"$build"/} -----"
            cat "$log"
        fi
    done < <(find "$build/tests" -name '*.trs' 2>/dev/null | sort)
    [ "$any" = 1 ] || tail -n 60 "$logs/check.log"
}

# Skipped tests with the line that says why.
skipped_tests() {
    local trs log
    while IFS= read -r trs; do
        if grep -q '^:test-result: SKIP' "$trs"; then
            log="${trs%.trs}.log"
            printf '  skipped %s: %s\n' "${log#"$build"/}" \
                "$(grep -m1 -E 'SKIP|skip' "$log" | cut -c1-120)"
        fi
    done < <(find "$build/tests" -name '*.trs' 2>/dev/null | sort)
}

steps=("$@")
if [ "${#steps[@]}" -eq 0 ]; then
    steps=("${quick_steps[@]}")
elif [ "${#steps[@]}" -eq 1 ] && [ "${steps[0]}" = --all ]; then
    steps=("${all_steps[@]}")
    # The long steps' tools (packaging, the manual, clang for the sanitizers).
    bash "$top/build-aux/install-packages.sh" required all || exit 1
fi
for step in "${steps[@]}"; do
    declare -F "run_$step" >/dev/null || { echo "tests/run.sh: unknown step '$step' (steps: ${all_steps[*]}, or --all)"; exit 2; }
done

mkdir -p "$logs" 2>/dev/null || true
declare -A result seconds
failed=()
for step in "${steps[@]}"; do
    log="$logs/$step.log"
    echo "==> $step (log: ${log#"$top"/})"
    start=$(date +%s)
    "run_$step" >"$log" 2>&1
    status=$?
    seconds[$step]=$(($(date +%s) - start))
    case $status in
        0) result[$step]=pass ;;
        77) result[$step]=skip ;;
        *) result[$step]="FAIL (exit $status)"; failed+=("$step") ;;
    esac
    echo "    ${result[$step]} in ${seconds[$step]} s"
    if [ "$step" = build ] && [ $status -ne 0 ]; then
        break
    fi
done

echo
echo "summary"
for step in "${steps[@]}"; do
    printf '  %-10s %-16s %6s\n' "$step" "${result[$step]:-not run}" \
        "${seconds[$step]:+${seconds[$step]} s}"
    if [ "$step" = check ] && [ -n "${result[check]:-}" ]; then
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$build/test-suite.log" 2>/dev/null |
            tr '\n' ' ' | sed 's/^/             /; s/$/\n/'
        skipped_tests
    fi
done

for step in "${failed[@]}"; do
    echo
    echo "===== $step failed: ====="
    if [ "$step" = check ]; then
        show_failed_tests
    else
        tail -n 80 "$logs/$step.log"
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo
    echo "FAILED: ${failed[*]} (full logs in ${logs#"$top"/}/)"
    exit 1
fi
echo "all steps passed"
