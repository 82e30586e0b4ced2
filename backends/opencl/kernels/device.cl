/* parvis device probes: the compute-peak kernels of
 * pv_context_compute_peak (backends/opencl/device.c).
 *
 * Each work item runs 8 independent dependency chains of `steps` steps, so
 * that the device can issue from several chains while one waits on its
 * last result; a and b are kernel arguments so the compiler can fold no
 * step away, and each item writes its chains' sum so none is dead.
 * peak_float: x = mad(x, a, b), 2 FLOPs a step (mad lets the device use
 * its fused multiply-add where it has one).  peak_int: x = (x + a) ^ b,
 * 2 integer operations a step (the exclusive or keeps the chain from
 * collapsing into one multiplication). */

#define PEAK_CHAINS 8

__kernel void peak_float(__global float *out, float a, float b, int steps)
{
    float seed = (float)get_global_id(0) * 1e-7f;
    float x0 = seed, x1 = seed + 0.1f, x2 = seed + 0.2f, x3 = seed + 0.3f;
    float x4 = seed + 0.4f, x5 = seed + 0.5f, x6 = seed + 0.6f, x7 = seed + 0.7f;
    for (int s = 0; s < steps; s++) {
        x0 = mad(x0, a, b);
        x1 = mad(x1, a, b);
        x2 = mad(x2, a, b);
        x3 = mad(x3, a, b);
        x4 = mad(x4, a, b);
        x5 = mad(x5, a, b);
        x6 = mad(x6, a, b);
        x7 = mad(x7, a, b);
    }
    out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

__kernel void peak_int(__global uint *out, uint a, uint b, int steps)
{
    uint seed = (uint)get_global_id(0);
    uint x0 = seed, x1 = seed + 1u, x2 = seed + 2u, x3 = seed + 3u;
    uint x4 = seed + 4u, x5 = seed + 5u, x6 = seed + 6u, x7 = seed + 7u;
    for (int s = 0; s < steps; s++) {
        x0 = (x0 + a) ^ b;
        x1 = (x1 + a) ^ b;
        x2 = (x2 + a) ^ b;
        x3 = (x3 + a) ^ b;
        x4 = (x4 + a) ^ b;
        x5 = (x5 + a) ^ b;
        x6 = (x6 + a) ^ b;
        x7 = (x7 + a) ^ b;
    }
    out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
