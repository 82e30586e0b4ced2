/* parvis SIFT chain kernels (included by features.cl): the device-resident
 * matching of pv_sift_match_images and pv_sift_track_next.
 *
 * sift_chain_copy keeps a frame's keypoint records and descriptors for the
 * next match; sift_chain_compact turns the nearest-neighbour table of the
 * kept frame against the new one into the list of candidate matches (the
 * ratio test, the optional mutual check), in increasing query order, with
 * both keypoints' positions, so that only that list comes back. */

/* dst[i] = src[from + i] for i < count (a frame's words into the kept
 * buffers; from: where an image of a batch set starts). */
__kernel void sift_chain_copy(__global const float *src, ulong from, __global float *dst,
                              int count)
{
    const int i = get_global_id(0);
    if (i < count)
        dst[i] = src[from + (size_t)i];
}

/* sift_nearest with the train count read on the device: counters[1] of
 * the detection just queued (its keypoint total), at most capacity (a
 * total beyond the lists' room counts keypoints that were not written;
 * the host then detects again), so the match is queued behind the
 * detection without a wait for its count. */
__kernel __attribute__((reqd_work_group_size(SIFT_MATCH_WG, 1, 1)))
void sift_chain_nearest(__global const float4 *query, int nq, __global const float4 *train,
                        __global const uint *counters, uint capacity, int per_chunk,
                        __global int *best, __global float *best_d2,
                        __global float *second_d2)
{
    __local float4 tile[SIFT_MATCH_TILE * DESC_VEC];
    const int nt = (int)min(counters[1], capacity);
    nearest_of_chunk(query, nq, train, nt, per_chunk, best, best_d2, second_d2, tile);
}

/* Words of a pv_sift_keypoint record (x, y first) and of a candidate
 * (pv_sift_chain_candidate: query, train, d1, d2, x1, y1, x2, y2). */
#define CHAIN_RECORD_WORDS 7
#define CHAIN_CANDIDATE_WORDS 8
#define CHAIN_WG 256

/* One work group walks the queries CHAIN_WG at a time; a scan in local
 * memory gives each survivor its place, so the list comes out in query
 * order, as the host's loop makes it.  fwd = [best | d1 | d2] of the kept
 * frame's rows (nq) against the new frame's; back: the same the other way
 * (read only when mutual).  ratio2: the squared ratio, loosened by the
 * host (it keeps a superset and decides exactly); negative: no ratio
 * test.  *total receives the candidates' count. */
__kernel __attribute__((reqd_work_group_size(CHAIN_WG, 1, 1)))
void sift_chain_compact(__global const int *fwd, int nq, __global const int *back, int mutual,
                        float ratio2, __global const float *records1,
                        __global const float *records2, __global int *out, __global int *total)
{
    __local int scan[CHAIN_WG];
    const int lid = get_local_id(0);
    int running = 0;
    for (int base = 0; base < nq; base += CHAIN_WG) {
        const int i = base + lid;
        int keep = 0, j = -1;
        float d1 = 0.0f, d2 = 0.0f;
        if (i < nq) {
            j = fwd[i];
            d1 = as_float(fwd[nq + i]);
            d2 = as_float(fwd[2 * nq + i]);
            keep = j >= 0 && (ratio2 < 0.0f || d1 < ratio2 * d2) && (!mutual || back[j] == i);
        }
        scan[lid] = keep;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int offset = 1; offset < CHAIN_WG; offset <<= 1) {
            const int add = lid >= offset ? scan[lid - offset] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (keep) {
            __global int *c = out + CHAIN_CANDIDATE_WORDS * (running + scan[lid] - 1);
            c[0] = i;
            c[1] = j;
            c[2] = as_int(d1);
            c[3] = as_int(d2);
            c[4] = as_int(records1[CHAIN_RECORD_WORDS * i]);
            c[5] = as_int(records1[CHAIN_RECORD_WORDS * i + 1]);
            c[6] = as_int(records2[CHAIN_RECORD_WORDS * j]);
            c[7] = as_int(records2[CHAIN_RECORD_WORDS * j + 1]);
        }
        running += scan[CHAIN_WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        *total = running;
}
