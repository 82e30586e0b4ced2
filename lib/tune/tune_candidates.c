/* The tuner's candidates: for each tunable family, the configurations its
 * search tries (BP's and SAD's hand-written lists, the other families'
 * axes walked by descend), run through the search's steps (tune_search.c). */
#include "tune_steps.h"

#include <stdio.h>
#include <string.h>


static int group_fits(pv_context *ctx, int wg_x, int wg_y)
{
    return (long long)wg_x * wg_y <= ctx->device.max_work_group_size;
}

/* BP stage 1: per group shape (32 wide, as the paper) and per number of
 * groups sharing the local memory, the split that fills that share after
 * a few register values; plus an all-register split per shape. */
static void bp_candidates(pv_context *ctx, const search_state *s, int ndisp, config_list *list)
{
    static const int heights[] = {1, 2, 4, 8};
    static const int sharing[] = {1, 2, 4, 8};
    const size_t local = (size_t)ctx->device.local_memory;
    const int initial_registers = ndisp < 16 ? ndisp : 16;
    for (size_t h = 0; h < sizeof heights / sizeof heights[0]; h++) {
        if (!group_fits(ctx, 32, heights[h]))
            continue;
        const size_t items = 32 * (size_t)heights[h];
        config c = s->best;
        pv_tune_set_value(s->family, &c, "BP_WG_X", 32);
        pv_tune_set_value(s->family, &c, "BP_WG_Y", heights[h]);
        pv_tune_set_value(s->family, &c, "BP_REG_VALUES", ndisp < 64 ? ndisp : 64);
        pv_tune_set_value(s->family, &c, "BP_LOCAL_VALUES", 0);
        pv_tune_add_config(list, &c, s->family->count);
        for (size_t g = 0; g < sizeof sharing / sizeof sharing[0]; g++) {
            size_t fit = local / ((size_t)sharing[g] * items * sizeof(float));
            int values = (int)(fit < (size_t)(ndisp - initial_registers) ? fit
                                                                         : (size_t)(ndisp - initial_registers));
            if (values <= 0)
                continue;
            pv_tune_set_value(s->family, &c, "BP_REG_VALUES", initial_registers);
            pv_tune_set_value(s->family, &c, "BP_LOCAL_VALUES", values);
            pv_tune_add_config(list, &c, s->family->count);
        }
    }
}

/* Stage 1 is judged on the main workload alone: the message split is
 * about the fine levels of a large image, whose share of the array fast
 * memory can hold, and a candidate's build for the small workload's
 * disparity range is a second build (BP_NDISP is compiled in) that a
 * dozen shapes would pay for.  The later sweeps, a few values each, are
 * judged on both: the small-level size only matters where the coarse
 * levels are a large share of the time (a Tsukuba-sized image: 2048
 * against 0 cost 1.32x there on an H200, while the main workload moved by
 * a few per cent either way), and the schedule and register values
 * depend on the disparity range, which the two workloads span. */
void pv_tune_search_bp(pv_context *ctx, search_state *s)
{
    config_list list = {.count = 0};
    if (!s->only) {
        bp_candidates(ctx, s, pv_tune_workload_ndisp(s->w[0]), &list);
        pv_tune_try_configs(ctx, s, &list, SCOPE_MAIN);
    }
    /* The group height again, on both: the shapes stage 1 preferred by a
     * few per cent on the large job can cost far more on the small one
     * (8 rows against 1 cost 1.18x on a Tsukuba-sized job on an H200),
     * and three heights are three builds, not a dozen. */
    static const int heights[] = {1, 2, 4, 8};
    pv_tune_sweep(ctx, s, "BP_WG_Y", heights, 4, SCOPE_ALL);
    static const int small[] = {0, 512, 2048, 8192};
    pv_tune_sweep(ctx, s, "BP_SMALL_LEVEL_PIXELS", small, 4, SCOPE_ALL);
    static const int fused[] = {0, 1}, dir_items[] = {1, 4};
    pv_tune_sweep(ctx, s, "BP_FUSED_PASSES", fused, 2, SCOPE_ALL);
    pv_tune_sweep(ctx, s, "BP_DIR_ITEMS", dir_items, 2, SCOPE_ALL);
    static const int registers[] = {0, 8, 16, 32, 64};
    pv_tune_sweep(ctx, s, "BP_REG_VALUES", registers, 5, SCOPE_ALL);
}

