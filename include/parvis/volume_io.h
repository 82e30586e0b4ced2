/** @file
 * parvis volume I/O: raw little-endian float32 or uint16 volumes, NIfTI-1,
 * and multi-page TIFF for reading (when built with libtiff).
 *
 * Raw files hold nx * ny * nz float32 (or, pv_volume_read_raw_typed,
 * uint16) values, x fastest, then y, then z, little-endian, nothing else;
 * the size comes from the caller.
 *
 * 16-bit data (OCT, medical, depth cameras): pv_volume_read_raw,
 * pv_volume_read_nifti and pv_volume_read_tiff convert every file to float
 * (F32 volumes, 4 bytes a voxel).  pv_volume_read_raw_typed with
 * PV_VOLUME_U16, pv_volume_read_nifti_native and
 * pv_volume_read_tiff_native keep unsigned 16-bit samples as a U16 volume
 * (2 bytes a voxel), which OCT registration, 3D phase correlation and the
 * 3D flow take as they are (the OpenCL backend then uploads 16 bits and
 * converts on the device; docs/volumes.md).  NIfTI-1
 * (.nii, .nii.gz, .hdr/.img pairs, ANALYZE 7.5 pairs for reading) is
 * parsed by parvis itself and needs only zlib at build time
 * (pv_volume_io_has_nifti(); without it those calls return
 * PV_ERR_UNSUPPORTED).  Errors are reported through pv_last_error(); the
 * library never prints.
 *
 * Hostile files: every header field that decides an allocation is checked
 * against the bytes the file holds before anything is allocated (see
 * docs/hardening.md); a short or corrupt file is PV_ERR_FORMAT, never
 * zeros. */
#ifndef PARVIS_VOLUME_IO_H
#define PARVIS_VOLUME_IO_H

#include "parvis/core.h"
#include "parvis/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read a raw volume of exactly nx * ny * nz values into a newly allocated
 * dense volume (free with pv_volume_free).  A file of any other length is
 * PV_ERR_FORMAT.
 * @param path the file's path
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_raw(const char *path, int nx, int ny, int nz, pv_volume *out);
/** Read a raw volume of nx * ny * nz little-endian samples of `type`
 * (PV_VOLUME_F32: float32, as pv_volume_read_raw; PV_VOLUME_U16: uint16,
 * kept as a U16 volume).  A file of any other length is PV_ERR_FORMAT, an
 * unknown type PV_ERR_INVALID; *out is untouched on error.  Memory: the
 * output volume and a 4 KiB buffer.
 * @param path the file's path
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @param type the samples' type in the file, and the volume's
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_raw_typed(const char *path, int nx, int ny, int nz,
                                          pv_volume_type type, pv_volume *out);
/** Write a volume as raw little-endian samples of its own type (float32
 * for F32, uint16 for U16), x fastest.
 * @param path the file's path
 * @param volume the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_write_raw(const char *path, const pv_volume *volume);

/** 1 when NIfTI-1 support was built in.
 * @return 1 or 0 */
PV_API int pv_volume_io_has_nifti(void);

/** A scalar NIfTI-1 volume of a real datatype (u)int8/16/32/64, float32 or
 * float64, either byte order, converted to float with scl_slope /
 * scl_inter applied (slope 0: none); 2D files give nz = 1.  Only the first
 * volume of a 4D file (the first component of a vector field) is decoded.
 * The header's dims, datatype/bitpix and vox_offset must describe data
 * that the file holds (all of it for an uncompressed file; for .gz at most
 * 1032 times the compressed size, and the stream must deliver the part
 * read): otherwise PV_ERR_FORMAT with a message naming the field.  Memory:
 * the output volume (4 bytes a voxel) and 128 KiB of buffers.
 * @param path the file's path
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_nifti(const char *path, pv_volume *out);
/** As pv_volume_read_nifti, but an unsigned 16-bit file (datatype 512)
 * without scaling (scl_slope 0 or 1, scl_inter 0) gives a U16 volume of
 * the stored samples (2 bytes a voxel); every other file is converted to
 * F32 exactly as pv_volume_read_nifti does.  The same header checks.
 * @param path the file's path
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_nifti_native(const char *path, pv_volume *out);
/** Write a NIfTI-1 volume with unit voxel size: float32 (datatype 16)
 * for an F32 volume, uint16 (datatype 512) for a U16 one.  The name must end
 * in .nii, .nii.gz (gzip) or .hdr (a .hdr/.img pair), case ignored, and
 * each size be at most 32767: otherwise PV_ERR_INVALID and nothing is
 * written.  A failed write removes what it created (PV_ERR_IO).
 * @param path the file's path
 * @param volume the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume);

/** 1 when TIFF support was built in (libtiff >= 4.5).
 * @return 1 or 0 */
PV_API int pv_volume_io_has_tiff(void);

/** A multi-page TIFF (or BigTIFF) as a volume: page k is slice z = k, its
 * rows along y, x fastest.  Every page must be grey (MinIsBlack, one
 * sample a pixel) of the first page's size and sample type: 8/16-bit
 * unsigned or 32-bit float, strips or tiles, interleaved, any compression
 * libtiff decodes.  Values are kept as stored (0..255, 0..65535, floats).
 * At most 65536 pages, and all pages together may decode to at most 8192
 * times the file's size: otherwise, and for any damaged page or a page
 * that differs, PV_ERR_FORMAT, with *out untouched.  PV_ERR_UNSUPPORTED
 * when built without libtiff.  Memory: the output volume (4 bytes a
 * voxel) and one strip or row of tiles.
 * @param path the file's path
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_tiff(const char *path, pv_volume *out);
/** As pv_volume_read_tiff, but 16-bit unsigned pages give a U16 volume of
 * the stored samples (2 bytes a voxel); 8-bit and float pages give F32 as
 * pv_volume_read_tiff does.  The same checks and limits.
 * @param path the file's path
 * @param out receives the volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_volume_read_tiff_native(const char *path, pv_volume *out);

/** Write a flow field as a NIfTI-1 vector field: dim[5] = 3 with intent
 * NIFTI_INTENT_VECTOR, components u, v, w in voxels.
 * @param path the file's path
 * @param flow the flow field
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow);

#ifdef __cplusplus
}
#endif

#endif
