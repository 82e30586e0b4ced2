/* The outputs of a command, all or none: every file a command writes goes
 * first to a temporary name in its own folder and is renamed into place
 * only when the command has succeeded and its standard output has been
 * written; on failure the temporary files are removed, so that no
 * truncated or partial result is left behind and files already there are
 * kept as they were. */
#ifndef PV_OUTPUTS_H
#define PV_OUTPUTS_H

#include <stdio.h>

/* The name to write `path` to: a new empty file ".parvis-PID-N-NAME" in
 * the folder of `path` (NAME keeps its extension, which the writers read
 * the format from), or `path` itself when it names something other than a
 * regular file (a device such as /dev/null).  A symbolic link is written
 * through (the file it names is replaced; the link stays).  NULL after printing
 * "cannot write 'PATH': <cause>" when the temporary file cannot be made
 * (a missing folder, no permission).  The name stays valid until
 * cli_outputs_finish. */
const char *cli_output_path(const char *path);

/* A text stream open for writing `path` through cli_output_path; NULL
 * after printing "cannot write 'PATH': <cause>". */
FILE *cli_open_output(const char *path);

/* Close a stream from cli_open_output (or written to a name from
 * cli_output_path): 0, or 1 after
 * printing "cannot write 'PATH': <cause>" when any write to it failed. */
int cli_close_output(FILE *out, const char *path);

/* The end of every command, in one place: flush and close the standard
 * output (a full disk there fails the command too), then rename every
 * temporary file into place when the command succeeded (status 0), or
 * remove them all when it failed.  Returns the exit status: `status`, or
 * 1 when the standard output or a rename failed. */
int cli_outputs_finish(int status);

#endif
