/* Tests of the parameter declarations (include/parvis/params.h): every
 * operation's parameters declared once and introspected.
 *
 *   - known answers: the declared operations and their structure sizes;
 *     pv_params_init gives the same bytes as each pv_<op>_params_default
 *     function, and a handful of documented defaults hold (SGM ndisp 64,
 *     P2 120, 8 paths; SAD window 5; BP 16 disparities; flow alpha 0.05;
 *     RANSAC 2048 iterations; phase correlation upsample 100);
 *   - every parameter of every operation: the default is inside its range,
 *     both ends of the range are accepted, a step beyond either end (and
 *     NaN, and a fraction for integers) is refused with the structure
 *     untouched, and get returns what set wrote;
 *   - text values as the command line gives them: numbers, true/false,
 *     on/off, choice names; trailing characters and empty text refused;
 *   - the front ends enforce the declared ranges: SGM and SAD refuse a
 *     field outside its declaration on both backends with the same
 *     message naming the field;
 *   - bad input: NULL pointers, a wrong structure size, unknown operation
 *     numbers and names, unknown parameters. */
#include "test_util.h"

#include <math.h>
#include <string.h>

static int op_number(const char *name)
{
    int op = -1;
    assert_int_equal(pv_op_find(name, &op), PV_OK);
    return op;
}

static void test_known_operations(void **state)
{
    (void)state;
    static const struct {
        const char *name, *module;
        size_t size;
    } expected[] = {
        {"sad", "stereo", sizeof(pv_sad_params)},
        {"bp", "stereo", sizeof(pv_bp_params)},
        {"sgm", "stereo", sizeof(pv_sgm_params)},
        {"sift", "features", sizeof(pv_sift_params)},
        {"match", "features", sizeof(pv_sift_match_params)},
        {"ransac", "geometry", sizeof(pv_ransac_params)},
        {"phasecorr", "register", sizeof(pv_phasecorr_options)},
        {"phasecorr_masked", "register", sizeof(pv_phasecorr_masked_params)},
        {"octreg", "octreg", sizeof(pv_octreg_options)},
        {"flow", "flow", sizeof(pv_flow_params)},
    };
    assert_int_equal(pv_op_count(), (int)(sizeof expected / sizeof expected[0]));
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++) {
        pv_op_info info;
        assert_int_equal(pv_op_get(op_number(expected[k].name), &info), PV_OK);
        assert_string_equal(info.name, expected[k].name);
        assert_string_equal(info.module, expected[k].module);
        assert_int_equal(info.params_size, expected[k].size);
        assert_true(info.param_count > 0);
        assert_true(strlen(info.summary) > 0);
    }
}

/* pv_params_init against the struct's own default function. */
#define SAME_DEFAULTS(type, default_fn, name)                                   \
    do {                                                                          \
        type a, b;                                                                \
        memset(&a, 0x5a, sizeof a);                                               \
        memset(&b, 0xa5, sizeof b);                                               \
        default_fn(&a);                                                           \
        assert_int_equal(pv_params_init(op_number(name), &b, sizeof b), PV_OK); \
        assert_memory_equal(&a, &b, sizeof a);                                    \
    } while (0)

static void test_defaults(void **state)
{
    (void)state;
    SAME_DEFAULTS(pv_sad_params, pv_sad_params_default, "sad");
    SAME_DEFAULTS(pv_bp_params, pv_bp_params_default, "bp");
    SAME_DEFAULTS(pv_sgm_params, pv_sgm_params_default, "sgm");
    SAME_DEFAULTS(pv_sift_params, pv_sift_params_default, "sift");
    SAME_DEFAULTS(pv_sift_match_params, pv_sift_match_params_default, "match");
    SAME_DEFAULTS(pv_ransac_params, pv_ransac_params_default, "ransac");
    SAME_DEFAULTS(pv_phasecorr_options, pv_phasecorr_options_default, "phasecorr");
    SAME_DEFAULTS(pv_phasecorr_masked_params, pv_phasecorr_masked_params_default,
                  "phasecorr_masked");
    SAME_DEFAULTS(pv_octreg_options, pv_octreg_options_default, "octreg");
    SAME_DEFAULTS(pv_flow_params, pv_flow_params_default, "flow");

    pv_sgm_params sgm;
    pv_sgm_params_default(&sgm);
    assert_int_equal(sgm.ndisp, 64);
    assert_int_equal(sgm.p1, 10);
    assert_int_equal(sgm.p2, 120);
    assert_int_equal(sgm.paths, 8);
    assert_int_equal(sgm.census_width * 10 + sgm.census_height, 97);
    assert_true(sgm.uniqueness == 0.95f);
    pv_sad_params sad;
    pv_sad_params_default(&sad);
    assert_int_equal(sad.window, 5);
    pv_bp_params bp;
    pv_bp_params_default(&bp);
    assert_int_equal(bp.ndisp, 16);
    assert_int_equal(bp.message_update, PV_BP_UPDATE_SERIAL);
    pv_flow_params flow;
    pv_flow_params_default(&flow);
    assert_true(flow.alpha == 0.05f);
    pv_ransac_params ransac;
    pv_ransac_params_default(&ransac);
    assert_int_equal(ransac.iterations, 2048);
    assert_int_equal(ransac.seed, 1);
    pv_phasecorr_options pc;
    pv_phasecorr_options_default(&pc);
    assert_int_equal(pc.upsample, 100);
    /* the fast SIFT preset differs from the declared (reference) defaults in
     * exactly the two fields it documents */
    pv_sift_params fast, reference;
    pv_sift_params_default(&reference);
    assert_int_equal(pv_sift_params_preset(&fast, PV_SIFT_PRESET_FAST), PV_OK);
    assert_int_equal(fast.first_octave, 0);
    assert_true(fast.peak_thresh == 0.01f);
    fast.first_octave = reference.first_octave;
    fast.peak_thresh = reference.peak_thresh;
    assert_memory_equal(&fast, &reference, sizeof fast);
}

