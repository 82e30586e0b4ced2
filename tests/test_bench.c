/* The bench's roofline byte counts (bench/bench_roofline.c) and operation
 * counts (bench/bench_ops.c) on cases small enough to count by hand, one
 * realistic size, the fractions, and bad sizes; the median and spread of a
 * row's samples (bench/bench_spread.c) that the bench reports and warns
 * about; the parser of --ab-param's parameter lists and files
 * (bench/bench_ab_spec.c).  The A/B run itself is tests/test_bench_ab.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../bench/bench_ab_spec.h"
#include "../bench/bench_ops.h"
#include "../bench/bench_roofline.h"
#include "../bench/bench_spread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Extent 8 x 4 x 2: the half spectrum holds (8 / 2 + 1) x 4 x 2 = 40
 * complex floats = 320 bytes; one pass reads and writes it: 640 bytes. */
static const int small_volume[3] = {8, 4, 2};

static void test_fft_passes(void **state)
{
    (void)state;
    assert_int_equal((long)roofline_fft_pass_bytes(small_volume, 3), 640);
    /* 2 transforms x 3 axes x 640 */
    assert_int_equal((long)roofline_fft_bytes(small_volume, 3, 2), 3840);
    /* 2D 8 x 4: 5 x 4 complex = 160 bytes, 320 per pass, 2 passes */
    assert_int_equal((long)roofline_fft_bytes(small_volume, 2, 1), 640);
}

static void test_image_operations(void **state)
{
    (void)state;
    /* 10 x 20: two u8 inputs (400) and one f32 output (800) */
    assert_int_equal((long)roofline_sad_bytes(10, 20), 1200);
    assert_int_equal((long)roofline_bp_bytes(10, 20), 1200);
    /* 100 x 50 u8 image (5000) + 10 keypoints x (128 + 7) floats (5400) */
    assert_int_equal((long)roofline_sift_bytes(100, 50, 10), 10400);
    /* (10 + 20) descriptors x 512 bytes (15360) + 5 pairs x 8 bytes */
    assert_int_equal((long)roofline_match_bytes(10, 20, 5), 15400);
    /* 10^3: two f32 inputs (8000) and three f32 outputs (12000) */
    assert_int_equal((long)roofline_flow_bytes(10), 20000);
}

static void test_phase_correlation(void **state)
{
    (void)state;
    /* two f32 inputs of 64 voxels (512) + 3 transforms x 3 passes x 640
     * (5760) + a 12-byte shift */
    assert_int_equal((long)roofline_pc3d_oneshot_bytes(small_volume), 6284);
    /* one input (256) + the reference spectrum read once (320) + 2
     * transforms (3840) + the shift (12) */
    assert_int_equal((long)roofline_pc3d_cached_bytes(small_volume), 4428);
    /* the volume read and written (512) + 2 transforms (3840) */
    assert_int_equal((long)roofline_fft_pair_bytes(small_volume), 4352);
    /* 8 x 4 images: two f32 inputs (256) + 3 transforms x 2 passes of the
     * 5 x 4 half spectrum (2 x 160 = 320 each: 1920) + the shift (12) */
    const int plane[2] = {8, 4};
    assert_int_equal((long)roofline_pc2d_oneshot_bytes(plane), 2188);
    /* 256^3: 2 x 4 x 2^24 = 134217728 input bytes; the half spectrum is
     * 129 x 256 x 256 complex, 135266304 bytes per pass, 9 passes */
    const int big[3] = {256, 256, 256};
    assert_true(roofline_pc3d_oneshot_bytes(big) == 134217728.0 + 9.0 * 135266304.0 + 12.0);
}

