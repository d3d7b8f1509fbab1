/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's generic RDMA READ/WRITE context API (include/rdma/rw.h).
 *
 * Thread safety, as in the kernel: a context belongs to one caller at a time;
 * different contexts on the same QP may be initialised, posted and destroyed
 * from several threads at once (MR pools and context storage are serialised
 * per QP).
 */
#ifndef RDMARW_RW_H
#define RDMARW_RW_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/mr_pool.h>

/**
 * rdma_rw_mr_factor() - how many MRs (or READ WRs) a transfer needs
 * @device: the device
 * @port_num: port, from 1
 * @maxpages: pages of the largest transfer
 *
 * When the R/W API can use MRs on this port: ceil(@maxpages / pages per MR)
 * with pages per MR = min(max_fast_reg_page_list_len, 256); otherwise
 * ceil(@maxpages / max_sge_rd).
 *
 * Return: the factor; 0 for a NULL device, a bad port or @maxpages 0.
 */
unsigned int rdma_rw_mr_factor(struct ib_device *device, u32 port_num,
			       unsigned int maxpages);

/**
 * rdma_rw_max_send_wr() - Send Queue WRs needed for R/W contexts
 * @dev: the device
 * @port_num: port, from 1
 * @max_rdma_ctxs: contexts in flight at once
 * @create_flags: the QP's create flags
 *
 * Each context needs one WR, or three (LOCAL_INV, REG_MR, RDMA) when the
 * QP has IB_QP_CREATE_INTEGRITY_EN or the R/W API can use MRs on the port.
 *
 * Return: factor × @max_rdma_ctxs, saturated at UINT_MAX; 0 for a NULL
 * device or a bad port.
 */
unsigned int rdma_rw_max_send_wr(struct ib_device *dev, u32 port_num,
				 unsigned int max_rdma_ctxs, u32 create_flags);

/**
 * rdma_rw_init_qp() - grow a QP's Send Queue for its R/W contexts
 * @dev: the device
 * @attr: the QP's creation attributes; cap.max_send_wr grows by
 *        rdma_rw_max_send_wr() for cap.max_rdma_ctxs, capped at max_qp_wr
 *
 * ib_create_qp() calls it when cap.max_rdma_ctxs is set.  NULL arguments
 * do nothing.
 */
void rdma_rw_init_qp(struct ib_device *dev, struct ib_qp_init_attr *attr);

/**
 * rdma_rw_init_mrs() - set up a QP's MR pools for R/W contexts
 * @qp: the QP
 * @attr: its creation attributes
 *
 * With IB_QP_CREATE_INTEGRITY_EN: cap.max_rdma_ctxs integrity MRs in
 * qp->sig_mrs and as many regular MRs in qp->rdma_mrs, page lists of
 * min(max_pi_fast_reg_page_list_len, 256).  Otherwise, when the API can use
 * MRs on the port: cap.max_rdma_ctxs regular MRs with page lists of
 * min(max_fast_reg_page_list_len, 256).  ib_create_qp() calls it.
 *
 * Return: 0; -EINVAL for NULL arguments; the MR allocation error (nothing
 * stays allocated).
 */
int rdma_rw_init_mrs(struct ib_qp *qp, struct ib_qp_init_attr *attr);

/**
 * rdma_rw_cleanup_mrs() - free a QP's R/W MR pools
 * @qp: the QP; NULL does nothing
 *
 * ib_destroy_qp() calls it.
 */
void rdma_rw_cleanup_mrs(struct ib_qp *qp);

/**
 * rdma_rw_set_force_mr() - force MR use for every R/W context
 * @force: true to register memory for every transfer (both directions), as
 *         the kernel's rdma_rw.force_mr module parameter does
 *
 * Affects QPs created afterwards (their MR pools) and every context
 * initialised afterwards.  The environment variable RDMARW_FORCE_MR=1 sets
 * it at start-up.
 */
void rdma_rw_set_force_mr(bool force);

/**
 * rdma_rw_get_force_mr() - is MR use forced
 *
 * Return: the current setting.
 */
bool rdma_rw_get_force_mr(void);

#endif /* RDMARW_RW_H */
