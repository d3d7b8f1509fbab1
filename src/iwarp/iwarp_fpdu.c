// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FPDU framing (RFC 5044 4): the ULPDU length, the ULPDU (DDP header and
 * payload), zero pad to a multiple of 4, then the CRC32c of all of them.
 * The CRC field is always sent, zero when CRC was not negotiated, as
 * siw_qp_tx.c does.  CRC32c is ISA-L's crc32_iscsi(): seeded with ~0, the
 * result inverted, stored least significant byte first (RFC 3720 B.4: 32
 * zero bytes give aa 36 91 8a on the wire), which is what siw compares.
 *
 * A sender gathers the header, the payload iovecs (never copied) and one
 * trailer (pad + CRC) in one iovec array for one sendmsg().
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "iwarp/iwarp.h"

/**
 * rdmarw__iwarp_crc32c() - continue a CRC32c
 * @state: ~0 to start, else a previous return value
 * @buf: the bytes
 * @len: their number
 *
 * The value to send is the inverse of the last state.
 *
 * Return: the new state.
 */
uint32_t rdmarw__iwarp_crc32c(uint32_t state, const void *buf, size_t len)
{
	while (len) {
		/* crc32_iscsi() takes an int length */
		int n = len > 0x40000000 ? 0x40000000 : (int)len;

		state = crc32_iscsi((unsigned char *)buf, n, state);
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
	}
	return state;
}

/**
 * rdmarw__iwarp_fpdu_tx() - frame one FPDU for sendmsg()
 * @hdr: the DDP/RDMAP header (its first two bytes get the ULPDU length)
 * @hdr_len: its length (4 to 48 bytes)
 * @pay: the payload iovecs (zero-length ones are skipped); may be NULL
 *	when @npay is 0
 * @npay: their number
 * @crc: CRC32c negotiated (else the CRC field is zero)
 * @trl: where the pad and CRC are written; must live until sent
 * @iov: the iovec array to fill: header, payload, trailer
 * @max_iov: its size (at least @npay + IWARP_TX_IOV_EXTRA)
 *
 * Return: the number of iovecs filled, -EINVAL for bad arguments,
 * -EMSGSIZE when the ULPDU would exceed 65535 bytes, -ENOSPC when
 * @max_iov is short.
 */
int rdmarw__iwarp_fpdu_tx(void *hdr, size_t hdr_len, const struct iovec *pay,
			  int npay, bool crc, struct iwarp_tx_trailer *trl,
			  struct iovec *iov, int max_iov)
{
	size_t total = hdr_len - IWARP_MPA_HDR_LEN;
	uint32_t state = ~0u;
	unsigned int pad;
	int i, n = 0;

	if (!hdr || hdr_len < sizeof(struct iwarp_ctrl) ||
	    hdr_len > IWARP_HDR_MAX || npay < 0 || (npay && !pay) || !trl ||
	    !iov)
		return -EINVAL;
	if (max_iov < 0 || npay > max_iov - IWARP_TX_IOV_EXTRA)
		return -ENOSPC;
	for (i = 0; i < npay; i++) {
		if (pay[i].iov_len && !pay[i].iov_base)
			return -EINVAL;
		if (pay[i].iov_len > 0xffff - total)
			return -EMSGSIZE;
		total += pay[i].iov_len;
	}
	iwarp_st16(hdr, (uint16_t)total);
	iov[n].iov_base = hdr;
	iov[n++].iov_len = hdr_len;
	if (crc)
		state = rdmarw__iwarp_crc32c(state, hdr, hdr_len);
	for (i = 0; i < npay; i++) {
		if (!pay[i].iov_len)
			continue;
		if (crc)
			state = rdmarw__iwarp_crc32c(state, pay[i].iov_base,
						     pay[i].iov_len);
		iov[n++] = pay[i];
	}
	pad = (4 - (total + IWARP_MPA_HDR_LEN) % 4) % 4;
	memset(trl->bytes, 0, sizeof(trl->bytes));
	if (crc) {
		state = ~rdmarw__iwarp_crc32c(state, trl->bytes, pad);
		trl->bytes[pad] = (uint8_t)state;
		trl->bytes[pad + 1] = (uint8_t)(state >> 8);
		trl->bytes[pad + 2] = (uint8_t)(state >> 16);
		trl->bytes[pad + 3] = (uint8_t)(state >> 24);
	}
	iov[n].iov_base = trl->bytes;
	iov[n++].iov_len = pad + IWARP_MPA_CRC_LEN;
	return n;
}
