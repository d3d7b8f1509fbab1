// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nvmet_halfopen: the lab's stranger (issue 27).  Opens N NVMe/RDMA I/O
 * queue connections (rdma_cm with the NVMe/RDMA request private data:
 * queue 1, 128 deep) to a target on a real RDMA device and never sends a
 * Connect capsule on them: what costs a target memory before it knows who
 * is there.  Prints one line when the requests are answered
 * ("halfopen: established E rejected R failed F"), then waits until its
 * standard input ends or @hold seconds pass, and prints how many the target
 * closed meanwhile ("halfopen: closed by the target C of E").  Exit status
 * 0 when every request got an answer (established or rejected), 1
 * otherwise, 2 for bad arguments.
 *
 * Usage: nvmet_halfopen SRC_IP DST_IP PORT N HOLD_SECONDS [QID]
 * (QID: the queue asked for, 1 by default: an I/O queue of 128 commands;
 * 0: an admin queue of 32).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmarw/ibv.h>
#include <rdmarw/rdma_cm.h>

#include "nvme_proto.h"

#define MAX_HALF 512

struct half {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	bool resolved, routed, established, rejected, disconnected, failed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static int handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct half *h = id->context;

	pthread_mutex_lock(&lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		h->resolved = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		h->routed = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		h->established = true;
		break;
	case RDMA_CM_EVENT_REJECTED:
		h->rejected = true;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		h->disconnected = true;
		break;
	default:
		h->failed = true;
		break;
	}
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return 0;
}

/* Wait (10 s at most) for *@flag, or an end of @h's request. */
static bool wait_for(struct half *h, const bool *flag)
{
	struct timespec ts;
	bool ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&lock);
	while (!*flag && !h->failed && !h->rejected &&
	       pthread_cond_timedwait(&cond, &lock, &ts) == 0)
		;
	ret = *flag;
	pthread_mutex_unlock(&lock);
	return ret;
}

static int parse_ip(const char *ip, u16 port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

/* Ask for one queue; true when the target answered (either way). */
static bool half_open(struct half *h, struct sockaddr_storage *src,
		      struct sockaddr_storage *dst, u16 qid)
{
	struct nvme_rdma_cm_req req = {
		.qid = cpu_to_le16(qid),
		.hrqsize = cpu_to_le16(qid ? 128 : 32),
		.hsqsize = cpu_to_le16(qid ? 127 : 31),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 16,
		.initiator_depth = 16,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct ib_qp_init_attr qa;

	h->id = rdma_create_id(&init_net, handler, h, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(h->id)) {
		h->id = NULL;
		return false;
	}
	if (rdma_resolve_addr(h->id, (struct sockaddr *)src,
			      (struct sockaddr *)dst, 2000) ||
	    !wait_for(h, &h->resolved) || rdma_resolve_route(h->id, 2000) ||
	    !wait_for(h, &h->routed))
		return false;
	h->pd = ib_alloc_pd(h->id->device, 0);
	if (IS_ERR(h->pd)) {
		h->pd = NULL;
		return false;
	}
	h->cq = ib_alloc_cq(h->id->device, NULL, 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(h->cq)) {
		h->cq = NULL;
		return false;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = h->cq;
	qa.recv_cq = h->cq;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	if (rdma_create_qp(h->id, h->pd, &qa) || rdma_connect(h->id, &cp))
		return false;
	wait_for(h, &h->established);
	return h->established || h->rejected;
}

static void half_close(struct half *h)
{
	if (!h->id)
		return;
	if (h->established && !h->disconnected)
		rdma_disconnect(h->id);
	if (h->id->qp)
		rdma_destroy_qp(h->id);
	rdma_destroy_id(h->id);
	if (h->cq)
		ib_free_cq(h->cq);
	if (h->pd)
		ib_dealloc_pd(h->pd);
}

int main(int argc, char **argv)
{
	static struct half h[MAX_HALF];
	struct sockaddr_storage src, dst;
	unsigned int n, hold, i, est = 0, rej = 0, bad = 0, closed = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	unsigned long qid = 1;
	char *end;
	long port;

	if (argc != 6 && argc != 7)
		goto usage;
	if (argc == 7) {
		qid = strtoul(argv[6], &end, 10);
		if (*end || qid > 65534)
			goto usage;
	}
	port = strtol(argv[3], &end, 10);
	if (*end || port < 1 || port > 65535)
		goto usage;
	n = (unsigned int)strtoul(argv[4], &end, 10);
	if (*end || !n || n > MAX_HALF)
		goto usage;
	hold = (unsigned int)strtoul(argv[5], &end, 10);
	if (*end || hold > 3600)
		goto usage;
	if (parse_ip(argv[1], 0, &src) || parse_ip(argv[2], (u16)port, &dst))
		goto usage;
	if (rdmarw_ibv_open_all() < 0) {
		fprintf(stderr, "halfopen: no RDMA device\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (!half_open(&h[i], &src, &dst, (u16)qid))
			bad++;
		else if (h[i].established)
			est++;
		else
			rej++;
	}
	printf("halfopen: established %u rejected %u failed %u\n", est, rej,
	       bad);
	fflush(stdout);
	/* hold them until stdin ends (or @hold seconds) */
	while (hold) {
		int r = poll(&pfd, 1, 1000);
		char buf[64];

		if (r > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
		hold--;
	}
	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++)
		closed += h[i].established && h[i].disconnected;
	pthread_mutex_unlock(&lock);
	printf("halfopen: closed by the target %u of %u\n", closed, est);
	fflush(stdout);
	for (i = 0; i < n; i++)
		half_close(&h[i]);
	return bad ? 1 : 0;
usage:
	fprintf(stderr, "usage: nvmet_halfopen SRC_IP DST_IP PORT N "
			"HOLD_SECONDS [QID]\n");
	return 2;
}
