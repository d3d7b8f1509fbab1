/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Signature (T10-DIF protection information) offload: the kernel's
 * include/rdma/signature.h, plus the two verbs of include/rdma/ib_verbs.h
 * that work on integrity MRs, ib_map_mr_sg_pi() and ib_check_mr_status().
 *
 * An integrity MR (ib_alloc_mr_integrity()) describes data in memory, with
 * its protection information (PI) in a separate list, and what the same data
 * looks like on the wire.  Once registered with IB_WR_REG_MR_INTEGRITY, every
 * byte that passes through it is transformed from one domain to the other by
 * the device: PI is inserted, stripped, or passed on and checked.  A check
 * failure does not fail the work request: ib_check_mr_status() reports it.
 *
 * T10-DIF: every pi_interval bytes of data carry 8 bytes of PI, stored big
 * endian: a 2-byte guard (CRC-16/T10-DIF of the interval, or its IP
 * checksum), a 2-byte application tag and a 4-byte reference tag.
 */
#ifndef RDMARW_SIGNATURE_H
#define RDMARW_SIGNATURE_H

#include <rdmarw/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ib_mr;
struct scatterlist;

/**
 * enum ib_signature_prot_cap - T10-DIF types a device offloads
 * (ib_device_attr.sig_prot_cap)
 * @IB_PROT_T10DIF_TYPE_1: type 1 (reference tag follows the LBA)
 * @IB_PROT_T10DIF_TYPE_2: type 2
 * @IB_PROT_T10DIF_TYPE_3: type 3 (reference tag not tied to the LBA)
 */
enum ib_signature_prot_cap {
	IB_PROT_T10DIF_TYPE_1 = 1,
	IB_PROT_T10DIF_TYPE_2 = 1 << 1,
	IB_PROT_T10DIF_TYPE_3 = 1 << 2,
};

/**
 * enum ib_signature_guard_cap - guard kinds a device computes
 * (ib_device_attr.sig_guard_cap)
 * @IB_GUARD_T10DIF_CRC: CRC-16/T10-DIF
 * @IB_GUARD_T10DIF_CSUM: IP checksum
 */
enum ib_signature_guard_cap {
	IB_GUARD_T10DIF_CRC = 1,
	IB_GUARD_T10DIF_CSUM = 1 << 1,
};

/**
 * enum ib_signature_type - what a domain carries
 * @IB_SIG_TYPE_NONE: data only
 * @IB_SIG_TYPE_T10_DIF: data with T10-DIF PI per interval
 */
enum ib_signature_type {
	IB_SIG_TYPE_NONE,
	IB_SIG_TYPE_T10_DIF,
};

/**
 * enum ib_t10_dif_bg_type - how the guard is computed
 * @IB_T10DIF_CRC: CRC-16/T10-DIF (polynomial 0x8BB7, no reflection, no
 *                 final xor), seeded with the domain's bg
 * @IB_T10DIF_CSUM: the IP checksum (ones' complement of the ones'
 *                  complement sum of big-endian 16-bit words), with bg
 *                  added to the sum
 */
enum ib_t10_dif_bg_type {
	IB_T10DIF_CRC,
	IB_T10DIF_CSUM,
};

/**
 * struct ib_t10_dif_domain - a T10-DIF domain
 * @bg_type: guard kind
 * @pi_interval: data bytes per PI tuple (the software device takes powers
 *               of two from 512 to 32768)
 * @bg: guard seed (0 for the standard CRC and checksum)
 * @app_tag: application tag of every block
 * @ref_tag: reference tag of the first block of the MR
 * @ref_remap: the reference tag increments by one per block (types 1, 2);
 *             otherwise every block carries @ref_tag
 * @app_escape: skip the checks of a block whose application tag is 0xffff
 * @ref_escape: with @app_escape, skip only blocks whose application tag is
 *              0xffff and whose reference tag is 0xffffffff (type 3)
 * @apptag_check_mask: bits of the application tag that are checked
 */
struct ib_t10_dif_domain {
	enum ib_t10_dif_bg_type bg_type;
	u16 pi_interval;
	u16 bg;
	u16 app_tag;
	u32 ref_tag;
	bool ref_remap;
	bool app_escape;
	bool ref_escape;
	u16 apptag_check_mask;
};

/**
 * struct ib_sig_domain - the layout of one domain
 * @sig_type: enum ib_signature_type
 * @sig: the parameters of @sig_type
 * @sig.dif: IB_SIG_TYPE_T10_DIF
 */
struct ib_sig_domain {
	enum ib_signature_type sig_type;
	union {
		struct ib_t10_dif_domain dif;
	} sig;
};

/**
 * struct ib_sig_attrs - what an integrity MR does to the data through it
 * @check_mask: bytes of the incoming PI tuple that are checked, one bit per
 *              byte, bit 7 for byte 0: IB_SIG_CHECK_GUARD (0xc0),
 *              IB_SIG_CHECK_APPTAG (0x30), IB_SIG_CHECK_REFTAG (0x0f)
 * @mem: the memory domain (PI, if any, in the MR's protection list)
 * @wire: the wire domain (PI, if any, after each interval of data)
 * @meta_length: bytes of the protection list; set by ib_map_mr_sg_pi()
 *
 * Data leaving memory through the MR (RDMA WRITE source, RDMA READ target
 * of a remote peer) is checked against @mem and leaves as @wire; data
 * arriving (RDMA READ sink, RDMA WRITE target) is checked against @wire
 * and stored as @mem.  When both domains are T10-DIF with the same
 * interval, each PI field is copied from the incoming tuple if both domains
 * agree on it (guard kind, application tag, reference tag) and generated
 * from the outgoing domain otherwise.
 */
