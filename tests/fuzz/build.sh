#!/usr/bin/env bash
# Build the fuzz targets (tests/fuzz/fuzz_*.c) with clang, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, straight from the
# library's I/O sources and the cache parsers, apart from the normal build.
#   build.sh SRCDIR BUILDDIR OUTDIR
# BUILDDIR is a configured build tree (its config.h and parvis/version.h
# are used); the targets land in OUTDIR.  FUZZ_CC overrides the compiler.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
out=$3
cc=${FUZZ_CC:-clang}
mkdir -p "$out/obj"

sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
cflags=(-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -fno-omit-frame-pointer
        "${sanitize[@]}" -I"$build" -I"$build/include" -I"$src/include" -I"$src/lib" -I"$src/lib/core" -I"$src/lib/io" -I"$src/lib/tune" -I"$src/backends/opencl" -I"$src/backends/opencl/runtime" -I"$src/backends/opencl/fft"
        $(pkg-config --cflags libpng))
libs=($(pkg-config --libs libpng) -lz -lm)
grep -q '^#define PV_HAVE_JPEG 1' "$build/config.h" && libs+=(-ljpeg)
grep -q '^#define PV_HAVE_TIFF 1' "$build/config.h" && libs+=(-ltiff)

# The library code under test, instrumented for coverage.
objects=()
for s in tests/fuzz/link_stubs.c lib/core/status.c lib/core/configuration.c lib/core/log.c lib/core/image.c lib/core/regular_file.c lib/core/fork_guard.c lib/io/io_common.c lib/io/io_image.c lib/io/io_pnm.c lib/io/io_png.c lib/io/io_jpeg.c lib/io/io_tiff.c lib/io/io_nifti.c \
         lib/io/io_volume.c lib/tune/tune_file.c backends/opencl/runtime/runtime_cache.c backends/opencl/fft/fft_cache.c; do
    o="$out/obj/$(basename "${s%.c}").o"
    if [ ! -f "$o" ] || [ "$src/$s" -nt "$o" ] || [ "$src/lib/io/io.h" -nt "$o" ] ||
       [ "$src/lib/tune/tune_lookup.h" -nt "$o" ] || [ "$src/lib/tune/tune_db.h" -nt "$o" ] ||
       [ "$src/backends/opencl/runtime/runtime_cache.h" -nt "$o" ] || [ "$src/backends/opencl/fft/fft_cache.h" -nt "$o" ]; then
        "$cc" "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$src/$s" -o "$o"
    fi
    objects+=("$o")
done

for t in "$src"/tests/fuzz/fuzz_*.c; do
    name=$(basename "${t%.c}")
    echo "  FUZZ     $name"
    "$cc" "${cflags[@]}" -fsanitize=fuzzer "$t" "${objects[@]}" "${libs[@]}" -o "$out/$name"
done
