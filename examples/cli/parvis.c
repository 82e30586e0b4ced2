/* parvis: the command-line tool.  Each subcommand parses its options with
 * the table parser of cli_common.c ('parvis COMMAND --help'). */
#include "cli.h"

#include <string.h>

static const char usage[] =
    "usage: parvis <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                    version, backends, devices and the configuration in effect\n"
    "                          (every PARVIS_* variable with its value and default)\n"
    "  devices                 list backends and OpenCL devices\n"
    "  stereo LEFT RIGHT -o OUT.pfm [--method sad] [--ndisp N] [--window W]\n"
    "         [--min-disp M] [--subpixel] [--lr-check] [--uniqueness U]\n"
    "         [--png VIS.png [--png-map turbo|gray]] [--gt GT.pgm --gt-scale S [--gt-border B]]\n"
    "         [--time] [--json]\n"
    "  stereo LEFT RIGHT ... --method bp [--ndisp N] [--levels L] [--iterations I]\n"
    "         [--lambda F] [--data-max F] [--disc-max F] [--sigma F] [--tile WxH]\n"
    "         [--tile-padding P] [--message-update serial|cooperative]\n"
    "         [--message-precision f32|f16]\n"
    "         [--devices all|LIST]\n"
    "                          hierarchical belief propagation (disc-max ndisp/7.5 suits\n"
    "                          wide ranges); --devices spreads the tiles over devices\n"
    "  stereo LEFT RIGHT ... --method sgm [--ndisp N] [--census 5x5|7x7|9x7] [--census-plain]\n"
    "         [--p1 P1] [--p2 P2] [--p2-adaptive] [--paths 4|8] [--uniqueness U]\n"
    "         [--no-lr-check] [--lr-max-diff N] [--no-subpixel] [--median]\n"
    "         [--memory-budget BYTES] [--confidence CONF.pfm] [--devices all|LIST]\n"
    "                          semi-global matching of census costs (docs/stereo.md);\n"
    "                          --devices cuts the image into overlapping bands\n"
    "  phasecorr REF MOV [--subpixel none|upsample|parabolic] [--upsample F | --parabolic]\n"
    "         [--window none|hann]\n"
    "         [--pad none|fft|linear] [--size NXxNYxNZ] [--fft auto|clfft|vkfft] [--time] [--json]\n"
    "                          shift with MOV(p) ~ REF(p - shift): prints 'dx dy [dz] peak';\n"
    "                          --size reads raw little-endian float32 volumes (x fastest)\n"
    "  phasecorr REF MOV --mask MASK [--moving-mask MASK2] [--overlap-ratio R]\n"
    "                          masked phase correlation (Padfield's masked NCC): the\n"
    "                          integer shift over the pixels valid in both masks\n"
    "  ncc TEMPLATE IMAGE [-o MAP.pfm] [--min-overlap N] [--time] [--json]\n"
    "                          normalized cross-correlation: prints 'x y coefficient'\n"
    "                          (the template's top-left corner in the image)\n"
    "  flow FIXED.png MOVING.png -o FLOW.flo [--color VIS.png] [--max-radius R]\n"
    "         [--gt TRUTH.flo [--gt-border B]] [--warped OUT.png] [--time] [--json]\n"
    "                          2D optical flow of two images (Middlebury .flo out)\n"
    "  synth-flow IMAGE FIXED MOVING TRUTH.flo [--magnitude M]\n"
    "                          a 2D pair with a known smooth flow\n"
    "  flow FIXED MOVING [MORE...] -o FLOW.nii [--devices all|LIST] [--alpha A] [--beta B]\n"
    "         [--rho S] [--kernel-size K]\n"
    "         [--warps R] [--iterations N] [--levels L] [--tolerance T] [--check-every K]\n"
    "         [--spacing H] [--gradient central|forward] [--size NXxNYxNZ] [--warped OUT.nii] [--time] [--json]\n"
    "                          3D CLG optical flow (alias flow3d): u, v, w in voxels with\n"
    "                          MOVING(x + w(x)) ~ FIXED(x); NIfTI in/out, or raw float32 with\n"
    "                          --size (flow written as FLOW_u.raw, FLOW_v.raw, FLOW_w.raw);\n"
    "                          more volumes: a sequence, pair i's flow in FLOW_i.nii\n"
    "  sift IMAGE... -o KEYS.txt [--preset reference|fast] [--first-octave O] [--peak-thresh F]\n"
    "         [--edge-thresh F] [--max-keypoints K] [--levels S] [--octaves N] [--time] [--json]\n"
    "                          SIFT keypoints: lines 'x y sigma angle d0 ... d127'; several\n"
    "                          images: -o holds {}, each image's name\n"
    "  match IMG1 IMG2 -o MATCHES.txt [--ratio R] [--mutual] [--preset reference|fast]\n"
    "         [sift options] [--homography H.txt] [--fundamental F.txt] [--ransac-threshold PX]\n"
    "         [--draw MATCHES.png] [--time] [--json]\n"
    "                          SIFT matches: lines 'x1 y1 x2 y2 distance'; RANSAC models;\n"
    "                          --draw pictures them (a model's inliers only)\n"
    "  tune [--op all|filter|sad|bp|register|flow|features|octreg|geometry|sgm] [--device I]\n"
    "         [--candidates N] [--runs N] [--budget S] [--size WxH] [--ndisp N] [--no-write]\n"
    "         [--show] [--export]\n"
    "                          search the OpenCL device's best kernel parameters, check\n"
    "                          each against the CPU, store the winners in the tuning cache\n"
    "  octreg REF TARGET [TARGET...] [--devices all|LIST] [--size NZxNXxNY] [-o SHIFTS.csv]\n"
    "         [--registered OUT.raw|.nii]\n"
    "         [--enface OUT.png] [--slow OUT.png] [--subpixel] [--stripes N] [--stripe-width W]\n"
    "         [--subvolume W] [--step S] [--coarse-tolerance T] [--tolerance T]\n"
    "         [--pad none|fft|linear] [--batch B]\n"
    "         [--time] [--json]\n"
    "                          stripe-wise AO-OCT registration; CSV bscan,dx,dy,dz,peak,valid\n"
    "                          with TARGET(x, k, z) ~ REF(x - dx, k - dy, z - dz); volumes are\n"
    "                          raw float32 (depth fastest, then A-lines, then B-scans) or NIfTI;\n"
    "                          several targets: one CSV with a leading volume column\n"
    "  synth-oct REF TARGET TRACE.csv [--size NZxNXxNY] [--seed S] [--noise N]\n"
    "         [--tremor T] [--saccades K] [--integer]\n"
    "                          synthetic AO-OCT pair and its true motion trace\n"
    "  params [OP] [--json]    the operations' declared parameters (the options' source)\n"
    "  version                 print the library version\n"
    "\n"
    "common options: --backend auto|cpu|opencl  --device I|NAME  --crosscheck\n"
    "--progress (stereo, flow, octreg, tune): a progress line on stderr; without it the line\n"
    "         shows only on a terminal, for calls longer than a second\n"
    "--devices all|0,2,3: run the items (targets, frame pairs, BP tiles) on several OpenCL\n"
    "         devices at once; 'all' is every device of the chosen device's platform\n"
    "'parvis COMMAND --help': a command's options, ranges, defaults and output conventions\n"
    "outputs: a command writes all its files or none (each under a temporary name in its\n"
    "         folder, renamed into place at the end); docs/cli.md\n"
    "environment: PARVIS_BACKEND, PARVIS_DEVICE, PARVIS_CROSSCHECK=1, PARVIS_LOG=1,\n"
    "         PARVIS_MEMORY_LIMIT=bytes[K|M|G] (caps the memory BP may plan with),\n"
    "         PARVIS_KERNEL_TIMING=runs|each (how the printed kernel times are measured:\n"
    "         runs of launches, or every launch on its own; docs/timing.md); every\n"
    "         variable, its default and meaning: 'parvis info', docs/configuration.md\n";

