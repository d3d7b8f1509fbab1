// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A C++ consumer: includes the public headers as C++, links the shared
 * library (only what it exports) and runs an RDMA READ and an RDMA WRITE
 * through rdma_rw_ctx_* between two software devices on every profile,
 * checking every byte.  Exit status 0 when all arrived.
 */
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

const u32 port = 1;
const unsigned int nr_pages = 3;
const unsigned int len = nr_pages * 4096 - 100; // not whole pages

struct host {
	ib_device *dev = nullptr;
	ib_pd *pd = nullptr;
	ib_cq *cq = nullptr;
	ib_qp *qp = nullptr;
};

struct io {
	ib_cqe cqe;
	bool done = false;
	ib_wc_status status = IB_WC_GENERAL_ERR;
};

void io_done(ib_cq *, ib_wc *wc)
{
	io *p = container_of(wc->wr_cqe, io, cqe);

	p->done = true;
	p->status = wc->status;
}

bool host_up(soft_fabric *fabric, const char *profile, host &h)
{
	soft_profile prof;

	if (soft_profile_get(profile, &prof))
		return false;
	h.dev = soft_device_create(fabric, nullptr, &prof);
	if (IS_ERR(h.dev))
		return false;
	h.pd = ib_alloc_pd(h.dev, 0);
	if (IS_ERR(h.pd))
		return false;
	h.cq = ib_alloc_cq(h.dev, nullptr, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(h.cq))
		return false;
	ib_qp_init_attr attr;
	std::memset(&attr, 0, sizeof(attr));
	attr.send_cq = h.cq;
	attr.recv_cq = h.cq;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = port;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 4;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = 2;
	h.qp = ib_create_qp(h.pd, &attr);
	return !IS_ERR(h.qp);
}

void host_down(host &h)
{
	if (h.qp && !IS_ERR(h.qp))
		ib_destroy_qp(h.qp);
	if (h.cq && !IS_ERR(h.cq))
		ib_free_cq(h.cq);
	if (h.pd && !IS_ERR(h.pd))
		ib_dealloc_pd(h.pd);
	if (h.dev && !IS_ERR(h.dev))
		soft_device_destroy(h.dev);
}

// One transfer between local pages (a scatterlist) and the remote buffer.
bool transfer(host &local, std::vector<unsigned char *> &pages,
	      ib_mr *remote_mr, unsigned char *remote, dma_data_direction dir)
{
	scatterlist sgl[nr_pages];
	rdma_rw_ctx ctx;
	io op;
	int ret;

	sg_init_table(sgl, nr_pages);
	for (unsigned int i = 0; i < nr_pages; i++)
		sg_set_buf(&sgl[i], pages[i],
			   i + 1 < nr_pages ? 4096 : len - 4096 * i);
	ret = rdma_rw_ctx_init(&ctx, local.qp, port, sgl, nr_pages, 0,
			       (u64)(uintptr_t)remote, remote_mr->rkey, dir);
	if (ret < 0) {
		std::fprintf(stderr, "rdma_rw_ctx_init: %d\n", ret);
		return false;
	}
	op.cqe.done = io_done;
	ret = rdma_rw_ctx_post(&ctx, local.qp, port, &op.cqe, nullptr);
	for (int round = 0; !ret && !op.done && round < 100; round++)
		ib_process_cq_direct(local.cq, 16);
	rdma_rw_ctx_destroy(&ctx, local.qp, port, sgl, nr_pages, dir);
	if (ret || !op.done || op.status != IB_WC_SUCCESS) {
		std::fprintf(stderr, "post %d, done %d, status %s\n", ret,
			     op.done, ib_wc_status_msg(op.status));
		return false;
	}
	return true;
}

bool run(const char *profile)
{
	soft_fabric *fabric = soft_fabric_create();
	host a, b;
	std::vector<unsigned char> remote(len);
	std::vector<unsigned char> mem(4096 * (nr_pages + 1));
	std::vector<unsigned char *> pages;
	ib_mr *mr = nullptr;
	bool ok = false;

	if (IS_ERR(fabric))
		return false;
	// page-aligned local pages
	unsigned char *base = (unsigned char *)(((uintptr_t)mem.data() + 4095) &
						~(uintptr_t)4095);
	for (unsigned int i = 0; i < nr_pages; i++)
		pages.push_back(base + 4096 * i);

	if (!host_up(fabric, profile, a) || !host_up(fabric, profile, b) ||
	    soft_qp_connect(a.qp, b.qp))
		goto out;
	mr = ib_reg_user_mr(b.pd, (u64)(uintptr_t)remote.data(), len,
			    (u64)(uintptr_t)remote.data(),
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				    IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr))
		goto out;

	// READ: the remote bytes land in the local pages.
	for (unsigned int i = 0; i < len; i++)
		remote[i] = (unsigned char)(i * 7 + 1);
	std::memset(base, 0, 4096 * nr_pages);
	if (!transfer(a, pages, mr, remote.data(), DMA_FROM_DEVICE))
		goto out;
	for (unsigned int i = 0; i < len; i++)
		if (base[i] != (unsigned char)(i * 7 + 1)) {
			std::fprintf(stderr, "%s READ: byte %u\n", profile, i);
			goto out;
		}

	// WRITE: the local pages land in the remote buffer.
	for (unsigned int i = 0; i < len; i++)
		base[i] = (unsigned char)(i * 13 + 5);
	std::memset(remote.data(), 0, len);
	if (!transfer(a, pages, mr, remote.data(), DMA_TO_DEVICE))
		goto out;
	for (unsigned int i = 0; i < len; i++)
		if (remote[i] != (unsigned char)(i * 13 + 5)) {
			std::fprintf(stderr, "%s WRITE: byte %u\n", profile, i);
			goto out;
		}
	ok = true;
out:
	if (mr && !IS_ERR(mr))
		ib_dereg_mr(mr);
	host_down(a);
	host_down(b);
	soft_fabric_destroy(fabric);
	return ok;
}

} // namespace

int main()
{
	const char *profiles[] = { "mlx5", "rxe", "siw" };
	int failed = 0;

	for (const char *p : profiles) {
		bool ok = run(p);

		std::printf("%s: READ and WRITE %s\n", p, ok ? "ok" : "FAILED");
		failed += !ok;
	}
	return failed ? 1 : 0;
}
