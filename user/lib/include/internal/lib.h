/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBPEVT_INTERNAL_LIB_H
#define __LIBPEVT_INTERNAL_LIB_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/*
 * libpevt_err() - the one place errors leave the library: returns @ret
 * (a negative errno) unchanged and stores its positive value in errno.
 */
static inline int libpevt_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* libpevt_err_ptr() - set errno to -@err and return NULL. */
static inline void *libpevt_err_ptr(int err)
{
	errno = -err;
	return NULL;
}

/*
 * libpevt_opts_copy() - copy a caller's opts struct (first member
 * size_t sz, may be NULL) into @dst of @dst_sz bytes, as this library
 * knows it: fields the caller's (older) struct lacks stay zero, i.e.
 * defaults; a newer caller's unknown tail must be zero (libbpf's
 * OPTS_VALID).  Returns 0 or -EINVAL.
 */
static inline int libpevt_opts_copy(void *dst, size_t dst_sz, const void *src)
{
	const unsigned char *s = src;
	size_t sz, i;

	memset(dst, 0, dst_sz);
	*(size_t *)dst = dst_sz;
	if (!src)
		return 0;
	memcpy(&sz, src, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (i = dst_sz; i < sz; i++)
		if (s[i])
			return -EINVAL;
	memcpy((unsigned char *)dst + sizeof(size_t), s + sizeof(size_t),
	       (sz < dst_sz ? sz : dst_sz) - sizeof(size_t));
	return 0;
}

#endif /* __LIBPEVT_INTERNAL_LIB_H */