static void test_ncc_and_octreg(void **state)
{
    (void)state;
    /* 4x4 image, 2x2 template: map 5x5 (100 bytes out), inputs 80 bytes,
     * half spectrum 3 x 5 complex = 120 bytes, 240 per pass, 3 transforms
     * x 2 passes: 1440 */
    assert_int_equal((long)roofline_ncc_bytes(4, 2), 1620);
    /* 8 x 4 x 2 target (256 bytes), per B-scan 2 transforms x 2 passes of
     * the 8 x 4 plane (4 x 320 = 1280), 2 shifts of 16 bytes */
    assert_int_equal((long)roofline_octreg_bytes(small_volume), 256 + 2 * 1280 + 32);
}

static void test_fraction(void **state)
{
    (void)state;
    /* 1e9 bytes at 100 GB/s take 10 ms; measured 20 ms: half the limit */
    assert_true(roofline_fraction(1e9, 100.0, 20.0) == 0.5);
    assert_true(roofline_fraction(0.0, 100.0, 20.0) == 0.0);
    assert_true(roofline_fraction(1e9, 0.0, 20.0) == 0.0);
    assert_true(roofline_fraction(1e9, 100.0, 0.0) == 0.0);
}

static void test_bad_sizes(void **state)
{
    (void)state;
    const int zero[3] = {8, 0, 2};
    assert_true(roofline_fft_pass_bytes(zero, 3) == 0.0);
    assert_true(roofline_fft_pass_bytes(NULL, 3) == 0.0);
    assert_true(roofline_fft_pass_bytes(small_volume, 0) == 0.0);
    assert_true(roofline_fft_bytes(small_volume, 3, 0) == 0.0);
    assert_true(roofline_sad_bytes(-1, 5) == 0.0);
    assert_true(roofline_pc3d_oneshot_bytes(zero) == 0.0);
    assert_true(roofline_pc3d_cached_bytes(NULL) == 0.0);
    assert_true(roofline_pc2d_oneshot_bytes(zero) == 0.0);
    assert_true(roofline_ncc_bytes(0, 3) == 0.0);
    assert_true(roofline_octreg_bytes(zero) == 0.0);
    assert_true(roofline_flow_bytes(0) == 0.0);
    assert_true(roofline_sift_bytes(10, 10, -1) == 0.0);
    assert_true(roofline_match_bytes(10, 0, 1) == 0.0);
}

/* The rows of the issue that led to the warning: 2.3 ms beside 136 ms is
 * a spread of 59x; samples within 2x of each other pass. */
static void test_spread(void **state)
{
    (void)state;
    const double steady[] = {10.0, 12.0, 19.9};
    const double jumpy[] = {2.3, 136.0, 2.4};
    assert_true(fabs(bench_spread(steady, 3) - 1.99) < 1e-12);
    assert_false(bench_spread_exceeds(steady, 3, BENCH_SPREAD_LIMIT));
    assert_true(fabs(bench_spread(jumpy, 3) - 136.0 / 2.3) < 1e-9);
    assert_true(bench_spread_exceeds(jumpy, 3, BENCH_SPREAD_LIMIT));
    /* exactly 2x is not beyond the limit */
    const double twice[] = {5.0, 10.0};
    assert_false(bench_spread_exceeds(twice, 2, BENCH_SPREAD_LIMIT));
    assert_true(bench_spread_exceeds(twice, 2, 1.5));
}

/* One sample or none has no spread; zero, negative or NaN samples give no
 * ratio, and no warning. */
static void test_spread_degenerate(void **state)
{
    (void)state;
    const double one[] = {3.0};
    const double with_zero[] = {0.0, 5.0};
    const double with_nan[] = {1.0, NAN};
    const double negative[] = {-1.0, 5.0};
    assert_true(bench_spread(one, 1) == 1.0);
    assert_true(bench_spread(NULL, 0) == 1.0);
    assert_true(bench_spread(with_zero, 2) == 0.0);
    assert_true(bench_spread(with_nan, 2) == 0.0);
    assert_true(bench_spread(negative, 2) == 0.0);
    assert_false(bench_spread_exceeds(with_zero, 2, BENCH_SPREAD_LIMIT));
    assert_false(bench_spread_exceeds(one, 1, 1.0));
}

