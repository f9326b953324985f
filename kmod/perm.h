/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt permissions and limits (perm.c): who may open which event, and how
 * many.  Same rules and errnos as perf_event_open(2); see
 * Documentation/security.md.
 */
#ifndef _PEVT_PERM_H
#define _PEVT_PERM_H

#include <linux/types.h>

struct perf_event_attr;
struct task_struct;
struct pevt_event;
struct perm_user;

int perm_check_attr(const struct perf_event_attr *attr);
int perm_check_cpu(void);
int perm_check_tp_raw(const struct perf_event_attr *attr, bool task);
int perm_check_task(struct task_struct *task);
int perm_check_group(const struct pevt_event *leader);
struct perm_user *perm_charge(void);
void perm_uncharge(struct perm_user *user);
bool perm_exec_detach(struct task_struct *task);
int perm_paranoid(void);
int perm_max_sample_rate(void);
struct file;
struct file *perm_proc_open(const char *path, const char *what);
int perm_proc_int(struct file *f, int dflt);
int perm_init(void);
void perm_exit(void);

#endif /* _PEVT_PERM_H */
