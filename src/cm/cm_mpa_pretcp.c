// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TEMPORARY, until the TCP data path (branch tcp, src/soft/soft_tcp.c)
 * lands: the soft_tcp.h calls the MPA table makes, answering as a library
 * without TCP devices does (soft_device_create() refuses .tcp with
 * -EOPNOTSUPP, so no device is a TCP device).  The merge of branch tcp
 * deletes this file; a link error (the symbols defined twice) says it was
 * forgotten.
 */
#include "soft/soft_tcp.h"

#include <errno.h>

bool rdmarw__soft_is_tcp(const struct ib_device *dev)
{
	return false;
}

int rdmarw__soft_tcp_attach(struct ib_qp *qp, const struct soft_tcp_conn *c)
{
	return -EOPNOTSUPP;
}

int rdmarw__soft_tcp_disconnect(struct ib_qp *qp)
{
	return -EOPNOTSUPP;
}

void rdmarw__soft_tcp_forget(struct ib_qp *qp)
{
}
