/* Evaluation helpers of the flow module, which need no backend: the
 * endpoint error against a known field, the mean absolute divergence of a
 * field, and the largest difference between two fields. */
#include "../core/internal.h"

#include <stdlib.h>

/* Component i of a field: u, v, w. */
static const pv_volume *field_part(const pv_flow_field *field, int i)
{
    return i == 0 ? &field->u : i == 1 ? &field->v : &field->w;
}

static int field_is_valid(const pv_flow_field *f)
{
    return f && pv_volume_is_valid(&f->u) && pv_volume_is_valid(&f->v) &&
           pv_volume_is_valid(&f->w) && pv_volumes_same_size(&f->u, &f->v) &&
           pv_volumes_same_size(&f->u, &f->w);
}

static float at(const pv_volume *v, int x, int y, int z)
{
    return v->data[x + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z];
}

/* The evaluated box: voxels at least `border` from the faces. */
typedef struct box {
    int lo[3], hi[3]; /* inclusive lo, exclusive hi */
} box;

static int make_box(const pv_volume *v, int border, box *b)
{
    const int n[3] = {v->nx, v->ny, v->nz};
    for (int a = 0; a < 3; a++) {
        int edge = a == 2 && n[2] == 1 ? 0 : border;
        b->lo[a] = edge;
        b->hi[a] = n[a] - edge;
        if (b->hi[a] <= b->lo[a])
            return 0;
    }
    return 1;
}

pv_status pv_flow_endpoint_error(const pv_flow_field *estimate, const pv_flow_field *truth,
                                 int border, double *mean, double *max)
{
    const char *op = "pv_flow_endpoint_error";
    if (!field_is_valid(estimate) || !field_is_valid(truth) ||
        !pv_volumes_same_size(&estimate->u, &truth->u))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: estimate and truth are not valid fields of one size", op);
    box b;
    if (border < 0 || !make_box(&truth->u, border, &b))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: border %d leaves no voxel", op, border);
    double sum = 0.0, worst = 0.0;
    size_t count = 0;
    for (int z = b.lo[2]; z < b.hi[2]; z++)
        for (int y = b.lo[1]; y < b.hi[1]; y++)
            for (int x = b.lo[0]; x < b.hi[0]; x++) {
                double du = (double)at(&estimate->u, x, y, z) - at(&truth->u, x, y, z);
                double dv = (double)at(&estimate->v, x, y, z) - at(&truth->v, x, y, z);
                double dw = (double)at(&estimate->w, x, y, z) - at(&truth->w, x, y, z);
                double e = sqrt(du * du + dv * dv + dw * dw);
                sum += e;
                worst = e > worst || isnan(e) ? e : worst;
                count++;
            }
    if (mean)
        *mean = sum / (double)count;
    if (max)
        *max = worst;
    return PV_OK;
}

/* Central difference along one axis, one-sided at the faces, 0 on a flat axis. */
static double derivative(const pv_volume *v, int x, int y, int z, int axis)
{
    int c[3] = {x, y, z};
    const int n[3] = {v->nx, v->ny, v->nz};
    int lo = c[axis] > 0 ? c[axis] - 1 : 0;
    int hi = c[axis] + 1 < n[axis] ? c[axis] + 1 : n[axis] - 1;
    if (hi == lo)
        return 0.0;
    int p[3] = {x, y, z}, q[3] = {x, y, z};
    p[axis] = hi;
    q[axis] = lo;
    return ((double)at(v, p[0], p[1], p[2]) - at(v, q[0], q[1], q[2])) / (hi - lo);
}

pv_status pv_flow_divergence(const pv_flow_field *flow, int border, double *mean_abs)
{
    const char *op = "pv_flow_divergence";
    if (!field_is_valid(flow) || !mean_abs)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: flow is not a valid field or mean_abs is NULL", op);
    box b;
    if (border < 0 || !make_box(&flow->u, border, &b))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: border %d leaves no voxel", op, border);
    double sum = 0.0;
    size_t count = 0;
    for (int z = b.lo[2]; z < b.hi[2]; z++)
        for (int y = b.lo[1]; y < b.hi[1]; y++)
            for (int x = b.lo[0]; x < b.hi[0]; x++) {
                double div = derivative(&flow->u, x, y, z, 0) + derivative(&flow->v, x, y, z, 1) +
                             derivative(&flow->w, x, y, z, 2);
                sum += fabs(div);
                count++;
            }
    *mean_abs = sum / (double)count;
    return PV_OK;
}

pv_status pv_flow_max_difference(const pv_flow_field *a, const pv_flow_field *b, double *max_abs)
{
    if (!field_is_valid(a) || !field_is_valid(b) || !pv_volumes_same_size(&a->u, &b->u) ||
        !max_abs)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "pv_flow_max_difference: a and b are not valid fields of one size");
    double worst = 0.0;
    for (int i = 0; i < 3; i++) {
        const pv_volume *va = field_part(a, i), *vb = field_part(b, i);
        for (int z = 0; z < va->nz; z++)
            for (int y = 0; y < va->ny; y++)
                for (int x = 0; x < va->nx; x++) {
                    double d = fabs((double)at(va, x, y, z) - at(vb, x, y, z));
                    worst = d > worst || isnan(d) ? d : worst;
                }
    }
    *max_abs = worst;
    return PV_OK;
}
