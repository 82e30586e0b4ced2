/* The fold of one pixel's SAD block-matching candidates, shared by the CPU
 * backend (backends/cpu/stereo/stereo.c, compiled as C11) and the OpenCL program
 * (kernels/stereo.cl, which includes this file; build-aux/embed-kernels.sh
 * inlines it into the embedded source).  One text keeps the two backends'
 * rules the same: the winner with ties to the smaller d and, with the full
 * state, the costs beside it (sub-pixel parabola) and the best cost outside
 * winner-1 .. winner+1 (uniqueness test).  Candidates come in increasing d.
 *
 * The includer defines first:
 *   cost_t           the cost type: the CPU's double holds exact u8 sums or
 *                    f32 values; the kernel's is uint or float, as its pixels
 *   COST_NONE        the cost of no candidate (INFINITY, or UINT_MAX)
 *   SAD_FULL_STATE   1: keep the costs beside the winner; 0: the winner alone
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls. */
#ifndef PV_BACKENDS_SAD_FOLD_H
#define PV_BACKENDS_SAD_FOLD_H

typedef struct sad_state {
    cost_t best;   /* smallest cost so far */
    int index;     /* best candidate, -1 for none */
#if SAD_FULL_STATE
    cost_t prev;   /* cost of the previous candidate */
    cost_t minus;  /* cost at best - 1 */
    cost_t plus;   /* cost at best + 1 */
    cost_t below;  /* smallest cost at <= best - 2 */
    cost_t above;  /* smallest cost at >= best + 2 */
    cost_t older;  /* smallest cost at <= current - 2 */
#endif
} sad_state;

static inline cost_t cost_min(cost_t a, cost_t b)
{
    return b < a ? b : a;
}

static inline void state_reset(sad_state *s)
{
    s->best = COST_NONE;
    s->index = -1;
#if SAD_FULL_STATE
    s->prev = s->minus = s->plus = s->below = s->above = s->older = COST_NONE;
#endif
}

static inline void state_add(sad_state *s, cost_t cost, int index)
{
    if (cost < s->best) {
#if SAD_FULL_STATE
        s->below = s->older;
        s->above = COST_NONE;
        s->minus = s->prev;
        s->plus = COST_NONE;
#endif
        s->best = cost;
        s->index = index;
    }
#if SAD_FULL_STATE
    else if (index == s->index + 1)
        s->plus = cost;
    else if (index >= s->index + 2)
        s->above = cost_min(s->above, cost);
    s->older = cost_min(s->older, s->prev);
    s->prev = cost;
#endif
}

#endif
