/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The NVMe and NVMe-oF wire formats the in-process host builds and parses
 * (NVMe Base 2.0, NVMe over Fabrics 1.1, NVMe/RDMA transport binding).
 * Byte offsets are written out with accessors on byte arrays, so that the
 * host never depends on a compiler's struct layout or the CPU's byte order.
 */
#ifndef RDMARW_NVMEH_WIRE_H
#define RDMARW_NVMEH_WIRE_H

#include <rdmarw/compat.h>

#include <string.h>

#define NVMEH_SQE_SIZE 64
#define NVMEH_CQE_SIZE 16
#define NVMEH_NQN_SIZE 256
#define NVMEH_CONNECT_DATA_SIZE 1024
#define NVMEH_IDENTIFY_SIZE 4096

/* Admin and I/O opcodes (SQE byte 0). */
enum {
	NVMEH_OP_FLUSH = 0x00,
	NVMEH_OP_WRITE = 0x01,
	NVMEH_OP_READ = 0x02,
	NVMEH_OP_DSM = 0x09,
	NVMEH_ADMIN_GET_LOG_PAGE = 0x02,
	NVMEH_ADMIN_IDENTIFY = 0x06,
	NVMEH_ADMIN_SET_FEATURES = 0x09,
	NVMEH_ADMIN_GET_FEATURES = 0x0a,
	NVMEH_ADMIN_ASYNC_EVENT = 0x0c,
	NVMEH_ADMIN_KEEP_ALIVE = 0x18,
	NVMEH_OP_FABRICS = 0x7f,
};

/* Fabrics command types (SQE byte 4). */
enum {
	NVMEH_FCTYPE_PROP_SET = 0x00,
	NVMEH_FCTYPE_CONNECT = 0x01,
	NVMEH_FCTYPE_PROP_GET = 0x04,
};

/* Controller properties (offsets). */
enum {
	NVMEH_REG_CAP = 0x00,
	NVMEH_REG_VS = 0x08,
	NVMEH_REG_CC = 0x14,
	NVMEH_REG_CSTS = 0x1c,
};

#define NVMEH_CC_EN 0x1u
#define NVMEH_CC_CSS_ALL (0x6u << 4)
#define NVMEH_CC_SHN_NORMAL (0x1u << 14)
#define NVMEH_CC_IOSQES (6u << 16)
#define NVMEH_CC_IOCQES (4u << 20)
#define NVMEH_CSTS_RDY 0x1u
#define NVMEH_CSTS_CFS 0x2u
#define NVMEH_CSTS_SHST_MASK (0x3u << 2)
#define NVMEH_CSTS_SHST_CMPLT (0x2u << 2)

#define NVMEH_FEAT_NUM_QUEUES 0x07

/*
 * Dataset Management: cdw10 bits 7:0 hold the number of ranges minus one,
 * cdw11 the attributes; each range is 16 bytes (context attributes, LBA
 * count, starting LBA), at most 256 of them.
 */
#define NVMEH_DSM_AD (1u << 2)
#define NVMEH_DSM_RANGE_SIZE 16
#define NVMEH_DSM_MAX_RANGES 256

/* SQE byte 1: PSDT = SGL for data. */
#define NVMEH_SQE_FLAG_SGL 0x40

/* SGL descriptor types (descriptor byte 15). */
#define NVMEH_SGL_KEYED 0x40 /* keyed data block, address subtype */
#define NVMEH_SGL_KEYED_INV 0x4f /* ... and invalidate the key */
#define NVMEH_SGL_INCAPSULE 0x01 /* data block, offset subtype */

/*
 * Status field of a CQE (bits 15:1 of its last word): SCT in bits 10:8 and
 * SC in bits 7:0 of the value held here, DNR bit 14, More bit 13.
 */
