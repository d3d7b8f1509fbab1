// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Copies between a scatterlist and a linear buffer (lib/scatterlist.c). */
#include <rdmarw/scatterlist.h>

#include <stdbool.h>
#include <string.h>

static size_t sg_pcopy(struct scatterlist *sgl, unsigned int nents, void *buf,
		       size_t buflen, size_t skip, bool to_buf)
{
	struct scatterlist *sg = sgl;
	size_t done = 0;
	unsigned int i;

	for (i = 0; sg && i < nents && done < buflen; i++, sg = sg_next(sg)) {
		size_t len = sg->length, n;
		char *p = sg_virt(sg);

		if (skip >= len) {
			skip -= len;
			continue;
		}
		p += skip;
		len -= skip;
		skip = 0;
		n = len < buflen - done ? len : buflen - done;
		if (to_buf)
			memcpy((char *)buf + done, p, n);
		else
			memcpy(p, (char *)buf + done, n);
		done += n;
	}
	return done;
}

size_t sg_pcopy_to_buffer(struct scatterlist *sgl, unsigned int nents,
			  void *buf, size_t buflen, size_t skip)
{
	return sg_pcopy(sgl, nents, buf, buflen, skip, true);
}

size_t sg_pcopy_from_buffer(struct scatterlist *sgl, unsigned int nents,
			    const void *buf, size_t buflen, size_t skip)
{
	return sg_pcopy(sgl, nents, (void *)(uintptr_t)buf, buflen, skip,
			false);
}

size_t sg_copy_to_buffer(struct scatterlist *sgl, unsigned int nents, void *buf,
			 size_t buflen)
{
	return sg_pcopy(sgl, nents, buf, buflen, 0, true);
}

size_t sg_copy_from_buffer(struct scatterlist *sgl, unsigned int nents,
			   const void *buf, size_t buflen)
{
	return sg_pcopy(sgl, nents, (void *)(uintptr_t)buf, buflen, 0, false);
}
