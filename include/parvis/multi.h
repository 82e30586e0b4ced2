/** @file
 * parvis multi: operations over independent items spread across several
 * OpenCL devices.
 *
 * A device group holds one context per device.  A group operation hands
 * its items (the target volumes of an OCT sequence, the frame pairs of a
 * flow sequence, the tiles of a BP run) to one host thread per device, one
 * item at a time, so a faster device takes more items.  Each device builds
 * its own plan (reference spectra, flow buffers) before its first item.
 * Results are identical to running the items one by one on one context of
 * the same kind: which device ran an item changes nothing but the time.
 *
 * A group, like a context, serves one calling thread at a time.  Its
 * contexts stay usable on their own between group calls (pv_tune_set,
 * pv_context_set_crosscheck, or any single-device call).
 *
 * Errors: when an item fails, the devices finish the items they hold and
 * take no more; the call returns the first failure's status, and
 * pv_last_error() names the device, the item and the library's message.
 * Arguments are checked before any device starts (PV_ERR_INVALID changes no
 * output). */
#ifndef PARVIS_MULTI_H
#define PARVIS_MULTI_H

#include "parvis/core.h"
#include "parvis/flow.h"
#include "parvis/octreg.h"
#include "parvis/stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most devices one group holds. */
#define PV_DEVICE_GROUP_MAX 64

/** pv_device_group_last_timing's index for the whole call. */
#define PV_DEVICE_GROUP_WHOLE (-1)

/** A device group: one context per device (opaque). */
typedef struct pv_device_group pv_device_group;

/** Create a group: one context per entry of device_indices (indices as
 * pv_device_list numbers them; an index may repeat, which gives one device
 * several queues).  base (may be NULL: defaults) supplies the backend,
 * flags and CPU threads of every context.
 *
 * device_indices NULL or count 0 means every OpenCL device of the platform
 * of the device a context made from base would run on (AUTO and OPENCL:
 * the first GPU's platform, else the first device's), in index order.  When
 * that choice is the CPU backend (PV_BACKEND_CPU, AUTO without an OpenCL
 * GPU, PARVIS_BACKEND=cpu), the group is one CPU context: the CPU backend
 * already uses every core.  PARVIS_DEVICE pins contexts to one device, so
 * under it the automatic group is that device alone.
 *
 * Errors: out NULL, count < 0 or > PV_DEVICE_GROUP_MAX, device_indices NULL
 * with count > 0, an index that names no OpenCL device, or indices with a
 * PV_BACKEND_CPU base: PV_ERR_INVALID.  Context creation errors pass
 * through.  On failure *out is NULL and pv_last_error() says why.
 * @param out receives the group
 * @param base the contexts' options, or NULL (defaults)
 * @param device_indices the devices' indices, or NULL
 * @param count entries of device_indices, or 0
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_device_group_create(pv_device_group **out, const pv_context_options *base,
                                        const int *device_indices, int count);
/** Destroy a group and its contexts.
 * @param group the group, or NULL */
PV_API void pv_device_group_destroy(pv_device_group *group);

/** Devices (contexts) in the group; 0 for NULL.
 * @param group the device group
 * @return the number of members */
PV_API int pv_device_group_size(const pv_device_group *group);

/** The group's context of member `index` (0 .. size - 1), or NULL.  Owned by
 * the group: do not destroy it.
 * @param group the device group
 * @param index the member
 * @return the member's context, or NULL */
PV_API pv_context *pv_device_group_context(pv_device_group *group, int index);

/** Timing of the last group call.  For member `index`: total_ms is the wall
 * time of its thread (plan set-up included), kernel_ms / upload_ms /
 * download_ms the sums over the calls it made.  For PV_DEVICE_GROUP_WHOLE:
 * total_ms is the call's wall time, the others are summed over members.
 * @param group the device group
 * @param index the member, or PV_DEVICE_GROUP_WHOLE
 * @param timing receives the timing
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_device_group_last_timing(const pv_device_group *group, int index,
                                             pv_timing *timing);

/** Items member `index` ran in the last group call (-1 for a bad index).
 * @param group the device group
 * @param index the member
 * @return the item count, or -1 */
