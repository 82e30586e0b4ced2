/* Tests of the cooperative distance-transform math
 * (backends/common/bp_scan_math.h), which the OpenCL kernel of
 * PV_BP_UPDATE_COOPERATIVE runs and whose exactness the cross-check relies
 * on.  Tolerance everywhere: none, bit-identical floats.
 *
 *   - pv_bp_jump(x, n) against n successive additions of 1.0f, for every
 *     n in [0, 512] and x from: uniform random floats over [0, 1e5],
 *     random bit patterns of every binade from subnormals to 2^30, the
 *     neighbourhood (+-8 ulps) of every power of two from 2^-30 to 2^26,
 *     0, the smallest subnormals, values from 2^24 up, +INFINITY;
 *   - the lane scan (chains per lane, a Hillis-Steele scan of the lanes'
 *     ends with pv_bp_carry, the chains again from the carries, forward
 *     then backward) against the serial passes, for vectors of 1 to 300
 *     values in 1 to 64 lanes (the last lane padded with +INFINITY), with
 *     values from several ranges, ties and runs of equal values included;
 *   - scans that reach only some of the lanes (pv_bp_scan_lanes), with
 *     min_h gathered from a few lanes as the kernel does: the truncated,
 *     normalised messages against the whole scan's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../backends/common/bp_scan_math.h"

#define MAX_STEPS 512
#define MAX_VALUES 320
#define MAX_LANES 64

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static float uniform(float hi)
{
    return (float)((double)next_u32() / 4294967296.0 * (double)hi);
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Checks pv_bp_jump(x, n) for every n <= MAX_STEPS against the serial
 * chain; returns the number of mismatches. */
static long check_jumps(float x)
{
    long mismatches = 0;
    float serial = x;
    for (int n = 0; n <= MAX_STEPS; n++) {
        if (bits_of(pv_bp_jump(x, n)) != bits_of(serial)) {
            if (mismatches == 0)
                print_error("jump(%a, %d) = %a, serial %a\n", (double)x, n,
                            (double)pv_bp_jump(x, n), (double)serial);
            mismatches++;
        }
        serial = serial + 1.0f;
    }
    return mismatches;
}

static void jump_matches_serial_additions(void **state)
{
    (void)state;
    long mismatches = 0, pairs = 0;
    const float fixed[] = {0.0f, from_bits(1), from_bits(2), from_bits(0x007fffff),
                           from_bits(0x00800000), 1e-30f, 0.5f, 0.99999994f, 1.0f,
                           16777215.0f, 16777216.0f, 16777217.0f, 16777218.0f, 16777220.0f,
                           33554432.0f, 33554436.0f, 1e9f, 3.4e38f, INFINITY};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++, pairs += MAX_STEPS + 1)
        mismatches += check_jumps(fixed[i]);
    for (int i = 0; i < 6000; i++, pairs += MAX_STEPS + 1)
        mismatches += check_jumps(uniform(1e5f));
    /* random mantissas in every binade from the subnormals to 2^30 */
    for (uint32_t exponent = 0; exponent <= 127 + 30; exponent++)
        for (int i = 0; i < 40; i++, pairs += MAX_STEPS + 1)
            mismatches += check_jumps(from_bits(exponent << 23 | (next_u32() & 0x7fffff)));
    /* +-8 ulps around each power of two */
    for (int e = -30; e <= 26; e++) {
        const uint32_t power = bits_of(ldexpf(1.0f, e));
        for (int k = -8; k <= 8; k++, pairs += MAX_STEPS + 1)
            mismatches += check_jumps(from_bits(power + (uint32_t)k));
    }
    print_message("jump: %ld pairs (x, n), %ld mismatches\n", pairs, mismatches);
    assert_true(pairs >= 4000000);
    assert_int_equal(mismatches, 0);
}

/* pv_bp_carry's shortcut (pv_bp_jump_reaches) against the full jump:
 * own values drawn around the pushed value (where the bound is tight),
 * far from it and at random, steps up to and past PV_BP_BOUND_STEPS. */
static void carry_shortcut_is_exact(void **state)
{
    (void)state;
    long mismatches = 0, decided = 0, pairs = 0;
    for (int i = 0; i < 400000; i++, pairs++) {
        const float earlier = i % 7 == 0 ? from_bits(next_u32() % 0x4c000000u) : uniform(500.0f);
        const int steps = 1 + (int)(next_u32() % (i % 5 == 0 ? 4096u : 256u));
        const float pushed = pv_bp_jump(earlier, steps);
        float own;
        switch (i % 4) {
        case 0: own = from_bits(bits_of(pushed) + (next_u32() % 64) - 32); break;
        case 1: own = pushed * (1.0f - ldexpf(1.0f, -13 - (int)(next_u32() % 12))); break;
        case 2: own = uniform(600.0f); break;
        default: own = i % 8 == 3 ? INFINITY : pushed; break;
        }
        const float exact = pushed < own ? pushed : own;
        decided += pv_bp_jump_reaches(earlier, steps, own);
        if (bits_of(pv_bp_carry(own, earlier, steps)) != bits_of(exact)) {
            if (mismatches == 0)
                print_error("carry(%a, %a, %d) = %a, exact %a\n", (double)own, (double)earlier,
                            steps, (double)pv_bp_carry(own, earlier, steps), (double)exact);
            mismatches++;
        }
    }
    print_message("carry: %ld triples, %ld decided by the bound, %ld mismatches\n", pairs,
                  decided, mismatches);
    assert_true(decided > 0 && decided < pairs);
    assert_int_equal(mismatches, 0);
}

