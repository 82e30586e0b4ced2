/* One message of belief propagation (stereo_bp.cl): the paper's eight
 * steps, out = the normalised truncated-linear distance transform of
 * data + a + b + c, the same float operations in the same order as the
 * CPU oracle's send() whatever the schedule below.
 *
 * Message storage (BP_HALF_MESSAGES, from pv_bp_params.message_precision):
 * f32, or IEEE half through vload_half / vstore_half_rte (core OpenCL, no
 * cl_khr_fp16): every sum and pass stays in float, only the stored message
 * is rounded to nearest-even half, as the CPU oracle rounds it.
 *
 * The message array being computed is split (the paper's hybrid): the
 * first NREG values in registers (loops fully unrolled), the next NLOC in
 * local memory (lm[d * lstride + lid]), the last NPRIV in a private array
 * indexed in a loop (spilled to per-thread device memory).  For a wide
 * range most values spill, and every pass over the array is a round trip
 * through that memory: BP_FUSED_PASSES = 1 folds the forward pass into the
 * gathering of the values and the truncation into the backward pass, five
 * passes over the array instead of eight, with every value computed as
 * before (the truncation only ever replaces a value by cap, which the
 * backward chain must not see, so the chain carries the untruncated one). */

#if BP_HALF_MESSAGES
typedef half msg_t;

float load_msg(__global const half *p, int i)
{
    return vload_half(i, p);
}

void store_msg(__global half *p, int i, float v)
{
    vstore_half_rte(v, i, p);
}
#else
typedef float msg_t;

float load_msg(__global const float *p, int i)
{
    return p[i];
}

void store_msg(__global float *p, int i, float v)
{
    p[i] = v;
}
#endif

/* One step of a distance-transform pass: min(m, prev + 1). */
float relax(float m, float prev)
{
    const float v = prev + 1.0f;
    return v < m ? v : m;
}

/* The values data + a + b + c in ascending order of disparity, their
 * minimum in *minimum; with `forward`, the forward pass applied on the way. */
void gather(__global const float *data, __global const msg_t *a, __global const msg_t *b,
            __global const msg_t *c, int plane, int in_plane, int forward, float *mr,
            __local float *lm, float *mp, int lid, int lstride, float *minimum)
{
    float low = INFINITY, prev = INFINITY;
#pragma unroll
    for (int d = 0; d < NREG; d++) {
        const int k = d * in_plane;
        const float v = data[d * plane] + load_msg(a, k) + load_msg(b, k) + load_msg(c, k);
        low = v < low ? v : low;
        mr[d] = forward ? relax(v, prev) : v;
        prev = mr[d];
    }
    for (int d = 0; d < NLOC; d++) {
        const int k = (NREG + d) * in_plane;
        const float v = data[(NREG + d) * plane] + load_msg(a, k) + load_msg(b, k) + load_msg(c, k);
        low = v < low ? v : low;
        lm[d * lstride + lid] = forward ? relax(v, prev) : v;
        prev = lm[d * lstride + lid];
    }
#pragma unroll 1
    for (int d = 0; d < NPRIV; d++) {
        const int k = (NREG + NLOC + d) * in_plane;
        const float v = data[(NREG + NLOC + d) * plane] + load_msg(a, k) + load_msg(b, k) +
                        load_msg(c, k);
        low = v < low ? v : low;
        mp[d] = forward ? relax(v, prev) : v;
        prev = mp[d];
    }
    *minimum = low;
}

/* Forward pass: m[d] = min(m[d], m[d - 1] + 1). */
void forward_pass(float *mr, __local float *lm, float *mp, int lid, int lstride)
{
    float prev = INFINITY;
#pragma unroll
    for (int d = 0; d < NREG; d++)
        prev = mr[d] = relax(mr[d], prev);
    for (int d = 0; d < NLOC; d++)
        prev = lm[d * lstride + lid] = relax(lm[d * lstride + lid], prev);
#pragma unroll 1
    for (int d = 0; d < NPRIV; d++)
        prev = mp[d] = relax(mp[d], prev);
}

/* Backward pass: m[d] = min(m[d], m[d + 1] + 1), each value stored capped
 * at cap (INFINITY: no cap) while the chain goes on with the uncapped one. */
void backward_pass(float cap, float *mr, __local float *lm, float *mp, int lid, int lstride)
{
    float prev = INFINITY;
#pragma unroll 1
    for (int d = NPRIV - 1; d >= 0; d--) {
        prev = relax(mp[d], prev);
        mp[d] = cap < prev ? cap : prev;
    }
    for (int d = NLOC - 1; d >= 0; d--) {
        prev = relax(lm[d * lstride + lid], prev);
        lm[d * lstride + lid] = cap < prev ? cap : prev;
    }
#pragma unroll
    for (int d = NREG - 1; d >= 0; d--) {
        prev = relax(mr[d], prev);
        mr[d] = cap < prev ? cap : prev;
    }
}

/* Truncation at cap (INFINITY: none) and the ascending sum of the result. */
float truncate_sum(float cap, float *mr, __local float *lm, float *mp, int lid, int lstride)
{
    float sum = 0.0f;
#pragma unroll
    for (int d = 0; d < NREG; d++) {
        if (cap < mr[d])
            mr[d] = cap;
        sum += mr[d];
    }
    for (int d = 0; d < NLOC; d++) {
        if (cap < lm[d * lstride + lid])
            lm[d * lstride + lid] = cap;
        sum += lm[d * lstride + lid];
    }
#pragma unroll 1
    for (int d = 0; d < NPRIV; d++) {
        if (cap < mp[d])
            mp[d] = cap;
        sum += mp[d];
    }
    return sum;
}

/* out[d] = m[d] - mean, stored at stride plane. */
void emit(__global msg_t *out, int plane, float mean, const float *mr, __local const float *lm,
          const float *mp, int lid, int lstride)
{
#pragma unroll
    for (int d = 0; d < NREG; d++)
        store_msg(out, d * plane, mr[d] - mean);
    for (int d = 0; d < NLOC; d++)
        store_msg(out, (NREG + d) * plane, lm[d * lstride + lid] - mean);
#pragma unroll 1
    for (int d = 0; d < NPRIV; d++)
        store_msg(out, (NREG + NLOC + d) * plane, mp[d] - mean);
}

/* data and out with stride plane, the incoming messages a, b, c with
 * stride in_plane. */
void send_message(__global const float *data, __global const msg_t *a, __global const msg_t *b,
                  __global const msg_t *c, __global msg_t *out, int plane, int in_plane,
                  float disc_max, float inv_n, __local float *lm, int lid, int lstride)
{
    float mr[NREG > 0 ? NREG : 1];
    float mp[NPRIV > 0 ? NPRIV : 1];
    float minimum, sum;
    gather(data, a, b, c, plane, in_plane, BP_FUSED_PASSES, mr, lm, mp, lid, lstride, &minimum);
    const float cap = minimum + disc_max;
    if (BP_FUSED_PASSES) {
        backward_pass(cap, mr, lm, mp, lid, lstride);
        sum = truncate_sum(INFINITY, mr, lm, mp, lid, lstride);
    } else {
        forward_pass(mr, lm, mp, lid, lstride);
        backward_pass(INFINITY, mr, lm, mp, lid, lstride);
        sum = truncate_sum(cap, mr, lm, mp, lid, lstride);
    }
    emit(out, plane, sum * inv_n, mr, lm, mp, lid, lstride);
}
