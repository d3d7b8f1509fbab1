/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The identifiers host and target both check: NQNs (on the wire, in the
 * Connect data's 256-byte fields, and given as strings) and serial
 * numbers.  The rules are the kernel's where it has one (lengths from
 * include/linux/nvme.h, the serial's printable ASCII from
 * drivers/nvme/target/configfs.c); docs/deviations.md says where they are
 * stricter.
 */
#ifndef RDMARW_NVME_IDS_H
#define RDMARW_NVME_IDS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest serial number (Identify Controller SN, 20 bytes). */
#define NVME_SN_MAX_SIZE 20
/* The longest model number (Identify Controller MN, 40 bytes). */
#define NVME_MN_MAX_SIZE 40

/**
 * nvme_nqn_valid() - is a string an acceptable NQN
 * @nqn: the name, NUL terminated (NULL: not valid)
 *
 * One to NVMF_NQN_SIZE (223) bytes, each printable ASCII (0x20 to 0x7e).
 *
 * Return: true when it is.
 */
bool nvme_nqn_valid(const char *nqn);

/**
 * nvme_nqn_field_valid() - is an NQN field of the wire acceptable
 * @field: the NVMF_NQN_FIELD_LEN (256) bytes of a Connect data NQN field
 *
 * The name is the bytes before the first NUL: nvme_nqn_valid() of it,
 * and every byte after it NUL (nothing hidden behind an embedded NUL, and
 * the field terminated).
 *
 * Return: true when it is.
 */
bool nvme_nqn_field_valid(const char *field);

/**
 * nvme_serial_valid() - is a string an acceptable serial number
 * @sn: the serial number, NUL terminated (NULL: not valid)
 *
 * One to NVME_SN_MAX_SIZE (20) bytes of printable ASCII, as the kernel's
 * nvmet accepts for attr_serial.
 *
 * Return: true when it is.
 */
bool nvme_serial_valid(const char *sn);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_NVME_IDS_H */