/* The serial passes of the CPU oracle, in place. */
static void serial_passes(float *v, int count)
{
    pv_bp_forward_chain(v, count, INFINITY);
    pv_bp_backward_chain(v, count, INFINITY);
}

/* The exchange of a Hillis-Steele scan step: every lane reads the value of
 * the lane `offset` before it (forward) or after it (backward), as the
 * kernel does through local memory. */
static void scan_lanes(float *ends, int lanes, int per_lane, int forward, int reach)
{
    float seen[MAX_LANES];
    for (int offset = 1; offset < reach; offset <<= 1) {
        memcpy(seen, ends, (size_t)lanes * sizeof *ends);
        for (int l = 0; l < lanes; l++) {
            const int other = forward ? l - offset : l + offset;
            if (other >= 0 && other < lanes)
                ends[l] = pv_bp_carry(seen[l], seen[other], per_lane * offset);
        }
    }
}

/* One pass the cooperative way: chains per lane, the scan reaching
 * `reach` lanes, the chains again from each lane's incoming carry (the
 * scanned value of the lane before it). */
static void cooperative_pass(float *v, int lanes, int per_lane, int forward, int reach)
{
    float ends[MAX_LANES];
    for (int l = 0; l < lanes; l++)
        ends[l] = forward ? pv_bp_forward_chain(v + l * per_lane, per_lane, INFINITY)
                          : pv_bp_backward_chain(v + l * per_lane, per_lane, INFINITY);
    scan_lanes(ends, lanes, per_lane, forward, reach);
    for (int l = 0; l < lanes; l++) {
        const int from = forward ? l - 1 : l + 1;
        const float carry = from >= 0 && from < lanes ? ends[from] : INFINITY;
        if (forward)
            pv_bp_forward_chain(v + l * per_lane, per_lane, carry);
        else
            pv_bp_backward_chain(v + l * per_lane, per_lane, carry);
    }
}

/* Both passes over count values in `lanes` lanes, padded with +INFINITY
 * (reset after the forward pass, as the kernel does). */
static void cooperative_passes(float *v, int count, int lanes, int reach)
{
    const int per_lane = (count + lanes - 1) / lanes;
    for (int d = count; d < lanes * per_lane; d++)
        v[d] = INFINITY;
    cooperative_pass(v, lanes, per_lane, 1, reach);
    for (int d = count; d < lanes * per_lane; d++)
        v[d] = INFINITY;
    cooperative_pass(v, lanes, per_lane, 0, reach);
}

/* A vector of count values: uniform over a range chosen by `kind`, or
 * runs of equal values (ties). */
static void fill_vector(float *v, int count, int kind)
{
    static const float ranges[] = {2.0f, 40.0f, 1000.0f, 1e5f, 3e7f};
    for (int d = 0; d < count; d++) {
        if (kind == 5)
            v[d] = (float)(next_u32() % 4) * 0.75f;
        else if (kind == 6)
            v[d] = d > 0 && next_u32() % 3 ? v[d - 1] : uniform(50.0f);
        else
            v[d] = uniform(ranges[kind]);
    }
}

static void lane_scan_matches_serial_passes(void **state)
{
    (void)state;
    long vectors = 0, mismatches = 0;
    float serial[MAX_VALUES], cooperative[MAX_VALUES + MAX_LANES];
    for (int count = 1; count <= 300; count += count < 40 ? 1 : 13)
        for (int lanes = 1; lanes <= MAX_LANES; lanes <<= 1)
            for (int kind = 0; kind < 7; kind++)
                for (int rep = 0; rep < 4; rep++, vectors++) {
                    fill_vector(serial, count, kind);
                    memcpy(cooperative, serial, (size_t)count * sizeof *serial);
                    serial_passes(serial, count);
                    cooperative_passes(cooperative, count, lanes, lanes);
                    if (memcmp(serial, cooperative, (size_t)count * sizeof *serial) != 0) {
                        if (mismatches == 0)
                            print_error("%d values in %d lanes (kind %d) differ\n", count, lanes,
                                        kind);
                        mismatches++;
                    }
                }
    print_message("lane scan: %ld vectors, %ld mismatches\n", vectors, mismatches);
    assert_int_equal(mismatches, 0);
}

/* min_h as the kernel gathers it after scans reaching `reach` lanes: each
 * lane's minimum over lanes [l - reach + 1, l + reach - 1] (the forward
 * and the backward scan's), read from lanes reach - 1, that plus 2 reach -
 * 1, ..., the last clamped to the last lane. */
