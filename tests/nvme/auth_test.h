/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the DH-HMAC-CHAP tests share: cmocka, the NQNs the vectors were
 * made with, and a hex parser for the vectors.
 */
#ifndef RDMARW_TESTS_NVME_AUTH_TEST_H
#define RDMARW_TESTS_NVME_AUTH_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "auth.h"

#define T_HOSTNQN \
	"nqn.2014-08.org.nvmexpress:uuid:12345678-1234-1234-1234-123456789abc"
#define T_SUBNQN "nqn.2014-08.org.nvmexpress:subsys-auth"

static inline int t_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Lower-case hex into @out; the number of bytes (fails the test on junk). */
static inline size_t t_hex(const char *hex, uint8_t *out, size_t size)
{
	size_t n = strlen(hex) / 2, i;

	assert_int_equal(strlen(hex) % 2, 0);
	assert_true(n <= size);
	for (i = 0; i < n; i++) {
		int hi = t_nibble(hex[2 * i]), lo = t_nibble(hex[2 * i + 1]);

		assert_true(hi >= 0 && lo >= 0);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return n;
}

/* bytes first, first + 1, ... */
static inline void t_seq(uint8_t *out, size_t n, unsigned int first)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (uint8_t)(first + i);
}

#endif /* RDMARW_TESTS_NVME_AUTH_TEST_H */