#define NVMEH_SC_SUCCESS 0x000
#define NVMEH_SC_INVALID_OPCODE 0x001
#define NVMEH_SC_INVALID_FIELD 0x002
#define NVMEH_SC_CMDID_CONFLICT 0x003
#define NVMEH_SC_DATA_XFER_ERROR 0x004
#define NVMEH_SC_INTERNAL 0x006
#define NVMEH_SC_ABORT_REQ 0x007
#define NVMEH_SC_ABORT_QUEUE 0x008
#define NVMEH_SC_INVALID_NS 0x00b
#define NVMEH_SC_CMD_SEQ_ERROR 0x00c
#define NVMEH_SC_SGL_INVALID_LAST 0x00d
#define NVMEH_SC_SGL_INVALID_COUNT 0x00e
#define NVMEH_SC_SGL_INVALID_DATA 0x00f
#define NVMEH_SC_SGL_INVALID_TYPE 0x011
#define NVMEH_SC_SGL_INVALID_OFFSET 0x016
#define NVMEH_SC_LBA_RANGE 0x080
#define NVMEH_SC_CAP_EXCEEDED 0x081
#define NVMEH_SC_CONNECT_FORMAT 0x180
#define NVMEH_SC_CONNECT_CTRL_BUSY 0x181
#define NVMEH_SC_CONNECT_INVALID_PARAM 0x182
#define NVMEH_SC_CONNECT_INVALID_HOST 0x184
#define NVMEH_SC_HOST_PATH_ERROR 0x370
#define NVMEH_SC_HOST_ABORTED_CMD 0x371
#define NVMEH_SC_MASK 0x7ff
#define NVMEH_SC_DNR 0x4000

/* RDMA CM private data (NVMe/RDMA transport binding). */
#define NVMEH_CM_REQ_SIZE 32
#define NVMEH_CM_REJ_SIZE 4

static inline void nvmeh_put16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static inline void nvmeh_put24(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
}

static inline void nvmeh_put32(u8 *p, u32 v)
{
	nvmeh_put16(p, (u16)v);
	nvmeh_put16(p + 2, (u16)(v >> 16));
}

static inline void nvmeh_put64(u8 *p, u64 v)
{
	nvmeh_put32(p, (u32)v);
	nvmeh_put32(p + 4, (u32)(v >> 32));
}

static inline u16 nvmeh_get16(const u8 *p)
{
	return (u16)(p[0] | p[1] << 8);
}

static inline u32 nvmeh_get32(const u8 *p)
{
	return nvmeh_get16(p) | (u32)nvmeh_get16(p + 2) << 16;
}

static inline u64 nvmeh_get64(const u8 *p)
{
	return nvmeh_get32(p) | (u64)nvmeh_get32(p + 4) << 32;
}

/* SQE fields. */
#define NVMEH_SQE_OPCODE 0
#define NVMEH_SQE_FLAGS 1
#define NVMEH_SQE_CID 2
#define NVMEH_SQE_NSID 4
#define NVMEH_SQE_FCTYPE 4
#define NVMEH_SQE_DPTR 24
#define NVMEH_SQE_CDW10 40
#define NVMEH_SQE_CDW11 44
#define NVMEH_SQE_CDW12 48

/* Fabrics Connect and Property Get/Set fields. */
#define NVMEH_CONNECT_RECFMT 40
#define NVMEH_CONNECT_QID 42
#define NVMEH_CONNECT_SQSIZE 44
#define NVMEH_CONNECT_KATO 48
#define NVMEH_PROP_ATTRIB 40
#define NVMEH_PROP_OFFSET 44
#define NVMEH_PROP_VALUE 48

/* Connect data. */
#define NVMEH_CDATA_HOSTID 0
#define NVMEH_CDATA_CNTLID 16
#define NVMEH_CDATA_SUBNQN 256
#define NVMEH_CDATA_HOSTNQN 512

/* CQE fields. */
#define NVMEH_CQE_RESULT 0
#define NVMEH_CQE_SQHD 8
#define NVMEH_CQE_SQID 10
#define NVMEH_CQE_CID 12
#define NVMEH_CQE_STATUS 14

/* Identify Controller fields. */
#define NVMEH_IDC_MDTS 77
#define NVMEH_IDC_CNTLID 78
#define NVMEH_IDC_KAS 320
#define NVMEH_IDC_MAXCMD 514
#define NVMEH_IDC_NN 516
#define NVMEH_IDC_SGLS 536
#define NVMEH_IDC_SUBNQN 768
#define NVMEH_IDC_IOCCSZ 1792
#define NVMEH_IDC_IORCSZ 1796
#define NVMEH_IDC_ICDOFF 1800

/* Identify Namespace fields. */
#define NVMEH_IDNS_NSZE 0
#define NVMEH_IDNS_NCAP 8
#define NVMEH_IDNS_FLBAS 26
#define NVMEH_IDNS_LBAF 128

#endif /* RDMARW_NVMEH_WIRE_H */