/* Real FFTs: 2.5 N log2 N.  8 x 4 x 2 is 64 points: 2.5 x 64 x 6 = 960;
 * 8 x 4 is 32: 2.5 x 32 x 5 = 400. */
static void test_ops_fft_and_phase_correlation(void **state)
{
    (void)state;
    assert_true(ops_fft(small_volume, 3) == 960.0);
    assert_true(ops_fft(small_volume, 2) == 400.0);
    /* 3 transforms (2880) + 12 x the 40-element half spectrum (480) */
    assert_true(ops_phase_correlation(small_volume, 3, 3) == 3360.0);
    /* cached: 2 transforms (1920) + 480 */
    assert_true(ops_phase_correlation(small_volume, 3, 2) == 2400.0);
    assert_true(ops_fft_pair(small_volume) == 1920.0);
    /* 8 x 4 x 3 B-scans: per B-scan 2 x 400 + 12 x (5 x 4) = 1040 */
    const int oct[3] = {8, 4, 3};
    assert_true(ops_octreg(oct) == 3120.0);
    /* 5^2 image, 4^2 template: the 8 x 8 map; 3 x 960 + 6 x (5 x 8) +
     * (8 + 10) x 64 = 2880 + 240 + 1152 */
    assert_true(ops_ncc(5, 4) == 4272.0);
}

static void test_ops_image_operations(void **state)
{
    (void)state;
    /* 8 a pixel and disparity: 8 x 200 x 16 */
    assert_true(ops_sad(10, 20, 16) == 25600.0);
    /* 8 x 8, 4 labels, 2 levels, 3 iterations:
     *   level 0: messages 0.5 x 64 x 3 x 4 x 11 x 4 = 16896, data 64 x 4 x 3 = 768
     *   level 1: messages 0.5 x 16 x 3 x 4 x 11 x 4 = 4224, sums 16 x 4 x 4 = 256
     *   beliefs 64 x 4 x 5 = 1280 */
    assert_true(ops_bp(8, 8, 4, 2, 3) == 23424.0);
    /* 2^3 voxels, 1 warp of 2 iterations, 3 taps: 58 + 9 x 3 x 3 x 2 (162)
     * + 2 x 128 (256) = 476 a voxel */
    assert_true(ops_flow(2, 1, 2, 3) == 3808.0);
    /* (2 x 128 + 2) x 10 x 20 */
    assert_true(ops_match(10, 20) == 51600.0);
}

/* SIFT on 10 x 10, 3 levels: the base blur sigma sqrt(1.6^2 - 0.5^2) =
 * 1.52 has radius ceil(6.08) = 7, 15 taps, 60 a pixel; the 5 incremental
 * sigmas 1.226, 1.545, 1.947, 2.453, 3.090 have radii 5, 7, 8, 10, 13:
 * 11 + 15 + 17 + 21 + 27 = 91 taps, 364 a pixel; 5 differences and 3 x 26
 * comparisons make 447 a pixel of an octave. */
static void test_ops_sift(void **state)
{
    (void)state;
    assert_true(ops_sift(10, 10, 1, 3, 0) == 100.0 * (60.0 + 447.0));
    /* a second octave of 25 pixels */
    assert_true(ops_sift(10, 10, 2, 3, 0) == 100.0 * (60.0 + 447.0) + 25.0 * 447.0);
    /* each keypoint: 450 x 20 + 2000 x 30 */
    assert_true(ops_sift(10, 10, 1, 3, 2) == 50700.0 + 2.0 * 69000.0);
}

