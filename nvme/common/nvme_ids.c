// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Identifier checks shared by the NVMe host and target (nvme_ids.h).
 */
#include <string.h>

#include "nvme_ids.h"
#include "nvme_proto.h"

static bool nvme_printable(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

bool nvme_nqn_valid(const char *nqn)
{
	size_t len;

	if (!nqn)
		return false;
	len = strnlen(nqn, NVMF_NQN_SIZE + 1);
	return len && len <= NVMF_NQN_SIZE && nvme_printable(nqn, len);
}

bool nvme_nqn_field_valid(const char *field)
{
	size_t len, i;

	if (!field)
		return false;
	len = strnlen(field, NVMF_NQN_FIELD_LEN);
	if (!len || len > NVMF_NQN_SIZE || !nvme_printable(field, len))
		return false;
	for (i = len; i < NVMF_NQN_FIELD_LEN; i++)
		if (field[i])
			return false;
	return true;
}

bool nvme_serial_valid(const char *sn)
{
	size_t len;

	if (!sn)
		return false;
	len = strnlen(sn, NVME_SN_MAX_SIZE + 1);
	return len && len <= NVME_SN_MAX_SIZE && nvme_printable(sn, len);
}
