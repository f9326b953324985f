/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the pevt subcommands (bpftool main.h style). */
#ifndef PEVT_MAIN_H
#define PEVT_MAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const char *bin_name;
extern bool json_output;

#define NEXT_ARG()	({ argc--; argv++; if (argc < 0) usage(); })
#define NEXT_ARGP()	({ (*argc)--; (*argv)++; if (*argc < 0) usage(); })
#define REQ_ARGS(cnt)							\
	({								\
		int _cnt = (cnt);					\
		bool _res;						\
		if (argc < _cnt) {					\
			p_err("'%s' needs at least %d arguments, %d found", \
			      argv[-1], _cnt, argc);			\
			_res = false;					\
		} else {						\
			_res = true;					\
		}							\
		_res;							\
	})

struct cmd {
	const char *cmd;
	int (*func)(int argc, char **argv);
	const char *help;
};

void __attribute__((format(printf, 1, 2))) p_err(const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) p_info(const char *fmt, ...);
void __attribute__((noreturn)) usage(void);
void __attribute__((format(printf, 5, 6)))
progress(bool step, uint64_t t0, int done, int total, const char *fmt, ...);
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv));
bool is_prefix(const char *pfx, const char *str);
int arg_ulong(const char *name, const char *s, unsigned long min,
		unsigned long max, unsigned long *out);
void json_str(FILE *f, const char *s);
uint64_t now_ns(void);				/* CLOCK_MONOTONIC */
double median(double *v, unsigned long n);	/* sorts @v */

int do_bench(int argc, char **argv);
int bench_output(int argc, char **argv);	/* bench_output.c */
int bench_fairness(int argc, char **argv);	/* bench_fairness.c */
int bench_close(int argc, char **argv);		/* bench_close.c */
int bench_record(int argc, char **argv);	/* bench_record.c */
int bench_record_loop(int argc, char **argv);
int bench_report(int argc, char **argv);	/* bench_report.c */
int do_stat(int argc, char **argv);
int do_record(int argc, char **argv);		/* record.c */
int do_report(int argc, char **argv);		/* report.c */
int do_data(int argc, char **argv);		/* data.c */
int do_data_repeat(int argc, char **argv);	/* data_repeat.c */
int do_list(int argc, char **argv);		/* list.c */

/* Generated from Documentation/man (scripts/mkhelp.sh). */
extern const char pevt_version[];
extern const char pevt_build_mandir[];
const char *pevt_help_text(const char *cmd);	/* "stat", ..., "" for pevt */
int print_help(const char *cmd);		/* pevt_help_text() on stderr */

#endif
