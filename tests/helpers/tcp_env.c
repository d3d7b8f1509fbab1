// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers/tcp_env.h"

void tcp_loopback_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd[0] >= 0);
	assert_int_equal(connect(fd[0], (struct sockaddr *)&a, sizeof(a)), 0);
	fd[1] = accept(l, NULL, NULL);
	assert_true(fd[1] >= 0);
	close(l);
}

void tcp_env_profile(struct soft_profile *p, bool threaded)
{
	assert_int_equal(soft_profile_get("siw", p), 0);
	p->tcp = true;
	p->threaded = threaded;
}

struct ib_qp *tcp_env_qp(struct ib_pd *pd, struct ib_cq *cq, u32 max_wr,
			 u32 max_sge)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = max_wr,
			 .max_recv_wr = max_wr,
			 .max_send_sge = max_sge,
			 .max_recv_sge = max_sge },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT,
				.qp_access_flags = TCP_ENV_ACCESS,
				.port_num = 1 };
	struct ib_qp *qp = ib_create_qp(pd, &qa);

	assert_false(IS_ERR_OR_NULL(qp));
	assert_int_equal(ib_modify_qp(qp, &a,
				      IB_QP_STATE | IB_QP_PKEY_INDEX |
					      IB_QP_PORT | IB_QP_ACCESS_FLAGS),
			 0);
	return qp;
}

void tcp_env_rts(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTR };

	assert_int_equal(ib_modify_qp(qp, &a,
				      IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
					      IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					      IB_QP_MAX_DEST_RD_ATOMIC |
					      IB_QP_MIN_RNR_TIMER),
			 0);
	a.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(qp, &a,
				      IB_QP_STATE | IB_QP_TIMEOUT |
					      IB_QP_RETRY_CNT |
					      IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
					      IB_QP_MAX_QP_RD_ATOMIC),
			 0);
}