/* The kept values, searched or the defaults, serve jobs of the workload's
 * ndisp class: a label, not a searched value. */
void pv_tune_label_bp(const search_state *s, config *c)
{
    pv_tune_set_value(s->family, c, "BP_NDISP_CLASS", pv_bp_ndisp_class(pv_tune_workload_ndisp(s->w[0])));
}

/* SAD stage 1: group shapes x columns per item; then strip height and the
 * disparities per exchange pass. */
static void sad_candidates(pv_context *ctx, const search_state *s, config_list *list)
{
    static const int shapes[][2] = {{16, 4}, {32, 2}, {32, 4}, {64, 2}, {32, 8}, {64, 4}};
    static const int columns[] = {2, 4};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (!group_fits(ctx, shapes[i][0], shapes[i][1]))
            continue;
        for (size_t k = 0; k < sizeof columns / sizeof columns[0]; k++) {
            config c = s->best;
            pv_tune_set_value(s->family, &c, "SAD_WG_X", shapes[i][0]);
            pv_tune_set_value(s->family, &c, "SAD_WG_Y", shapes[i][1]);
            pv_tune_set_value(s->family, &c, "SAD_COLS_PER_ITEM", columns[k]);
            pv_tune_add_config(list, &c, s->family->count);
        }
    }
}

void pv_tune_search_sad(pv_context *ctx, search_state *s)
{
    config_list list = {.count = 0};
    if (!s->only) {
        sad_candidates(ctx, s, &list);
        pv_tune_try_configs(ctx, s, &list, SCOPE_ALL);
    }
    static const int rows[] = {2, 4, 8};
    pv_tune_sweep(ctx, s, "SAD_ROWS_PER_ITEM", rows, 3, SCOPE_ALL);
    static const int pass[] = {4, 8, 16};
    pv_tune_sweep(ctx, s, "SAD_DISP_PER_PASS", pass, 3, SCOPE_ALL);
}

/* ------------------------------------------- the other families: axes */

/* One coordinate of the descent: a parameter swept over its values (a
 * list, or the work-group sizes that suit the device), or a work-group
 * shape (two parameters) over the shapes that suit it. */
typedef enum axis_kind { AXIS_VALUES, AXIS_GROUP, AXIS_SHAPE } axis_kind;

typedef struct tune_axis {
    axis_kind kind;
    const char *name;    /* the parameter; a shape's width */
    const char *height;  /* a shape's height */
    int values[4];       /* AXIS_VALUES: 0 ends the list */
} tune_axis;

#define VALUES(name, ...) {AXIS_VALUES, name, NULL, {__VA_ARGS__}}
#define GROUP(name) {AXIS_GROUP, name, NULL, {0}}
#define SHAPE(x, y) {AXIS_SHAPE, x, y, {0}}
#define AXES_END {AXIS_VALUES, NULL, NULL, {0}}

/* A work-group size suits the device when it divides its largest one
 * (so the occupancy steps evenly) and is at least a warp. */
static int group_suits(const pv_context *ctx, long long items)
{
    const long long most = (long long)ctx->device.max_work_group_size;
    return items >= 32 && items <= most && most % items == 0;
}

static void group_configs(pv_context *ctx, const search_state *s, const tune_axis *axis,
                          config_list *list)
{
    static const int sizes[] = {64, 128, 256, 512};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (group_suits(ctx, sizes[i])) {
            config c = s->best;
            pv_tune_set_value(s->family, &c, axis->name, sizes[i]);
            pv_tune_add_config(list, &c, s->family->count);
        }
}