static void print_device(const pv_device_info *device)
{
    printf("  [%d] %s (%s)\n", device->index, device->name, pv_device_type_name(device->type));
    printf("      platform %s, driver %s, %s\n", device->platform, device->driver_version,
           device->opencl_version);
    printf("      %d compute units, %.1f GiB global memory, max allocation %.1f GiB, "
           "%.0f KiB local memory\n",
           device->compute_units, (double)device->global_memory / (1u << 30),
           (double)device->max_alloc / (1u << 30), (double)device->local_memory / 1024.0);
}

/* The devices and what auto selects; 0, or 1 after a message. */
static int print_devices(void)
{
    pv_device_info devices[64];
    int count = 0;
    pv_status status = pv_device_list(devices, 64, &count);
    if (status != PV_OK)
        return cli_fail_status(status, "device list");
    printf("backends: cpu (OpenMP + FFTW)%s\n", count > 0 ? ", opencl" : "");
    printf("OpenCL devices: %d\n", count);
    for (int i = 0; i < count && i < 64; i++)
        print_device(&devices[i]);
    pv_context *ctx = NULL;
    if (pv_context_create(&ctx, NULL) == PV_OK) {
        printf("auto selects: %s backend, %s\n  (%s)\n", pv_backend_name(pv_context_backend(ctx)),
               pv_context_device_name(ctx), pv_context_selection_note(ctx));
        pv_context_destroy(ctx);
    } else {
        printf("auto selection failed: %s\n", pv_last_error());
    }
    return 0;
}