static void test_ops_fraction_and_bad_sizes(void **state)
{
    (void)state;
    /* 2e9 operations at 1000 GOP/s take 2 ms; measured 4 ms: half */
    assert_true(ops_fraction(2e9, 1000.0, 4.0) == 0.5);
    assert_true(ops_fraction(0.0, 1000.0, 4.0) == 0.0);
    assert_true(ops_fraction(2e9, 0.0, 4.0) == 0.0);
    assert_true(ops_fraction(2e9, 1000.0, -1.0) == 0.0);
    const int zero[3] = {8, 0, 2};
    assert_true(ops_fft(NULL, 3) == 0.0);
    assert_true(ops_fft(zero, 3) == 0.0);
    assert_true(ops_phase_correlation(small_volume, 3, 0) == 0.0);
    assert_true(ops_fft_pair(NULL) == 0.0);
    assert_true(ops_octreg(zero) == 0.0);
    assert_true(ops_ncc(0, 4) == 0.0);
    assert_true(ops_sad(10, 0, 16) == 0.0);
    assert_true(ops_bp(8, 8, 4, 0, 3) == 0.0);
    assert_true(ops_flow(2, 1, 2, 0) == 0.0);
    assert_true(ops_sift(10, 10, 1, 0, 0) == 0.0);
    assert_true(ops_match(-1, 20) == 0.0);
}

/* The median the rows report: the middle sample, or the mean of the two
 * middle ones; the input keeps its order; no samples or too many: NaN. */
static void test_median(void **state)
{
    (void)state;
    const double odd[] = {3.0, 1.0, 2.0};
    const double even[] = {4.0, 1.0, 3.0, 2.0};
    assert_true(bench_median(odd, 3) == 2.0);
    assert_true(odd[0] == 3.0 && odd[1] == 1.0);
    assert_true(bench_median(even, 4) == 2.5);
    assert_true(isnan(bench_median(odd, 0)));
    assert_true(isnan(bench_median(NULL, 3)));
    assert_true(isnan(bench_median(odd, BENCH_SPREAD_MAX_VALUES + 1)));
}

/* ------------------------------------------------------------ --ab-param */

/* A spec that a refused input must leave as it was. */
static void fill_sentinel(bench_ab_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->count = 1;
    snprintf(spec->params[0].family, sizeof spec->params[0].family, "sentinel");
    spec->params[0].value = 12345;
}

static int still_sentinel(const bench_ab_spec *spec)
{
    return spec->count == 1 && strcmp(spec->params[0].family, "sentinel") == 0 &&
           spec->params[0].value == 12345;
}

/* Refused, with a message holding `expect`, and the spec untouched. */
static void assert_refused(const char *text, const char *expect)
{
    bench_ab_spec *spec = malloc(sizeof *spec);
    char why[512] = "";
    assert_non_null(spec);
    fill_sentinel(spec);
    assert_int_equal(bench_ab_spec_parse(text, spec, why, sizeof why), -1);
    if (!strstr(why, expect))
        fail_msg("'%s': message '%s' lacks '%s'", text, why, expect);
    assert_true(still_sentinel(spec));
    free(spec);
}

static void assert_param(const bench_ab_param *p, const char *family, const char *name, int value)
{
    assert_string_equal(p->family, family);
    assert_string_equal(p->name, name);
    assert_int_equal(p->value, value);
}

static void test_ab_spec_list(void **state)
{
    (void)state;
    bench_ab_spec *spec = malloc(sizeof *spec);
    char why[512] = "";
    assert_non_null(spec);
    assert_int_equal(bench_ab_spec_parse("sad.SAD_WG_X=16,bp.BP_WG_Y=2,geometry.GEOM_WG=0", spec,
                                         why, sizeof why), 0);
    assert_int_equal(spec->count, 3);
    assert_param(&spec->params[0], "sad", "SAD_WG_X", 16);
    assert_param(&spec->params[1], "bp", "BP_WG_Y", 2);
    assert_param(&spec->params[2], "geometry", "GEOM_WG", 0);
    /* the largest value pv_tune_set takes */
    assert_int_equal(bench_ab_spec_parse("filter.FILTER_WG_X=1048576", spec, why, sizeof why), 0);
    assert_int_equal(spec->count, 1);
    assert_param(&spec->params[0], "filter", "FILTER_WG_X", BENCH_AB_MAX_VALUE);
    free(spec);
}