static void shape_configs(pv_context *ctx, const search_state *s, const tune_axis *axis,
                          config_list *list)
{
    static const int shapes[][2] = {{16, 8}, {32, 4}, {32, 8}, {64, 4}, {16, 16}, {128, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (group_suits(ctx, (long long)shapes[i][0] * shapes[i][1])) {
            config c = s->best;
            pv_tune_set_value(s->family, &c, axis->name, shapes[i][0]);
            pv_tune_set_value(s->family, &c, axis->height, shapes[i][1]);
            pv_tune_add_config(list, &c, s->family->count);
        }
}

static void value_configs(const search_state *s, const tune_axis *axis, config_list *list)
{
    for (int i = 0; i < 4 && axis->values[i]; i++) {
        config c = s->best;
        pv_tune_set_value(s->family, &c, axis->name, axis->values[i] == -1 ? 0 : axis->values[i]);
        pv_tune_add_config(list, &c, s->family->count);
    }
}

/* Coordinate descent: each axis in turn from the best so far, judged on
 * every workload of the family. */
static void descend(pv_context *ctx, search_state *s, const tune_axis *axes)
{
    for (const tune_axis *axis = axes; axis->name; axis++) {
        if (!pv_tune_wanted(s, axis->name))
            continue;
        config_list list = {.count = 0};
        if (axis->kind == AXIS_GROUP)
            group_configs(ctx, s, axis, &list);
        else if (axis->kind == AXIS_SHAPE)
            shape_configs(ctx, s, axis, &list);
        else
            value_configs(s, axis, &list);
        pv_tune_try_configs(ctx, s, &list, SCOPE_ALL);
    }
}

/* The axes of each family, most influential first (the value -1 stands
 * for 0, which ends a list). */
static const tune_axis filter_axes[] = {
    SHAPE("FILTER_WG_X", "FILTER_WG_Y"), VALUES("FILTER_ROW_STEPS", 2, 4, 8),
    VALUES("FILTER_COL_STEPS", 2, 4, 8), SHAPE("FILTER_GRAD_WG_X", "FILTER_GRAD_WG_Y"), AXES_END};

static const tune_axis register_axes[] = {
    GROUP("PC_WG"), SHAPE("PC_PAD_WG_X", "PC_PAD_WG_Y"), VALUES("PC_REDUCE_ATOMIC", -1, 1),
    GROUP("PC_REDUCE_WG"), VALUES("PC_REDUCE_GROUPS", 256, 1024, 4096), VALUES("PC_DFT_WG", 32, 64, 128),
    GROUP("NCC_SCAN_WG"), VALUES("NCC_COL_WG", 32, 64, 128), SHAPE("NCC_WG_X", "NCC_WG_Y"), AXES_END};

static const tune_axis flow_axes[] = {
    SHAPE("FLOW_WG_X", "FLOW_WG_Y"), SHAPE("FLOW_SMOOTH_WG_X", "FLOW_SMOOTH_WG_Y"),
    VALUES("FLOW_ROW_STEPS", 2, 4, 8), VALUES("FLOW_COL_STEPS", 2, 4, 8), GROUP("FLOW_REDUCE_WG"),
    VALUES("FLOW_REDUCE_GROUPS", 64, 256, 1024), AXES_END};

static const tune_axis features_axes[] = {
    SHAPE("SIFT_WG_X", "SIFT_WG_Y"), VALUES("SIFT_ROW_STEPS", 2, 4, 8),
    VALUES("SIFT_COL_STEPS", 2, 4, 8), GROUP("SIFT_EXT_WG"), VALUES("SIFT_EXT_RUN", 8, 16, 32),
    GROUP("SIFT_KP_WG"), VALUES("SIFT_ORI_WG", 16, 32, 64), VALUES("SIFT_ORI_GROUPS", 16, 64, 256),
    VALUES("SIFT_DESC_SPLIT", 4, 8, 16), GROUP("SIFT_MATCH_WG"), VALUES("SIFT_MATCH_TILE", 16, 32, 64),
    AXES_END};

static const tune_axis octreg_axes[] = {
    GROUP("OCT_WG"), SHAPE("OCT_PAD_WG_X", "OCT_PAD_WG_Y"), GROUP("OCT_STATS_WG"),
    GROUP("OCT_REDUCE_WG"), VALUES("OCT_REDUCE_GROUPS", 512, 2048, 8192), AXES_END};

static const tune_axis geometry_axes[] = {GROUP("GEOM_WG"), AXES_END};
static const tune_axis sgm_axes[] = {VALUES("SGM_DPI", 4, 8, 16), VALUES("SGM_LINES", 2, 4, 8, 16),
                                     VALUES("SGM_WIN_ITEMS", 64, 128, 256, 512), AXES_END};

#define AXES_SEARCH(family)                                                                    \
    void pv_tune_search_##family(pv_context *ctx, search_state *s)                              \
    {                                                                                          \
        descend(ctx, s, family##_axes);                                                        \
    }
AXES_SEARCH(filter)
AXES_SEARCH(register)
AXES_SEARCH(flow)
AXES_SEARCH(features)
AXES_SEARCH(octreg)
AXES_SEARCH(geometry)
AXES_SEARCH(sgm)
