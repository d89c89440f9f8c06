/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cgstat report DIR`: a run's output folder made readable. report.md has the host line and the
 * Pulsar run report's container tables from container-summary.json; report.html, one file
 * that opens offline, plots every per-container figure over the run from the CSV files, one
 * line per container, with dygraphs (Debian's libjs-dygraphs) inlined. Files that are missing
 * or cut short are said on stderr and in the report, and what they would have given is left
 * out. No libbpf here.
 */
#ifndef CGSTAT_REPORT_H
#define CGSTAT_REPORT_H

#include <stdio.h>

/* Where dygraph.min.js and dygraph.min.css are; CGSTAT_DYGRAPHS_DIR overrides it. */
#define REPORT_DYGRAPHS_DIR "/usr/share/javascript/dygraphs"

/*
 * argv[0] is "report". Returns the exit status: 0 when both files were written (whatever was
 * missing), 1 when nothing could be read or a file not written, 2 on a usage error.
 */
int report_main(int argc, char **argv, FILE *err);

#endif /* CGSTAT_REPORT_H */
