/* The FFT engine choice of a context (fft.h's context-level API): which
 * engines this build has, and the engine an OpenCL context's transforms
 * use.  The choice itself lives in the backend (register sub-table). */
#include "../core/internal.h"

const char *pv_fft_engine_name(pv_fft_engine engine)
{
    switch (engine) {
    case PV_FFT_AUTO: return "auto";
    case PV_FFT_CLFFT: return "clFFT";
    case PV_FFT_VKFFT: return "VkFFT";
    case PV_FFT_FFTW: return "FFTW";
    }
    return "unknown";
}

int pv_fft_engine_available(pv_fft_engine engine)
{
    if (pv_cpu_backend.reg->fft_engine_built(engine))
        return 1;
#ifdef PV_HAVE_OPENCL
    return pv_opencl_backend.reg->fft_engine_built(engine);
#else
    return 0;
#endif
}

pv_status pv_context_set_fft_engine(pv_context *ctx, pv_fft_engine engine)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "set_fft_engine: ctx is NULL");
    if (engine != PV_FFT_AUTO && engine != PV_FFT_CLFFT && engine != PV_FFT_VKFFT)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "set_fft_engine: engine %d is not PV_FFT_AUTO, _CLFFT or _VKFFT",
                       (int)engine);
    if (!pv_fft_engine_available(engine))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "set_fft_engine: this build has no %s (configure --with-vkfft)",
                       pv_fft_engine_name(engine));
    pv_context_lock(ctx);
    pv_status status = ctx->ops->reg->fft_set_engine(ctx, engine);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_context_fft_engine(pv_context *ctx, pv_fft_engine *engine)
{
    if (!ctx || !engine)
        return pv_fail(ctx, PV_ERR_INVALID, "fft_engine: ctx or engine is NULL");
    pv_fft_engine found = PV_FFT_FFTW;
    pv_context_lock(ctx);
    pv_status status = ctx->ops->reg->fft_engine_of(ctx, &found);
    pv_context_unlock(ctx);
    if (status == PV_OK)
        *engine = found;
    return status;
}
