/* Volume uploads of either sample type into float device buffers.
 *
 * An F32 volume goes through runtime_transfer.c as it is.  A U16 volume
 * (OCT, medical and depth data) is uploaded as it is stored, 2 bytes a
 * voxel, into a staging buffer kept on the context, and the kernel
 * u16_to_f32 (kernels/convert.cl) writes the floats into the operation's
 * buffer: half the bytes cross the bus, and the values are those the host
 * would have made (every u16 is a float exactly). */
#include "runtime_state.h"

/* Work-items a group for the conversion; the launch rounds the grid up and
 * the kernel skips the items past the end. */
#define CONVERT_GROUP 256

static pv_status convert_u16(pv_context *ctx, cl_mem staged, cl_mem buffer, size_t offset,
                             size_t count)
{
    cl_kernel kernel;
    pv_status status = pv_cl_kernel(ctx, "convert", NULL, "u16_to_f32", &kernel);
    if (status != PV_OK)
        return status;
    cl_ulong at = offset, n = count;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(staged), PV_CL_ARG(buffer), PV_CL_ARG(at),
                                     PV_CL_ARG(n)};
    const size_t global[1] = {count}, local[1] = {CONVERT_GROUP};
    return pv_cl_launch_args(ctx, kernel, args, PV_CL_ARG_COUNT(args), 1, global, local);
}

static pv_status write_u16(pv_context *ctx, cl_mem buffer, size_t offset,
                           const pv_volume *volume)
{
    const size_t count = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz;
    cl_mem staged;
    pv_status status = pv_cl_scratch(ctx, "volume.u16", count * sizeof(cl_ushort), &staged);
    if (status == PV_OK)
        status = pv_cl_write_volume_samples(ctx, staged, volume);
    if (status == PV_OK)
        status = convert_u16(ctx, staged, buffer, offset, count);
    return status;
}

pv_status pv_cl_write_volume_at(pv_context *ctx, cl_mem buffer, size_t offset,
                                const pv_volume *volume)
{
    if (volume->type == PV_VOLUME_U16)
        return write_u16(ctx, buffer, offset, volume);
    if (offset == 0)
        return pv_cl_write_volume_samples(ctx, buffer, volume);
    /* only a caller's buffer (a device-buffer call's mover in a batch
     * slot) goes elsewhere than the start: copied on the device */
    return pv_cl_write_bound_volume_at(ctx, buffer, offset * sizeof(float), volume);
}

pv_status pv_cl_write_volume(pv_context *ctx, cl_mem buffer, const pv_volume *volume)
{
    return pv_cl_write_volume_at(ctx, buffer, 0, volume);
}

pv_status pv_cl_upload_volume(pv_context *ctx, const pv_volume *volume, cl_mem *buffer)
{
    if (volume->type != PV_VOLUME_U16)
        return pv_cl_upload_volume_samples(ctx, volume, buffer);
    const size_t bytes = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz *
                         sizeof(float);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, buffer);
    if (status != PV_OK)
        return status;
    status = write_u16(ctx, *buffer, 0, volume);
    if (status != PV_OK)
        pv_cl_release(buffer);
    return status;
}
