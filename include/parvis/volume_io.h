/* parvis volume I/O: raw little-endian float32 volumes and NIfTI-1.
 *
 * Raw files hold nx * ny * nz float32 values, x fastest, then y, then z,
 * little-endian, nothing else; the size comes from the caller.  NIfTI-1
 * (.nii, .nii.gz, .hdr/.img) goes through niftilib when the library was
 * configured with it (pv_volume_io_has_nifti()); otherwise those calls
 * return PV_ERR_UNSUPPORTED.  Errors are reported through pv_last_error(). */
#ifndef PARVIS_VOLUME_IO_H
#define PARVIS_VOLUME_IO_H

#include "parvis/core.h"
#include "parvis/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a raw volume of exactly nx * ny * nz values into a newly allocated
 * dense volume (free with pv_volume_free).  A file of any other length is
 * PV_ERR_FORMAT. */
PV_API pv_status pv_volume_read_raw(const char *path, int nx, int ny, int nz, pv_volume *out);
PV_API pv_status pv_volume_write_raw(const char *path, const pv_volume *volume);

/* 1 when NIfTI-1 support was built in. */
PV_API int pv_volume_io_has_nifti(void);

/* A scalar NIfTI-1 volume of any numeric datatype, converted to float with
 * scl_slope / scl_inter applied; 2D files give nz = 1.  Only the first
 * volume of a 4D file is read. */
PV_API pv_status pv_volume_read_nifti(const char *path, pv_volume *out);
/* Write a float32 NIfTI-1 volume with unit voxel size. */
PV_API pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume);
/* Write a flow field as a NIfTI-1 vector field: dim[5] = 3 with intent
 * NIFTI_INTENT_VECTOR, components u, v, w in voxels. */
PV_API pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow);

#ifdef __cplusplus
}
#endif

#endif
