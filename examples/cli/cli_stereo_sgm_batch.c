/* parvis stereo --method sgm|sad --batch LIST: a list of pairs through
 * pv_stereo_sgm_batch (or pv_stereo_sad_batch), a few pairs a call, one
 * disparity file per pair.
 * The pairs of a call stream through one plan (on OpenCL the transfers of
 * one pair overlap the kernels of the next); the calls keep the memory
 * bounded whatever the list's length, and a line on stderr after each says
 * how far the list has come. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pairs per library call: enough for the stream to run at its rate (the
 * first upload and the last download of a call are not hidden), few
 * enough that a call's images stay small (8 1080p pairs: 82 MB). */
#define PAIRS_PER_CALL 8
#define LINE_MAX_BYTES 4096

typedef struct batch_entry {
    char *left, *right, *output;
} batch_entry;

typedef struct batch_list {
    batch_entry *entries;
    int count;
} batch_list;

static void list_free(batch_list *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->entries[i].left); /* the three names share one block */
    free(list->entries);
    list->entries = NULL;
    list->count = 0;
}

/* One line's three names, "LEFT RIGHT OUT", into one block. */
static int parse_line(const char *list_path, int number, char *line, batch_entry *entry)
{
    char *fields[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    for (char *token = strtok(line, " \t\r\n"); token && n < 4; token = strtok(NULL, " \t\r\n"))
        fields[n++] = token;
    if (n != 3)
        return cli_fail("stereo --batch %s, line %d: expected LEFT RIGHT OUT.pfm, found %d "
                        "name%s", list_path, number, n == 4 ? 4 : n, n == 1 ? "" : "s");
    const size_t a = strlen(fields[0]) + 1, b = strlen(fields[1]) + 1, c = strlen(fields[2]) + 1;
    char *block = malloc(a + b + c);
    if (!block)
        return cli_fail("stereo --batch: out of memory");
    entry->left = memcpy(block, fields[0], a);
    entry->right = memcpy(block + a, fields[1], b);
    entry->output = memcpy(block + a + b, fields[2], c);
    return 0;
}

static int add_entry(batch_list *list, int *capacity, const batch_entry *entry)
{
    if (list->count == *capacity) {
        const int grown = *capacity ? 2 * *capacity : 16;
        batch_entry *more = grown > 0 ? realloc(list->entries, (size_t)grown * sizeof *more)
                                      : NULL;
        if (!more)
            return cli_fail("stereo --batch: out of memory");
        list->entries = more;
        *capacity = grown;
    }
    list->entries[list->count++] = *entry;
    return 0;
}

/* The list file: a pair a line, blank lines and lines starting with '#'
 * left out.  At least one pair. */
static int read_list(const char *path, batch_list *list)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return cli_fail("stereo --batch: cannot read '%s': %s", path, strerror(errno));
    char line[LINE_MAX_BYTES];
    int capacity = 0, number = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, file)) {
        number++;
        if (!strchr(line, '\n') && !feof(file))
            rc = cli_fail("stereo --batch %s, line %d: longer than %d bytes", path, number,
                          LINE_MAX_BYTES - 2);
        const char *first = line + strspn(line, " \t\r\n");
        if (rc || *first == '\0' || *first == '#')
            continue;
        batch_entry entry;
        rc = parse_line(path, number, line, &entry);
        if (rc == 0 && add_entry(list, &capacity, &entry) != 0) {
            free(entry.left);
            rc = 1;
        }
    }
    if (rc == 0 && ferror(file))
        rc = cli_fail("stereo --batch: cannot read '%s'", path);
    fclose(file);
    if (rc == 0 && list->count == 0)
        rc = cli_fail("stereo --batch %s: no pairs in the list", path);
    if (rc)
        list_free(list);
    return rc;
}

typedef struct batch_call {
    pv_image lefts[PAIRS_PER_CALL], rights[PAIRS_PER_CALL], disparities[PAIRS_PER_CALL];
    int count;
} batch_call;

static void call_free(batch_call *call)
{
    for (int i = 0; i < call->count; i++) {
        pv_image_free(&call->lefts[i]);
        pv_image_free(&call->rights[i]);
        pv_image_free(&call->disparities[i]);
    }
    call->count = 0;
}

/* Entries first .. first + n - 1 read, each of the first pair's size
 * (width, height: 0 until that pair is read). */
