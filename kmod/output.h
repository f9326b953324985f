/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pevt output: building perf records (SAMPLE, LOST, COMM, FORK, EXIT) for
 * events and the event-fd side of the ring buffer (mmap, poll,
 * SET_OUTPUT, REDIRECT_OUTPUT, PAUSE_OUTPUT).  The buffer protocol itself
 * is ring_buffer.c.
 */
#ifndef _PEVT_OUTPUT_H
#define _PEVT_OUTPUT_H

#include <linux/types.h>
#include <linux/poll.h>
#include <linux/pevt.h>

struct pevt_event;
struct pt_regs;
struct vm_area_struct;
struct file;

/* sample_type bits pevt can write, in perf's layout. */
#define PEVT_SAMPLE_SUPPORTED						\
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |	\
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |		\
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |	\
	 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |	\
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |		\
	 PEVT_SAMPLE_SIZE_AT_END)

int pevt_output_check_attr(const struct perf_event_attr *attr);

/* regs_user.c */
struct rb_handle;
int pevt_regs_user_check_attr(const struct perf_event_attr *attr);
struct pt_regs *pevt_regs_user(struct pt_regs *regs, u64 *abi);
unsigned int pevt_regs_user_size(const struct perf_event_attr *attr,
				 struct pt_regs *uregs);
u16 pevt_ustack_size(u16 stack_size, u16 header_size, struct pt_regs *uregs);
unsigned int pevt_ustack_field_size(u16 dump_size);
void pevt_output_regs_user(struct rb_handle *h,
			   const struct perf_event_attr *attr,
			   struct pt_regs *uregs, u64 abi);
void pevt_output_ustack(struct rb_handle *h, u16 dump_size,
			struct pt_regs *uregs);
void pevt_output_init_event(struct pevt_event *event);
int pevt_output_mmap(struct pevt_event *event, struct vm_area_struct *vma);
__poll_t pevt_output_poll(struct pevt_event *event, struct file *file,
			  poll_table *wait);
long pevt_output_ioctl(struct pevt_event *event, unsigned int cmd,
		       unsigned long arg);
void pevt_output_release(struct pevt_event *event);
void pevt_output_hup(struct pevt_event *event);
void pevt_output_update_userpage(struct pevt_event *event);

size_t pevt_read_size(u64 read_format, int nr_siblings);
void pevt_read_layout(struct pevt_event *event, u64 enabled, u64 running,
		      void (*put)(void *arg, u64 v), void *arg);

bool pevt_sample_excluded(const struct pevt_event *event, struct pt_regs *regs);
void pevt_output_sample_raw(struct pevt_event *event, struct pt_regs *regs,
			    u64 period, const void *raw, u32 raw_len);
static inline void pevt_output_sample(struct pevt_event *event,
				      struct pt_regs *regs, u64 period)
{
	pevt_output_sample_raw(event, regs, period, NULL, 0);
}
void pevt_output_comm(struct task_struct *task, const char *comm, bool exec);
void pevt_output_task(struct task_struct *task, bool fork);

struct perf_event_header;
typedef void (*pevt_sb_fn)(struct pevt_event *event, void *data);
void pevt_output_sb_iterate(pevt_sb_fn fn, void *data);
void pevt_output_sb_write(struct pevt_event *event,
			  struct perf_event_header *hdr_in,
			  const void *body, unsigned int body_len,
			  const void *tail, unsigned int tail_len);
void pevt_output_read_event(struct pevt_event *event, struct task_struct *task);
void pevt_output_throttle(struct pevt_event *event, bool unthrottle);

/* throttle.c: kernel.perf_event_max_sample_rate */
void pevt_throttle_set_rate(int max_sample_rate);
bool pevt_throttle_sample(struct pevt_event *event);
void pevt_throttle_sched_in(struct pevt_event *event);
void pevt_throttle_sched_out(struct pevt_event *event);
void pevt_throttle_init(void);
void pevt_throttle_exit(void);

/* callchain.c */
const u64 *pevt_callchain(struct pevt_event *event, struct pt_regs *regs);
int pevt_callchain_check_attr(struct perf_event_attr *attr);
void pevt_callchain_init(void);
void pevt_callchain_exit(void);

/* sample.c */
int pevt_sample_init(void);
void pevt_sample_exit(void);

#endif /* _PEVT_OUTPUT_H */
