/* The bench's roofline byte counts (bench/bench_roofline.c) on cases small
 * enough to count by hand, one realistic size, the fraction, and bad sizes;
 * the spread of a row's samples (bench/bench_spread.c) that the bench warns
 * about. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../bench/bench_roofline.h"
#include "../bench/bench_spread.h"

#include <math.h>

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
