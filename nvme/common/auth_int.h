/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of the DH-HMAC-CHAP library share and nobody else uses.
 */
#ifndef RDMARW_NVME_AUTH_INT_H
#define RDMARW_NVME_AUTH_INT_H

#include "auth.h"

int rdmarw__auth_copy_nqn(char *dst, const char *nqn);
int rdmarw__auth_load_key(const char *secret, const char *nqn,
			  struct nvme_dhchap_key *out);
int rdmarw__auth_random(uint8_t *buf, size_t len);

#endif /* RDMARW_NVME_AUTH_INT_H */