struct ib_sig_attrs {
	u8 check_mask;
	struct ib_sig_domain mem;
	struct ib_sig_domain wire;
	int meta_length;
};

/**
 * enum ib_sig_err_type - which PI field failed its check
 * @IB_SIG_BAD_GUARD: the guard
 * @IB_SIG_BAD_REFTAG: the reference tag
 * @IB_SIG_BAD_APPTAG: the application tag
 */
enum ib_sig_err_type {
	IB_SIG_BAD_GUARD,
	IB_SIG_BAD_REFTAG,
	IB_SIG_BAD_APPTAG,
};

/* Bits of ib_sig_attrs.check_mask: 2 guard bytes, 2 app tag, 4 ref tag. */
enum {
	IB_SIG_CHECK_GUARD = 0xc0,
	IB_SIG_CHECK_APPTAG = 0x30,
	IB_SIG_CHECK_REFTAG = 0x0f,
};

/**
 * struct ib_sig_err - the first failed check of a transfer
 * @err_type: enum ib_sig_err_type (guard before reference tag before
 *            application tag when several fields of a block fail)
 * @expected: the value the field should have had
 * @actual: the value it had
 * @sig_err_offset: byte offset of the failed block in the protected layout
 *                  (block index times pi_interval + 8)
 * @key: the MR key the transfer went through
 */
struct ib_sig_err {
	enum ib_sig_err_type err_type;
	u32 expected;
	u32 actual;
	u64 sig_err_offset;
	u32 key;
};

/**
 * enum ib_mr_status_check - what ib_check_mr_status() is asked for
 * @IB_MR_CHECK_SIG_STATUS: the signature status
 */
enum ib_mr_status_check {
	IB_MR_CHECK_SIG_STATUS = 1,
};

/**
 * struct ib_mr_status - the answer of ib_check_mr_status()
 * @fail_status: IB_MR_CHECK_SIG_STATUS when a signature error was found
 * @sig_err: the error, valid when @fail_status says so
 */
struct ib_mr_status {
	u32 fail_status;
	struct ib_sig_err sig_err;
};

/**
 * ib_map_mr_sg_pi() - map the data and protection lists of an integrity MR
 * @mr: an IB_MR_TYPE_INTEGRITY MR, not currently registered
 * @data_sg: DMA-mapped data list
 * @data_sg_nents: entries of @data_sg
 * @data_sg_offset: bytes to skip in the first data entry, or NULL; set to 0
 *                  when everything was mapped
 * @meta_sg: DMA-mapped protection list, or NULL when @meta_sg_nents is 0
 * @meta_sg_nents: entries of @meta_sg
 * @meta_sg_offset: bytes to skip in the first protection entry, or NULL
 * @page_size: page size of the mapping (a power of two, at least 4 KiB)
 *
 * Maps both lists whole (an integrity MR has no partial mapping).  The MR
 * becomes zero based, as on mlx5: iova 0, length the data bytes plus the
 * protection bytes; sig_attrs->meta_length is set to the protection bytes.
 * The software device keeps one element per entry (adjacent entries merge),
 * at most max_num_sg + max_num_meta_sg in all.
 *
 * Return: 0; -EINVAL for a NULL @mr or @data_sg, @data_sg_nents <= 0,
 * @meta_sg_nents < 0, @meta_sg NULL with entries, a bad @page_size, an
 * offset at or beyond its first entry's length, an MR that is not an
 * integrity MR, or an empty entry; -ENOMEM when the entries do not fit the
 * MR; -EOPNOTSUPP when the device has no integrity MRs.
 */
int ib_map_mr_sg_pi(struct ib_mr *mr, struct scatterlist *data_sg,
		    int data_sg_nents, unsigned int *data_sg_offset,
		    struct scatterlist *meta_sg, int meta_sg_nents,
		    unsigned int *meta_sg_offset, unsigned int page_size);

/**
 * ib_check_mr_status() - read and clear an MR's signature status
 * @mr: an integrity MR
 * @check_mask: enum ib_mr_status_check bits
 * @mr_status: filled in: fail_status, and sig_err when it says so
 *
 * Call after the transfers through @mr have completed.  An error found by
 * the device is reported once: the call clears it.  As on mlx5, an error
 * recorded under another key variant than the MR's current one is reported
 * as IB_SIG_BAD_GUARD at offset 0 with that key, and a new
 * IB_WR_REG_MR_INTEGRITY of @mr can only be posted after this function was
 * called with IB_MR_CHECK_SIG_STATUS since the previous one: ib_post_send()
 * refuses it with -EINVAL otherwise.  This holds for MRs of the QP's
 * signature pool too: rdma_rw_ctx_destroy_signature() puts the MR back
 * unchecked, and the next rdma_rw_ctx_post() that registers it fails with
 * -EINVAL until its status is read.
 *
 * Return: 0; -EINVAL for NULL arguments, unknown @check_mask bits or an MR
 * that is not an integrity MR; -EOPNOTSUPP when the device has no
 * integrity MRs.
 */
int ib_check_mr_status(struct ib_mr *mr, u32 check_mask,
		       struct ib_mr_status *mr_status);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_SIGNATURE_H */