PV_API int pv_device_group_last_items(const pv_device_group *group, int index);

/** Register `count` target volumes against one reference: each device makes
 * a pv_octreg_plan from reference and options (NULL: defaults), then
 * registers the targets it takes.  shifts: count * B-scans entries,
 * volume-major (target i's at shifts + i * reference->nz); infos: count
 * entries, or NULL.  Targets must have the reference's size.  Equal, target
 * by target, to pv_octreg_register on one context.  Outputs are written only
 * when every target succeeded.
 * @param group the device group
 * @param reference the reference volume
 * @param targets count target volumes
 * @param count the number of targets
 * @param options the options, or NULL (defaults)
 * @param shifts receives count * B-scans shifts
 * @param infos receives count entries, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_register_sequence(pv_device_group *group, const pv_volume *reference,
                                             const pv_volume *targets, int count,
                                             const pv_octreg_options *options,
                                             pv_octreg_shift *shifts, pv_octreg_info *infos);

/** Flow between consecutive frames: flows[i] from frames[i] (fixed) to
 * frames[i + 1] (moving), i < count - 1; count >= 2, frames of one size,
 * flows allocated at that size and sharing no memory with the frames or
 * with each other.  Each device makes its own pv_flow_plan from params
 * (NULL: defaults).  Equal, pair by pair, to pv_flow_plan_run on one
 * context.  A run that fails on a frame (NaN / Inf voxels) leaves the
 * fields of pairs already finished written and the others untouched.
 * @param group the device group
 * @param frames count frames
 * @param count the number of frames (>= 2)
 * @param params the parameters, or NULL (defaults)
 * @param flows receives count - 1 fields
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow3d_sequence(pv_device_group *group, const pv_volume *frames, int count,
                                    const pv_flow_params *params, pv_flow_field *flows);

/** Belief propagation with the image's tiles (see pv_bp_params) spread over
 * the devices.  When params set no tile size, the image is cut into one
 * band of rows per device (tile_height = ceil(height / devices)), further
 * split as the smallest device's memory requires.  The result equals
 * pv_stereo_bp on one context with the same tile sizes.  Arguments as for
 * pv_stereo_bp; disparity is written only when every tile succeeded.
 * Cross-check mode (on member 0's context) compares the assembled map with
 * the CPU backend's run of the same tiles.
 * @param group the device group
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_bp_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                                    const pv_bp_params *params, pv_image *disparity);

/** Rows of context a band of pv_stereo_sgm_group reads above and below the
 * rows it writes. */
#define PV_SGM_GROUP_OVERLAP 64

/** Semi-global matching with the image cut into one band of rows per device
 * (fewer when the image has fewer rows), each band run by pv_stereo_sgm on
 * its device with PV_SGM_GROUP_OVERLAP rows of the image above and below
 * it, its own rows kept.  Arguments as for pv_stereo_sgm; disparity is
 * written only when every band succeeded.  A group of one device gives
 * pv_stereo_sgm's result exactly.
 *
 * Tolerance against one context: SGM's vertical and diagonal paths cross
 * the cuts, and a band starts them at its padded edge, so rows near a cut
 * may differ.  With the overlap, integer disparities (subpixel off) are
 * identical to one context's on >= 99% of the pixels of the image (tested
 * on the tsukuba pair with 2 bands, tests/test_multi.c; measured there:
 * 99.993%, 8 pixels of 110592).  Cross-check
 * mode is each band's own (pv_stereo_sgm on each member's context).
 * @param group the device group
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sgm_group(pv_device_group *group, const pv_image *left,
                                     const pv_image *right, const pv_sgm_params *params,
                                     pv_image *disparity);

#ifdef __cplusplus
}
#endif

#endif
