/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pevt: perf_events proposals as an out-of-tree module.
 *
 * This header is the only contract between pevt.ko and userspace.  Where
 * pevt behaves like perf_event_open(2) it uses perf's own types and numbers:
 * struct perf_event_attr, PERF_RECORD_*, PERF_EVENT_IOC_*, and
 * struct perf_event_mmap_page, so that one reader serves both.
 */
#ifndef _UAPI_LINUX_PEVT_H
#define _UAPI_LINUX_PEVT_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/perf_event.h>

#define PEVT_DEVICE_PATH	"/dev/pevt"
#define PEVT_IOC_MAGIC		0xB7

/*
 * struct pevt_open - argument of PEVT_IOC_OPEN.
 *
 * Versioned by size like perf_event_attr: userspace sets @size to
 * sizeof(struct pevt_open) as it knows it.  The kernel accepts any size
 * >= PEVT_OPEN_SIZE_VER0; bytes beyond what it knows must be zero
 * (else -E2BIG).  Reserved fields and unknown @flags bits must be zero
 * (else -EINVAL).
 *
 * On success the ioctl returns a new file descriptor that behaves like a
 * perf event fd: read() honours attr.read_format, PERF_EVENT_IOC_ENABLE,
 * _DISABLE, _RESET, _ID, _SET_OUTPUT, _PAUSE_OUTPUT work (and
 * PEVT_IOC_REDIRECT_OUTPUT below), mmap() maps a
 * struct perf_event_mmap_page plus 2^n data pages, poll() signals data.
 */
struct pevt_open {
	__u32	size;		/* sizeof(struct pevt_open) */
	__u32	flags;		/* PEVT_OPEN_* */
	__u64	attr;		/* user pointer to struct perf_event_attr */
	__s32	pid;		/* 0: caller, >0: that task, -1: any task (per CPU) */
	__s32	cpu;		/* -1: any CPU (per task), >=0: that CPU */
	__s32	group_fd;	/* pevt event fd of the group leader, or -1 */
	__u32	__reserved_0;	/* must be 0 */
	__u64	__reserved_1[4];/* must be 0 */
};

#define PEVT_OPEN_SIZE_VER0	64	/* first published */

#define PEVT_OPEN_FD_CLOEXEC	(1U << 0)	/* O_CLOEXEC on the new fd */
#define PEVT_OPEN_FLAGS_ALL	(PEVT_OPEN_FD_CLOEXEC)

#define PEVT_IOC_OPEN		_IOW(PEVT_IOC_MAGIC, 0x01, struct pevt_open)

/*
 * PEVT_SAMPLE_SIZE_AT_END - a perf_event_attr.sample_type bit perf does not
 * define.  Every record written into a buffer whose events set it (samples
 * and non-sample records alike) ends with a __u64 equal to its
 * header.size.  Records stay 8-byte aligned.  A reader of a paused
 * overwrite-mode buffer can therefore start at data_head and walk backward:
 * the __u64 just below a record's end gives the offset of its start.
 * All events writing into one buffer must agree on this bit.
 */
#define PEVT_SAMPLE_SIZE_AT_END	(1ULL << 63)

/*
 * PEVT_IOC_REDIRECT_OUTPUT - switch the writers of a buffer to another one.
 *
 *	ioctl(fd, PEVT_IOC_REDIRECT_OUTPUT, target_fd);	// start
 *	ioctl(fd, PEVT_IOC_REDIRECT_OUTPUT, -1);		// end
 *
 * From one atomic store on, every record that would go into the buffer
 * fd's event writes into (its own, or the one PERF_EVENT_IOC_SET_OUTPUT
 * chose) goes into target_fd's buffer instead, for every event writing
 * into it: each record lands whole in one buffer or the other, none is
 * dropped.  -1 sends them back.  The ioctl returns once no writer is
 * still in the buffer the records left (the source when starting, the
 * old target when ending or retargeting): its data_head is final and it
 * can be read (backward, with PEVT_SAMPLE_SIZE_AT_END) like a paused
 * buffer while recording goes on in the other.  Two buffers per CPU and
 * a redirect at each snapshot make back-to-back snapshots lossless
 * (pevt record --overwrite).  Wakeups and LOST records come from the
 * buffer written; PAUSE_OUTPUT pauses the buffer it names, so pause the
 * target to stop redirected records.
 *
 * Errors: EBADF target_fd is not open; EINVAL target_fd is not a pevt
 * event, either buffer is missing or not mapped, both are the same
 * buffer, the events are on different CPUs (or, per task, in different
 * tasks), they disagree on PEVT_SAMPLE_SIZE_AT_END, or fd is a per-task
 * inherit event; ELOOP the target is redirected itself, or fd's buffer is
 * the target of another redirect (one hop only); EBUSY another buffer is
 * already redirected into the target.  Redirecting again to the current
 * target, or ending a redirect that is not there, returns 0.  The
 * redirect ends by itself when either buffer is unmapped for the last
 * time.
 */
#define PEVT_IOC_REDIRECT_OUTPUT	_IO(PEVT_IOC_MAGIC, 0x02)

/*
 * The mmap ring buffer (perf's protocol).  mmap() of an event fd maps
 * 1 + 2^n pages at offset 0 (MAP_SHARED): a struct perf_event_mmap_page,
 * then the data area (data_offset, data_size in that page).  data_head and
 * data_tail are free-running byte offsets; mask them with data_size - 1.
 *
 * PROT_READ|PROT_WRITE: back-pressure mode.  The kernel never writes over
 * bytes between data_tail and data_head; a record that does not fit is
 * dropped and counted, and a PERF_RECORD_LOST { header, id, lost,
 * sample_id } precedes the next record that fits.
 * PROT_READ only: overwrite mode.  data_tail is ignored; the newest records
 * overwrite the oldest.  Pause output (PERF_EVENT_IOC_PAUSE_OUTPUT, 1)
 * before reading, then walk backward from data_head with the size trailer.
 *
 * Ordering contract between the kernel writer and a userspace reader:
 *
 *   kernel				user
 *
 *   if (LOAD ->data_tail) {		LOAD ->data_head
 *			(A)		smp_rmb()	(C)
 *	STORE $data			LOAD $data
 *	smp_wmb()	(B)		smp_mb()	(D)
 *	STORE ->data_head		STORE ->data_tail
 *   }
 *
 * B pairs with C: after reading data_head and an rmb (C), every byte below
 * data_head is written.  A (a control dependency) pairs with D: the reader
 * must finish reading before it releases the space by storing data_tail,
 * with a full barrier (D) in between.  In overwrite mode there is no
 * release: pause first, or validate what was read.
 */

#endif /* _UAPI_LINUX_PEVT_H */