static int cmd_devices(int argc, char **argv)
{
    cli_command c = {
        .name = "devices", .synopsis = "",
        .summary = "List the backends, the OpenCL devices and what --backend auto selects.",
        .conventions = "  Each device: '[I] name (type)', its platform, driver and OpenCL version,\n"
                       "  compute units and memory.  I is the index --device and --devices take\n"
                       "  (PARVIS_DEVICE=I sets it for every command).\n",
        .options = NULL, .option_count = 0};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    return print_devices();
}

/* The configuration table: one line a variable, "NAME = value" where the
 * environment sets it, else "NAME (unset: default)", and its meaning. */
static int print_configuration(void)
{
    printf("configuration (%d variables; docs/configuration.md):\n", pv_config_count());
    for (int i = 0; i < pv_config_count(); i++) {
        pv_config_entry_info entry;
        pv_status status = pv_config_entry(i, &entry);
        if (status != PV_OK)
            return cli_fail_status(status, "configuration");
        if (entry.is_set)
            printf("  %s = %s\n", entry.name, entry.value);
        else
            printf("  %s (unset: %s)\n", entry.name, entry.default_value);
        printf("      %s: %s\n", entry.kind, entry.meaning);
    }
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    cli_command c = {
        .name = "info", .synopsis = "",
        .summary = "Print the version, the backends, the OpenCL devices and the configuration "
                   "in effect.",
        .conventions = "  The configuration: every PARVIS_* variable the library reads, with the\n"
                       "  value the environment gives it, or its default when it is unset, and\n"
                       "  its kind and meaning (docs/configuration.md).\n",
        .options = NULL, .option_count = 0};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    printf("parvis %s\n", pv_version());
    /* devices first: their listing makes a context, which reads the
     * environment the table then shows */
    int failed = print_devices();
    return failed ? failed : print_configuration();
}

static int cmd_version(int argc, char **argv)
{
    cli_command c = {.name = "version", .synopsis = "",
                     .summary = "Print the library version ('parvis X.Y.Z') and the image formats read.", .options = NULL,
                     .option_count = 0};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    printf("parvis %s\nimage formats: PGM PPM PFM PNG%s%s\n", pv_version(),
           pv_image_io_has_jpeg() ? " JPEG" : "", pv_image_io_has_tiff() ? " TIFF" : "");
    return 0;
}

/* Every command by name ("flow3d" is flow's other name). */
static const struct command_entry {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"devices", cmd_devices},     {"stereo", cli_stereo},         {"phasecorr", cli_phasecorr},
    {"octreg", cli_octreg},       {"synth-oct", cli_synth_oct},   {"ncc", cli_ncc},
    {"flow", cli_flow},           {"flow3d", cli_flow},           {"synth-flow", cli_synth_flow},
    {"sift", cli_sift},           {"match", cli_match},           {"tune", cli_tune},
    {"params", cli_params},       {"version", cmd_version},
    {"info", cmd_info},
};

int main(int argc, char **argv)
{
    if (argc < 2)
        return fputs(usage, stderr), 2;
    const char *command = argv[1];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(command, commands[i].name) == 0)
            return cli_outputs_finish(commands[i].run(argc - 1, argv + 1));
    if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0)
        return cli_outputs_finish(fputs(usage, stdout) < 0);
    cli_fail("unknown command '%s' (try 'parvis help')", command);
    return 2;
}