static float gathered_min(const float *h, int count, int lanes, int reach)
{
    const int per_lane = (count + lanes - 1) / lanes;
    float own[MAX_LANES], all = INFINITY;
    for (int l = 0; l < lanes; l++) {
        own[l] = INFINITY;
        for (int k = 0; k < per_lane; k++)
            if (l * per_lane + k < count && h[l * per_lane + k] < own[l])
                own[l] = h[l * per_lane + k];
    }
    for (int c = reach - 1; c < lanes + reach - 1; c += 2 * reach - 1) {
        const int centre = c < lanes ? c : lanes - 1;
        for (int l = centre - reach + 1; l <= centre + reach - 1; l++)
            if (l >= 0 && l < lanes && own[l] < all)
                all = own[l];
    }
    return all;
}

/* The largest finite value of h: the bound pv_bp_scan_lanes is given. */
static double largest(const float *h, int count)
{
    double most = 0.0;
    for (int d = 0; d < count; d++)
        if (h[d] > most && h[d] < INFINITY)
            most = h[d];
    return most;
}

/* Scans that reach only pv_bp_scan_lanes's lanes, min_h gathered as the
 * kernel does, give the truncated, normalised messages of the whole scan
 * bit for bit, for truncations from 1.7 (the paper's) to beyond the range
 * and values from 2 to 1e5 (where adding 1 moves the largest by little).
 * The cases include scans that do leave out far values which change the
 * untruncated passes (counted, and required): the truncation hides
 * them, which is what the shortcut rests on. */
static void partial_scan_keeps_messages(void **state)
{
    (void)state;
    static const double truncations[] = {1.7, 4.5, 8.5, 34.13, 100.0, 400.0};
    long vectors = 0, partial = 0, hidden = 0, mismatches = 0;
    float h[MAX_VALUES], full[MAX_VALUES], part[MAX_VALUES + MAX_LANES];
    for (int count = 8; count <= 300; count += 23)
        for (int lanes = 4; lanes <= MAX_LANES && 2 * lanes <= count; lanes <<= 1)
            for (int kind = 0; kind < 7; kind++)
                for (size_t t = 0; t < sizeof truncations / sizeof *truncations; t++) {
                    const float disc_max = (float)truncations[t];
                    const int per_lane = (count + lanes - 1) / lanes;
                    fill_vector(h, count, kind);
                    const int reach = pv_bp_scan_lanes(lanes, per_lane, largest(h, count),
                                                       disc_max);
                    memcpy(full, h, (size_t)count * sizeof *h);
                    memcpy(part, h, (size_t)count * sizeof *h);
                    serial_passes(full, count);
                    cooperative_passes(part, count, lanes, reach);
                    const float min_full = gathered_min(h, count, lanes, lanes);
                    const float min_part = gathered_min(h, count, lanes, reach);
                    int differs = 0, cut = 0;
                    for (int d = 0; d < count; d++) {
                        cut |= memcmp(&full[d], &part[d], sizeof *full) != 0;
                        const float a = pv_bp_min_normalised(full[d], min_full, disc_max);
                        const float b = pv_bp_min_normalised(part[d], min_part, disc_max);
                        differs |= memcmp(&a, &b, sizeof a) != 0;
                    }
                    vectors++;
                    partial += reach < lanes;
                    hidden += cut && !differs;
                    if (differs && mismatches++ == 0)
                        print_error("%d values in %d lanes reaching %d (kind %d, disc_max %g) "
                                    "differ\n", count, lanes, reach, kind, (double)disc_max);
                }
    print_message("partial scans: %ld vectors, %ld partial, %ld with far values hidden by the "
                  "truncation, %ld mismatches\n", vectors, partial, hidden, mismatches);
    assert_true(partial > 0 && partial < vectors);
    assert_true(hidden > 0);
    assert_int_equal(mismatches, 0);
}

/* The reach: at least a quarter of the lanes, all of them when the values
 * are so large that 1.0f hardly moves them or the truncation is wide. */
static void scan_reach_bounds(void **state)
{
    (void)state;
    assert_int_equal(pv_bp_scan_lanes(32, 8, 400.0, 34.13), 8);
    assert_int_equal(pv_bp_scan_lanes(32, 8, 400.0, 1.7), 8);
    assert_int_equal(pv_bp_scan_lanes(32, 8, 400.0, 100.0), 16);
    assert_int_equal(pv_bp_scan_lanes(32, 8, 400.0, 300.0), 32);
    assert_int_equal(pv_bp_scan_lanes(32, 8, 1e7, 34.13), 32);
    assert_int_equal(pv_bp_scan_lanes(8, 2, 40.0, 1.7), 2);
    assert_int_equal(pv_bp_scan_lanes(1, 16, 40.0, 1.7), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jump_matches_serial_additions),
        cmocka_unit_test(carry_shortcut_is_exact),
        cmocka_unit_test(lane_scan_matches_serial_passes),
        cmocka_unit_test(partial_scan_keeps_messages),
        cmocka_unit_test(scan_reach_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
