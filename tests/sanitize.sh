#!/usr/bin/env bash
# Sanitizer runs, each in a build directory of its own:
#   _build-asan: the whole CMocka suite under AddressSanitizer (leaks
#                included) and UndefinedBehaviorSanitizer, on the CPU
#                backend and on every OpenCL device (PoCL on a CPU-only
#                machine); test_faults walks its injected failures there.
#   _build-tsan: test_threads (one context hammered by several threads,
#                contexts made by several threads at once) under
#                ThreadSanitizer, on the CPU backend and on PoCL.
# Suppressions (tests/sanitizers/*.supp) name third-party libraries only,
# each with the reason.  Usage: tests/sanitize.sh [asan|tsan]... (default
# both).  Extra configure arguments: SANITIZE_CONFIGURE_ARGS.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
supp="$top/tests/sanitizers"
jobs="$(nproc)"
runs=("$@")
[ "${#runs[@]}" -gt 0 ] || runs=(asan tsan)

# The CMocka programs (make check's script tests are not sanitizer targets),
# from Makefile.am's "check_PROGRAMS += tests/test_x" lines.  An empty list
# is an error: it would make the run check nothing.
cmocka_tests() {
    local list
    list="$(sed -n 's/^check_PROGRAMS *+\{0,1\}= *//p' "$top/Makefile.am" \
        | grep -o 'tests/test_[A-Za-z0-9_]*' | sort -u | tr '\n' ' ')"
    [ -n "$list" ] || { echo "sanitize.sh: no CMocka programs found in Makefile.am" >&2; return 1; }
    echo "$list"
}

configure_in() {
    local dir="$1" flags="$2"
    mkdir -p "$top/$dir"
    cd "$top/$dir"
    [ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
    if [ ! -f Makefile ]; then
        # shellcheck disable=SC2086
        "$top/configure" -q --disable-shared CFLAGS="-O1 -g -fno-omit-frame-pointer $flags" \
            LDFLAGS="$flags" ${SANITIZE_CONFIGURE_ARGS:-}
    fi
}

run_asan() {
    configure_in _build-asan "-fsanitize=address,undefined -fno-sanitize-recover=undefined"
    local tests
    tests="$(cmocka_tests)"
    make -j"$jobs" -s check TESTS= >/dev/null
    # allocator_may_return_null: the suites ask for absurd sizes on purpose
    # and expect PV_ERR_NOMEM, not an abort.
    # new_delete_type_mismatch=0: clFFT deletes its FFTAction objects
    # through a base pointer with a different size (FFTRepo::deletePlan);
    # ASan has no suppression by library for this check, only the switch.
    # use_sigaltstack=0: PoCL compiles kernels with LLVM, which gives each
    # thread an alternate signal stack of its own from the heap; ASan would
    # try to unmap that one as its own when the thread ends ("unable to
    # unmap", a CHECK failure in a thread of the creation race).
    export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:detect_odr_violation=0:new_delete_type_mismatch=0:use_sigaltstack=0"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
    # Fewer injected faults per operation: each fresh context costs more here.
    export PARVIS_FAULT_POINTS="${PARVIS_FAULT_POINTS:-4}"
    local start=$SECONDS
    # shellcheck disable=SC2086
    if ! make -j"$jobs" check TESTS="$tests"; then
        retry_lsan_tool_crashes || { cat tests/*.log; return 1; }
    fi
    echo "asan+ubsan: CMocka suite passed in $((SECONDS - start)) s"
}

# LeakSanitizer stops every thread with ptrace at exit; when one of PoCL's
# worker threads is ending at that moment its tracer can crash ("Tracer
# caught signal 11 ... LeakSanitizer has encountered a fatal error"). That
# is the tool failing, not a finding: a suite whose every test passed and
# whose only failure is that crash runs once more.  A leak report, an ASan
# or UBSan error, or a failed test is never retried.
retry_lsan_tool_crashes() {
    local trs log name again=()
    for trs in tests/*.trs; do
        grep -q '^:test-result: FAIL' "$trs" || continue
        log="${trs%.trs}.log"
        grep -q 'LeakSanitizer has encountered a fatal error' "$log" || return 1
        if grep -qE 'ERROR: (Leak|Address|Undefined)Sanitizer|runtime error:|\[  FAILED  \]' "$log"; then
            return 1
        fi
        name="${trs%.trs}"
        echo "asan+ubsan: $name: LeakSanitizer's tracer crashed at exit (all tests passed); running it once more"
        again+=("$name")
    done
    [ "${#again[@]}" -gt 0 ] || return 1
    make -j"$jobs" check TESTS="${again[*]}"
}

run_tsan() {
    configure_in _build-tsan "-fsanitize=thread"
    make -j"$jobs" -s tests/test_threads
    # libgomp is not built with TSan: its barriers are invisible to it and
    # every parallel region would look like a race.  One OpenMP thread
    # keeps the regions on the calling thread (the library's own locking
    # is what is under test, not OpenMP's).
    export OMP_NUM_THREADS=1
    export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"
    local start=$SECONDS
    mkdir -p tests/cache
    XDG_CACHE_HOME="$PWD/tests/cache" ./tests/test_threads
    echo "tsan: test_threads passed in $((SECONDS - start)) s"
}

for run in "${runs[@]}"; do
    case "$run" in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "unknown sanitizer run '$run' (asan or tsan)"; exit 2 ;;
    esac
done
