/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBPEVT_INTERNAL_LIB_H
#define __LIBPEVT_INTERNAL_LIB_H

#include <errno.h>

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

#endif /* __LIBPEVT_INTERNAL_LIB_H */