static int read_call(const batch_list *list, int first, int n, int verbose, int *width,
                     int *height, batch_call *call)
{
    for (int i = 0; i < n; i++) {
        const batch_entry *e = &list->entries[first + i];
        const char *files[2] = {e->left, e->right};
        pv_image pair[2];
        if (cli_read_image_pair(files, PV_PIXEL_U8, verbose, pair))
            return 1;
        if (*width == 0)
            *width = pair[0].width, *height = pair[0].height;
        pv_status status = PV_OK;
        if (pair[0].width != *width || pair[0].height != *height)
            status = PV_ERR_INVALID;
        else
            status = pv_image_alloc(&call->disparities[i], *width, *height, PV_PIXEL_F32);
        if (status != PV_OK) {
            cli_free_image_pair(pair);
            return status == PV_ERR_INVALID
                       ? cli_fail("stereo --batch: %s is %dx%d but the first pair is %dx%d; a "
                                  "batch holds pairs of one size", e->left, pair[0].width,
                                  pair[0].height, *width, *height)
                       : cli_fail_status(status, "disparity map");
        }
        call->lefts[i] = pair[0];
        call->rights[i] = pair[1];
        call->count++;
    }
    return 0;
}

static int write_call(const batch_list *list, int first, const batch_call *call)
{
    for (int i = 0; i < call->count; i++) {
        const char *path = list->entries[first + i].output;
        const char *target = cli_output_path(path);
        if (!target)
            return 1;
        pv_status status = pv_image_write(target, &call->disparities[i]);
        if (status != PV_OK)
            return cli_fail_status(status, path);
    }
    return 0;
}

static void print_summary(pv_context *ctx, const cli_sgm_batch_run *run, int pairs, int width,
                          int height, const pv_timing *sum)
{
    const double rate = sum->total_ms > 0 ? 1000.0 * pairs / sum->total_ms : 0.0;
    const char *method = run->sad ? "sad" : "sgm";
    if (run->want_json) {
        printf("{\"method\": \"%s\", \"batch\": %d, \"width\": %d, \"height\": %d, "
               "\"min_disp\": %d, \"ndisp\": %d, ", method, pairs, width, height,
               run->params.min_disp, run->params.ndisp);
        if (!run->sad)
            printf("\"paths\": %d, ", run->params.paths);
        printf("\"backend\": \"%s\", \"device\": ", pv_backend_name(pv_context_backend(ctx)));
        cli_json_string(stdout, pv_context_device_name(ctx));
        printf(", \"kernel_ms\": %.4f, \"total_ms\": %.4f, \"pairs_per_s\": %.3f}\n",
               sum->kernel_ms, sum->total_ms, rate);
    } else if (run->want_time) {
        printf("stereo %s --batch: %d pairs %dx%d, %.3f ms (kernel %.3f ms), %.1f pairs/s "
               "on %s\n", method, pairs, width, height, sum->total_ms, sum->kernel_ms, rate,
               pv_context_device_name(ctx));
    }
}

int cli_sgm_batch(pv_context *ctx, const cli_sgm_batch_run *run)
{
    batch_list list = {NULL, 0};
    if (read_list(run->list, &list))
        return 1;
    int width = 0, height = 0, rc = 0;
    pv_timing sum = {0, 0, 0, 0};
    for (int first = 0; first < list.count && rc == 0; first += PAIRS_PER_CALL) {
        const int n = list.count - first < PAIRS_PER_CALL ? list.count - first : PAIRS_PER_CALL;
        batch_call call;
        call.count = 0;
        rc = read_call(&list, first, n, run->verbose, &width, &height, &call);
        if (rc == 0 && first == 0 && !run->sad) {
            pv_sad_params range = {0};
            range.min_disp = run->params.min_disp;
            range.ndisp = run->params.ndisp;
            rc = cli_sgm_report_memory(&range, &run->params, width, height, run->verbose);
        }
        if (rc == 0) {
            pv_status status =
                run->sad ? pv_stereo_sad_batch(ctx, call.lefts, call.rights, n, run->sad,
                                               call.disparities)
                         : pv_stereo_sgm_batch(ctx, call.lefts, call.rights, n, &run->params,
                                               call.disparities, NULL);
            rc = status == PV_OK ? 0 : cli_fail_status(status, "stereo --batch");
        }
        if (rc == 0) {
            pv_timing timing = {0, 0, 0, 0};
            pv_context_last_timing(ctx, &timing);
            sum.total_ms += timing.total_ms;
            sum.kernel_ms += timing.kernel_ms;
            rc = write_call(&list, first, &call);
        }
        if (rc == 0)
            fprintf(stderr, "parvis: stereo --batch: %d of %d pairs\n", first + n, list.count);
        call_free(&call);
    }
    if (rc == 0)
        print_summary(ctx, run, list.count, width, height, &sum);
    list_free(&list);
    return rc;
}