/* Sets name to value in a fresh default structure and expects the status;
 * a refusal must leave the structure as it was. */
static void expect_set(int op, const pv_op_info *info, const pv_param_info *p, double value,
                       pv_status expected)
{
    unsigned char before[512], after[512];
    assert_true(info->params_size <= sizeof before);
    assert_int_equal(pv_params_init(op, before, info->params_size), PV_OK);
    memcpy(after, before, info->params_size);
    pv_status status = pv_params_set(op, after, info->params_size, p->name, value);
    if (status != expected)
        fail_msg("%s.%s = %.17g: status %d, expected %d (%s)", info->name, p->name, value,
                 status, expected, pv_last_error());
    if (expected != PV_OK) {
        assert_memory_equal(before, after, info->params_size);
        assert_non_null(strstr(pv_last_error(), p->name));
        return;
    }
    double back = NAN;
    assert_int_equal(pv_params_get(op, after, info->params_size, p->name, &back), PV_OK);
    if (p->type == PV_PARAM_REAL)
        assert_true(fabs(back - value) <= 1e-6 * fmax(1.0, fabs(value)));
    else
        assert_true(back == value);
    assert_int_equal(pv_params_check(op, after, info->params_size), PV_OK);
}

static void check_parameter(int op, const pv_op_info *info, const pv_param_info *p)
{
    const int integral = p->type != PV_PARAM_REAL;
    assert_true(strlen(p->help) > 0);
    assert_non_null(p->unit);
    assert_true(p->min <= p->default_value && p->default_value <= p->max);
    expect_set(op, info, p, p->default_value, PV_OK);
    if (p->type == PV_PARAM_CHOICE) {
        assert_non_null(p->choices);
        expect_set(op, info, p, p->max + 1, PV_ERR_INVALID);
        expect_set(op, info, p, p->min - 1, PV_ERR_INVALID);
        return;
    }
    if (!(p->flags & PV_PARAM_MIN_EXCLUSIVE))
        expect_set(op, info, p, p->min, PV_OK);
    expect_set(op, info, p, p->min - (integral ? 1.0 : fmax(1e-3, fabs(p->min) * 1e-3)),
               PV_ERR_INVALID);
    if (p->max < 1e15) {
        expect_set(op, info, p, p->max, PV_OK);
        expect_set(op, info, p, p->max + (integral ? 1.0 : fmax(1e-3, p->max * 1e-3)),
                   PV_ERR_INVALID);
    }
    expect_set(op, info, p, NAN, PV_ERR_INVALID);
    expect_set(op, info, p, INFINITY, PV_ERR_INVALID);
    if (integral)
        expect_set(op, info, p, p->default_value + 0.5, PV_ERR_INVALID);
}

static void test_every_parameter(void **state)
{
    (void)state;
    int walked = 0;
    for (int op = 0; op < pv_op_count(); op++) {
        pv_op_info info;
        assert_int_equal(pv_op_get(op, &info), PV_OK);
        for (int k = 0; k < info.param_count; k++) {
            pv_param_info p;
            int found = -1;
            assert_int_equal(pv_op_param(op, k, &p), PV_OK);
            assert_int_equal(pv_op_find_param(op, p.name, &found), PV_OK);
            assert_int_equal(found, k);
            check_parameter(op, &info, &p);
            walked++;
        }
    }
    assert_true(walked >= 70);
}

static void test_text_values(void **state)
{
    (void)state;
    const int sgm = op_number("sgm"), pc = op_number("phasecorr");
    pv_sgm_params p;
    pv_sgm_params_default(&p);
    assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "ndisp", "128"), PV_OK);
    assert_int_equal(p.ndisp, 128);
    assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "median", "on"), PV_OK);
    assert_int_equal(p.median, 1);
    assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "lr_check", "false"), PV_OK);
    assert_int_equal(p.lr_check, 0);
    assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "uniqueness", "0.9"), PV_OK);
    assert_true(p.uniqueness == 0.9f);
    pv_sgm_params before = p;
    static const char *const bad[] = {"", "12abc", "1e400", "nan", "0x", " "};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "ndisp", bad[k]), PV_ERR_INVALID);
        assert_memory_equal(&p, &before, sizeof p);
    }
    assert_int_equal(pv_params_parse(sgm, &p, sizeof p, "median", "maybe"), PV_ERR_INVALID);
    pv_phasecorr_options o;
    pv_phasecorr_options_default(&o);
    assert_int_equal(pv_params_parse(pc, &o, sizeof o, "window", "hann"), PV_OK);
    assert_int_equal(o.window, PV_WINDOW_HANN);
    assert_int_equal(pv_params_parse(pc, &o, sizeof o, "subpixel", "Parabolic"), PV_OK);
    assert_int_equal(o.subpixel, PV_SUBPIXEL_PARABOLIC);
    assert_int_equal(pv_params_parse(pc, &o, sizeof o, "pad", "2"), PV_OK);
    assert_int_equal(o.pad, PV_PAD_LINEAR);
    assert_int_equal(pv_params_parse(pc, &o, sizeof o, "pad", "sideways"), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "one of none|fft|linear"));
}

