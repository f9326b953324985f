/* SPDX-License-Identifier: GPL-2.0 */
/* Targets shared by the pevt subcommands (target.c). */
#ifndef PEVT_TARGET_H
#define PEVT_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <pevt/parse_events.h>

/* Append the thread ids of process @pid to *@v (*@n entries); -ESRCH. */
int proc_add_threads(int pid, int **v, int *n);
/*
 * Fork @argv stopped before exec (perf's evlist__prepare_workload): it
 * execs when a byte is written to *@go_fd (EOF: it exits), and an exec
 * failure comes back as an int errno on *@err_fd.  @oldmask is restored
 * in the child; @stdout_to_stderr points its stdout at stderr (perf's
 * pipe mode).
 */
int workload_prepare(char **argv, const sigset_t *oldmask, bool stdout_to_stderr,
		     pid_t *child, int *go_fd, int *err_fd);
/*
 * Append the comma-separated ids of @arg (each a number >= @min) to *@v
 * (*@n entries).  -EINVAL, told naming @opt and the token; -ENOMEM.
 */
int id_list_parse(const char *arg, long min, const char *opt, int **v, int *n);
/* False for a pid that is gone or a zombie. */
bool pid_alive(int pid);
void join_args(char *buf, size_t size, int argc, char **argv);
/* -e given again: "*list,more" (or "more"), reallocated; -ENOMEM. */
int event_list_append(char **list, const char *more);
void report_parse_error(const char *list, const struct pevt_parse_error *e);

#endif