static void test_ab_spec_list_refused(void **state)
{
    (void)state;
    assert_refused("", "empty");
    assert_refused("@", "empty");
    assert_refused("sad.SAD_WG_X", "not FAMILY.NAME=VALUE");
    assert_refused("SAD_WG_X=16", "not FAMILY.NAME=VALUE");
    assert_refused(".SAD_WG_X=16", "not FAMILY.NAME=VALUE");
    assert_refused("sad.SAD_WG_X=16,", "not FAMILY.NAME=VALUE");
    assert_refused("stereo.SAD_WG_X=16", "'stereo' is not a tunable family");
    /* the message lists the families there are */
    assert_refused("fft.FFT_ENGINE=1", "(filter, sad, bp,");
    assert_refused("sad.=16", "is not a parameter name");
    assert_refused("sad.SAD.WG=16", "is not a parameter name");
    assert_refused("sad.SAD_WG_X=-1", "value '-1' is not an integer in 0..1048576");
    assert_refused("sad.SAD_WG_X=1048577", "is not an integer");
    assert_refused("sad.SAD_WG_X=16x", "is not an integer");
    assert_refused("sad.SAD_WG_X=1=2", "is not an integer");
    assert_refused("sad.SAD_WG_X=", "is not an integer");
}

/* text into a fresh temporary file; its path into path. */
static void write_temp(const char *text, size_t size, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/pv-ab-spec-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, size), (long)size);
    close(fd);
}

/* A tuning cache file as the library writes it (lib/tune/tune.c), with CRLF
 * line ends on one line and a parameter repeated (the later one wins when
 * applied, so both are kept in order). */
static const char cache_file[] = "parvis-tune 1\n"
                                 "device Some Device\n"
                                 "driver 1.0\n"
                                 "parvis 0.1.0\n"
                                 "param sad SAD_WG_X 32\r\n"
                                 "param bp BP_WG_Y 4\n"
                                 "param\tflow FLOW_WG_X 8\n"
                                 "param sad SAD_WG_X 16\n"
                                 "end 0123456789abcdef\n";

static void test_ab_spec_file(void **state)
{
    (void)state;
    char path[4096], why[512] = "", at[4100];
    bench_ab_spec *spec = malloc(sizeof *spec);
    assert_non_null(spec);
    write_temp(cache_file, sizeof cache_file - 1, path, sizeof path);
    snprintf(at, sizeof at, "@%s", path);
    assert_int_equal(bench_ab_spec_parse(at, spec, why, sizeof why), 0);
    unlink(path);
    assert_int_equal(spec->count, 4);
    assert_param(&spec->params[0], "sad", "SAD_WG_X", 32);
    assert_param(&spec->params[1], "bp", "BP_WG_Y", 4);
    assert_param(&spec->params[2], "flow", "FLOW_WG_X", 8);
    assert_param(&spec->params[3], "sad", "SAD_WG_X", 16);
    /* as --param text after a prefix: what side B applies */
    char text[256];
    assert_int_equal(bench_ab_spec_format("octreg.OCT_WG=64", spec, text, sizeof text), 0);
    assert_string_equal(text, "octreg.OCT_WG=64,sad.SAD_WG_X=32,bp.BP_WG_Y=4,flow.FLOW_WG_X=8,"
                              "sad.SAD_WG_X=16");
    assert_int_equal(bench_ab_spec_format(NULL, spec, text, sizeof text), 0);
    assert_string_equal(text, "sad.SAD_WG_X=32,bp.BP_WG_Y=4,flow.FLOW_WG_X=8,sad.SAD_WG_X=16");
    /* too small a buffer: refused, nothing half written */
    assert_int_equal(bench_ab_spec_format(NULL, spec, text, 20), -1);
    assert_string_equal(text, "");
    free(spec);
}

/* The tuning database's entry for the H100, read as a file: every one of
 * its param lines, in order, and nothing else. */