/* A field outside its declaration is refused by the operation itself, the
 * same way on both backends, naming the field. */
static void test_front_ends_enforce(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image left, right, disparity;
    assert_int_equal(pv_image_alloc(&left, 40, 30, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&right, 40, 30, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&disparity, 40, 30, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&left, 1);
    tu_fill_random(&right, 2);
    pv_sgm_params sgm;
    pv_sgm_params_default(&sgm);
    sgm.ndisp = 16;
    tu_expect_ok(ctx, pv_stereo_sgm(ctx, &left, &right, &sgm, &disparity), "stereo_sgm");
    sgm.uniqueness = 0.0f;
    tu_fill_image(&disparity, 7.0f);
    assert_int_equal(pv_stereo_sgm(ctx, &left, &right, &sgm, &disparity), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "params.uniqueness"));
    assert_true(tu_image_all_equal(&disparity, 7.0f));
    sgm.uniqueness = 0.95f;
    sgm.p1 = -1;
    assert_int_equal(pv_stereo_sgm(ctx, &left, &right, &sgm, &disparity), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "params.p1 -1 is not in 0..65535"));
    pv_sad_params sad;
    pv_sad_params_default(&sad);
    sad.ndisp = 8;
    sad.lr_max_diff = -1.0f;
    assert_int_equal(pv_stereo_sad(ctx, &left, &right, &sad, &disparity), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "params.lr_max_diff"));
    assert_true(tu_image_all_equal(&disparity, 7.0f));
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
}

static void test_bad_input(void **state)
{
    (void)state;
    pv_op_info info;
    pv_param_info p;
    pv_sgm_params sgm;
    int n = 0;
    double v = 0;
    const int op = op_number("sgm");
    assert_int_equal(pv_op_get(-1, &info), PV_ERR_INVALID);
    assert_int_equal(pv_op_get(pv_op_count(), &info), PV_ERR_INVALID);
    assert_int_equal(pv_op_get(0, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_op_find("no-such-op", &n), PV_ERR_INVALID);
    assert_int_equal(pv_op_find(NULL, &n), PV_ERR_INVALID);
    assert_int_equal(pv_op_find("sgm", NULL), PV_ERR_INVALID);
    assert_int_equal(pv_op_param(op, -1, &p), PV_ERR_INVALID);
    assert_int_equal(pv_op_param(op, 1000, &p), PV_ERR_INVALID);
    assert_int_equal(pv_op_param(op, 0, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_op_find_param(op, "no_such_field", &n), PV_ERR_INVALID);
    assert_int_equal(pv_op_find_param(op, NULL, &n), PV_ERR_INVALID);
    assert_int_equal(pv_params_init(op, NULL, sizeof sgm), PV_ERR_INVALID);
    assert_int_equal(pv_params_init(op, &sgm, sizeof sgm - 1), PV_ERR_INVALID);
    assert_int_equal(pv_params_init(-5, &sgm, sizeof sgm), PV_ERR_INVALID);
    pv_sgm_params_default(&sgm);
    pv_sgm_params before = sgm;
    assert_int_equal(pv_params_set(op, &sgm, sizeof sgm, "no_such_field", 1), PV_ERR_INVALID);
    assert_int_equal(pv_params_set(op, &sgm, sizeof sgm, NULL, 1), PV_ERR_INVALID);
    assert_int_equal(pv_params_set(op, &sgm, 3, "ndisp", 32), PV_ERR_INVALID);
    assert_int_equal(pv_params_parse(op, &sgm, sizeof sgm, "ndisp", NULL), PV_ERR_INVALID);
    assert_memory_equal(&sgm, &before, sizeof sgm);
    assert_int_equal(pv_params_get(op, &sgm, sizeof sgm, "ndisp", NULL), PV_ERR_INVALID);
    assert_int_equal(pv_params_get(op, &sgm, sizeof sgm, "nope", &v), PV_ERR_INVALID);
    sgm.paths = -3;
    assert_int_equal(pv_params_check(op, &sgm, sizeof sgm), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "params.paths"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_operations),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_parameter),
        cmocka_unit_test(test_text_values),
        TU_ON_BOTH(test_front_ends_enforce),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests_name("params", tests, tu_group_setup, tu_group_teardown);
}