static void test_ab_spec_database_entry(void **state)
{
    (void)state;
    char path[4096], why[512] = "", line[256];
    snprintf(path, sizeof path, "@%s/lib/tune/tune_db/nvidia-h100.txt", PV_SRC_DIR);
    bench_ab_spec *spec = malloc(sizeof *spec);
    assert_non_null(spec);
    if (bench_ab_spec_parse(path, spec, why, sizeof why) != 0)
        fail_msg("%s", why);
    FILE *in = fopen(path + 1, "r");
    assert_non_null(in);
    int index = 0;
    while (fgets(line, sizeof line, in)) {
        char family[32], name[64];
        int value;
        if (sscanf(line, "param %31s %63s %d", family, name, &value) != 3)
            continue;
        assert_true(index < spec->count);
        assert_param(&spec->params[index++], family, name, value);
    }
    fclose(in);
    assert_int_equal(spec->count, index);
    assert_true(index > 0);
    free(spec);
}

/* Refused file text, with the message naming the line. */
static void assert_file_refused(const char *text, size_t size, const char *expect)
{
    char path[4096], at[4100];
    write_temp(text, size, path, sizeof path);
    snprintf(at, sizeof at, "@%s", path);
    assert_refused(at, expect);
    unlink(path);
}

static void test_ab_spec_file_refused(void **state)
{
    (void)state;
    static const char short_line[] = "parvis-tune-db 1\nparam sad SAD_WG_X\n";
    static const char long_line[] = "param sad SAD_WG_X 32\nparam sad SAD_WG_Y 4 extra\n";
    static const char unknown[] = "vendor X\nparam sad SAD_WG_X 32\nparam shading WG 8\n";
    static const char bad_value[] = "param sad SAD_WG_X thirty-two\n";
    static const char negative[] = "param sad SAD_WG_X -2\n";
    static const char no_params[] = "parvis-tune 1\ndevice D\nparameters none\nend 00\n";
    static const char binary[] = "param sad SAD_WG_X 32\n\0\x01\x02";
    assert_file_refused(short_line, sizeof short_line - 1,
                        "line 2: not 'param FAMILY NAME VALUE'");
    assert_file_refused(long_line, sizeof long_line - 1, "line 2: not 'param FAMILY NAME VALUE'");
    assert_file_refused(unknown, sizeof unknown - 1, "line 3: 'shading' is not a tunable family");
    assert_file_refused(bad_value, sizeof bad_value - 1, "line 1: value 'thirty-two'");
    assert_file_refused(negative, sizeof negative - 1, "line 1: value '-2'");
    assert_file_refused(no_params, sizeof no_params - 1, "no 'param FAMILY NAME VALUE' lines");
    assert_file_refused("", 0, "no 'param FAMILY NAME VALUE' lines");
    assert_file_refused(binary, sizeof binary - 1, "not a text file");
    char too_long[BENCH_AB_MAX_LINE + 40];
    memset(too_long, 'x', sizeof too_long);
    memcpy(too_long, "param sad SAD_WG_X 32\n", 22);
    too_long[sizeof too_long - 1] = '\n';
    assert_file_refused(too_long, sizeof too_long, "line 2: longer than");
    assert_refused("@/nonexistent/pv-ab-entry.txt",
                   "cannot read /nonexistent/pv-ab-entry.txt: No such file or directory");
    /* a directory is no entry either */
    assert_refused("@/", "cannot read /");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_spread_degenerate),
        cmocka_unit_test(test_fft_passes),
        cmocka_unit_test(test_image_operations),
        cmocka_unit_test(test_phase_correlation),
        cmocka_unit_test(test_ncc_and_octreg),
        cmocka_unit_test(test_fraction),
        cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_ops_fft_and_phase_correlation),
        cmocka_unit_test(test_ops_image_operations),
        cmocka_unit_test(test_ops_sift),
        cmocka_unit_test(test_ops_fraction_and_bad_sizes),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_ab_spec_list),
        cmocka_unit_test(test_ab_spec_list_refused),
        cmocka_unit_test(test_ab_spec_file),
        cmocka_unit_test(test_ab_spec_database_entry),
        cmocka_unit_test(test_ab_spec_file_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
