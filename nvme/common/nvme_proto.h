/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * NVMe and NVMe over Fabrics wire formats, the one spelling that the target
 * (nvme/target/) and the in-process host (nvme/host/) both use: submission and completion
 * queue entries, the fabrics command capsules and the Connect data, the
 * controller properties, SGL descriptors, the Identify structures, the log
 * pages the Linux host reads (SMART, commands supported and effects, the
 * discovery log) and the status codes.
 *
 * Every multi-byte field is little-endian on the wire (the __le types and
 * the cpu_to_le / le_to_cpu helpers below); every structure has the size
 * and field offsets the NVMe 1.4 and NVMe-oF 1.1 specifications give them,
 * checked at build time at the end of this file.  Names follow the Linux
 * kernel's include/linux/nvme.h where it has one, so that code written
 * against the kernel reads the same here.
 *
 * Usable from C11 (gnu11 or ISO) and C++11.
 */
#ifndef RDMARW_NVME_PROTO_H
#define RDMARW_NVME_PROTO_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- byte order -------------------------------------------------------- */

#ifndef cpu_to_le16
#define cpu_to_le16(x) ((__le16)htole16(x))
#define cpu_to_le32(x) ((__le32)htole32(x))
#define cpu_to_le64(x) ((__le64)htole64(x))
#define le16_to_cpu(x) ((uint16_t)le16toh(x))
#define le32_to_cpu(x) ((uint32_t)le32toh(x))
#define le64_to_cpu(x) ((uint64_t)le64toh(x))
#endif

/*
 * Read and write unaligned little-endian values in a byte buffer (the
 * in-process host builds its capsules with these and offsetof() of the
 * structures below).
 */
static inline uint16_t nvme_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline void nvme_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline uint32_t nvme_get_le24(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

static inline void nvme_put_le24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
}

static inline uint32_t nvme_get_le32(const uint8_t *p)
{
	return nvme_get_le24(p) | (uint32_t)p[3] << 24;
}

static inline void nvme_put_le32(uint8_t *p, uint32_t v)
{
	nvme_put_le24(p, v);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t nvme_get_le64(const uint8_t *p)
{
	return nvme_get_le32(p) | (uint64_t)nvme_get_le32(p + 4) << 32;
}

static inline void nvme_put_le64(uint8_t *p, uint64_t v)
{
	nvme_put_le32(p, (uint32_t)v);
	nvme_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- names and sizes ---------------------------------------------------- */

#define NVMF_NQN_SIZE 223 /* longest NQN, without the NUL */
#define NVMF_NQN_FIELD_LEN 256 /* NQN fields on the wire */
#define NVME_DISC_SUBSYS_NAME "nqn.2014-08.org.nvmexpress.discovery"
#define NVMF_TRSVCID_SIZE 32
#define NVMF_TRADDR_SIZE 256
#define NVMF_TSAS_SIZE 256
#define NVME_IDENTIFY_DATA_SIZE 4096
#define NVME_NIDT_EUI64_LEN 8
#define NVME_NIDT_NGUID_LEN 16
#define NVME_NIDT_UUID_LEN 16
#define NVME_NIDT_CSI_LEN 1
#define NVME_NSID_ALL 0xffffffffu
#define NVMF_RDMA_DEFAULT_PORT 4420
#define NVME_AQ_DEPTH 32 /* the admin queue's most entries (host: 32) */
#define NVMF_CONNECT_DATA_SIZE 1024

/* ---- controller properties (register offsets) --------------------------- */

enum {
	NVME_REG_CAP = 0x0000, /* 8 bytes */
	NVME_REG_VS = 0x0008,
	NVME_REG_INTMS = 0x000c,
	NVME_REG_INTMC = 0x0010,
	NVME_REG_CC = 0x0014,
	NVME_REG_CSTS = 0x001c,
	NVME_REG_NSSR = 0x0020,
	NVME_REG_AQA = 0x0024,
	NVME_REG_ASQ = 0x0028,
	NVME_REG_ACQ = 0x0030,
	NVME_REG_CRTO = 0x0068,
};

/* CAP fields. */
#define NVME_CAP_MQES(cap) ((cap)&0xffff) /* 0-based */
#define NVME_CAP_CQR (1ULL << 16)
#define NVME_CAP_TIMEOUT_SHIFT 24 /* units of 500 ms */
#define NVME_CAP_CSS_NVM (1ULL << 37)
#define NVME_CAP_CSS_CSI (1ULL << 43) /* I/O command sets (CC.CSS 110b) */
#define NVME_CAP_MPSMIN(cap) (((cap) >> 48) & 0xf)

/* VS: major << 16 | minor << 8 | tertiary. */
#define NVME_VS(major, minor, ter) ((major) << 16 | (minor) << 8 | (ter))

/* CC fields. */
enum {
	NVME_CC_ENABLE = 1 << 0,
	NVME_CC_CSS_SHIFT = 4,
	NVME_CC_CSS_MASK = 7 << 4,
	NVME_CC_CSS_NVM = 0 << 4,
	NVME_CC_CSS_CSI = 6 << 4,
	NVME_CC_MPS_SHIFT = 7,
	NVME_CC_MPS_MASK = 0xf << 7,
	NVME_CC_AMS_SHIFT = 11,
	NVME_CC_AMS_MASK = 7 << 11,
	NVME_CC_SHN_SHIFT = 14,
	NVME_CC_SHN_MASK = 3 << 14,
	NVME_CC_SHN_NONE = 0 << 14,
	NVME_CC_SHN_NORMAL = 1 << 14,
	NVME_CC_SHN_ABRUPT = 2 << 14,
	NVME_CC_IOSQES_SHIFT = 16,
	NVME_CC_IOCQES_SHIFT = 20,
};

#define NVME_CC_IOSQES(cc) (((cc) >> NVME_CC_IOSQES_SHIFT) & 0xf)
#define NVME_CC_IOCQES(cc) (((cc) >> NVME_CC_IOCQES_SHIFT) & 0xf)
#define NVME_NVM_IOSQES 6 /* 64-byte SQEs */
#define NVME_NVM_IOCQES 4 /* 16-byte CQEs */

/* CSTS fields. */
enum {
	NVME_CSTS_RDY = 1 << 0,
	NVME_CSTS_CFS = 1 << 1,
	NVME_CSTS_NSSRO = 1 << 4,
	NVME_CSTS_SHST_NORMAL = 0 << 2,
	NVME_CSTS_SHST_OCCUR = 1 << 2,
	NVME_CSTS_SHST_CMPLT = 2 << 2,
	NVME_CSTS_SHST_MASK = 3 << 2,
};

/* ---- SGL descriptors ------------------------------------------------------ */

/* Descriptor types (high nibble of the last byte) and subtypes (low). */
enum {
	NVME_SGL_FMT_ADDRESS = 0x00,
	NVME_SGL_FMT_OFFSET = 0x01,
	NVME_SGL_FMT_TRANSPORT_A = 0x0a,
	NVME_SGL_FMT_INVALIDATE = 0x0f,
};

enum {
	NVME_SGL_FMT_DATA_DESC = 0x00,
	NVME_SGL_FMT_SEG_DESC = 0x02,
	NVME_SGL_FMT_LAST_SEG_DESC = 0x03,
	NVME_KEY_SGL_FMT_DATA_DESC = 0x04,
	NVME_TRANSPORT_SGL_DATA_DESC = 0x05,
};

/**
 * struct nvme_sgl_desc - an unkeyed SGL descriptor (in-capsule data: type
 * NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET, @addr the offset into
 * the capsule's data)
 * @addr: address or offset
 * @length: bytes
 * @rsvd: zero
 * @type: type << 4 | subtype
 */
struct nvme_sgl_desc {
	__le64 addr;
	__le32 length;
	uint8_t rsvd[3];
	uint8_t type;
};

/**
 * struct nvme_keyed_sgl_desc - a keyed SGL descriptor (the host's memory,
 * reached with RDMA READ and WRITE)
 * @addr: the remote address
 * @length: 24-bit length, little-endian (nvme_get_le24())
 * @key: the rkey
 * @type: NVME_KEY_SGL_FMT_DATA_DESC << 4 | subtype (ADDRESS or INVALIDATE)
 */
struct nvme_keyed_sgl_desc {
	__le64 addr;
	uint8_t length[3];
	uint8_t key[4];
	uint8_t type;
};

/**
 * union nvme_data_ptr - the command's data pointer (bytes 24-39 of an SQE)
 * @prp1: first PRP entry (PCIe only)
 * @prp2: second PRP entry
 * @sgl: an unkeyed SGL descriptor
 * @ksgl: a keyed SGL descriptor
 */
union nvme_data_ptr {
	struct {
		__le64 prp1;
		__le64 prp2;
	};
	struct nvme_sgl_desc sgl;
	struct nvme_keyed_sgl_desc ksgl;
};

/* ---- submission queue entries --------------------------------------------- */

/* SQE byte 1. */
enum {
	NVME_CMD_FUSE_FIRST = 1 << 0,
	NVME_CMD_FUSE_SECOND = 1 << 1,
	NVME_CMD_SGL_METABUF = 1 << 6,
	NVME_CMD_SGL_METASEG = 1 << 7,
	NVME_CMD_SGL_ALL = NVME_CMD_SGL_METABUF | NVME_CMD_SGL_METASEG,
};

/**
 * struct nvme_common_command - the fields every SQE has
 * @opcode: opcode
 * @flags: fuse bits and PSDT (NVME_CMD_SGL_METABUF on fabrics)
 * @command_id: echoed in the completion
 * @nsid: namespace
 * @cdw2: command specific
 * @metadata: metadata pointer
 * @dptr: data pointer
 * @cdw10: command dword 10 (cdw10..cdw15 are command specific)
 * @cdw11: command dword 11
 * @cdw12: command dword 12
 * @cdw13: command dword 13
 * @cdw14: command dword 14
 * @cdw15: command dword 15
 */
struct nvme_common_command {
	uint8_t opcode;
	uint8_t flags;
	uint16_t command_id;
	__le32 nsid;
	__le32 cdw2[2];
	__le64 metadata;
	union nvme_data_ptr dptr;
	__le32 cdw10;
	__le32 cdw11;
	__le32 cdw12;
	__le32 cdw13;
	__le32 cdw14;
	__le32 cdw15;
};

/**
 * struct nvme_rw_command - Read, Write, Write Zeroes
 * @opcode: nvme_cmd_read, nvme_cmd_write, nvme_cmd_write_zeroes
 * @flags: as nvme_common_command
 * @command_id: as nvme_common_command
 * @nsid: namespace
 * @cdw2: reserved
 * @cdw3: reserved
 * @metadata: metadata pointer
 * @dptr: data pointer
 * @slba: first LBA
 * @length: blocks, 0-based
 * @control: FUA, limited retry, PRINFO (and DEAC for Write Zeroes)
 * @dsmgmt: dataset management hints
 * @reftag: expected initial reference tag
 * @apptag: expected application tag
 * @appmask: its mask
 */
struct nvme_rw_command {
	uint8_t opcode;
	uint8_t flags;
	uint16_t command_id;
	__le32 nsid;
	__le32 cdw2;
	__le32 cdw3;
	__le64 metadata;
	union nvme_data_ptr dptr;
	__le64 slba;
	__le16 length;
	__le16 control;
	__le32 dsmgmt;
	__le32 reftag;
	__le16 apptag;
	__le16 appmask;
};

/**
 * struct nvme_dsm_range - one range of a Dataset Management command's data
 * @cattr: context attributes
 * @nlb: blocks (1-based)
 * @slba: first LBA
 */
struct nvme_dsm_range {
	__le32 cattr;
	__le32 nlb;
	__le64 slba;
};

#define NVME_DSMGMT_AD (1 << 2) /* cdw11: deallocate */
#define NVME_DSM_MAX_RANGES 256

/* NVM command set opcodes. */
enum nvme_opcode {
	nvme_cmd_flush = 0x00,
	nvme_cmd_write = 0x01,
	nvme_cmd_read = 0x02,
	nvme_cmd_write_uncor = 0x04,
	nvme_cmd_compare = 0x05,
	nvme_cmd_write_zeroes = 0x08,
	nvme_cmd_dsm = 0x09,
	nvme_cmd_verify = 0x0c,
};

/* Admin opcodes. */
enum nvme_admin_opcode {
	nvme_admin_delete_sq = 0x00,
	nvme_admin_create_sq = 0x01,
	nvme_admin_get_log_page = 0x02,
	nvme_admin_delete_cq = 0x04,
	nvme_admin_create_cq = 0x05,
	nvme_admin_identify = 0x06,
	nvme_admin_abort_cmd = 0x08,
	nvme_admin_set_features = 0x09,
	nvme_admin_get_features = 0x0a,
	nvme_admin_async_event = 0x0c,
	nvme_admin_ns_mgmt = 0x0d,
	nvme_admin_activate_fw = 0x10,
	nvme_admin_download_fw = 0x11,
	nvme_admin_keep_alive = 0x18,
	nvme_admin_format_nvm = 0x80,
};

/* The data direction is in the opcode's low two bits. */
static inline int nvme_opcode_is_write(uint8_t opcode)
{
	return opcode & 1;
}

/* Identify CNS values. */
enum {
	NVME_ID_CNS_NS = 0x00,
	NVME_ID_CNS_CTRL = 0x01,
	NVME_ID_CNS_NS_ACTIVE_LIST = 0x02,
	NVME_ID_CNS_NS_DESC_LIST = 0x03,
	NVME_ID_CNS_CS_NS = 0x05,
	NVME_ID_CNS_CS_CTRL = 0x06,
	NVME_ID_CNS_NS_CS_INDEP = 0x08,
};

/* Command set identifiers. */
enum {
	NVME_CSI_NVM = 0,
	NVME_CSI_ZNS = 2,
};

/* Namespace identification descriptor types. */
enum {
	NVME_NIDT_EUI64 = 0x01,
	NVME_NIDT_NGUID = 0x02,
	NVME_NIDT_UUID = 0x03,
	NVME_NIDT_CSI = 0x04,
};

/**
 * struct nvme_ns_id_desc - header of a namespace identification descriptor
 * @nidt: type (NVME_NIDT_*)
 * @nidl: length of the identifier that follows
 * @reserved: zero
 */
struct nvme_ns_id_desc {
	uint8_t nidt;
	uint8_t nidl;
	__le16 reserved;
};

/* Feature identifiers. */
enum {
	NVME_FEAT_ARBITRATION = 0x01,
	NVME_FEAT_POWER_MGMT = 0x02,
	NVME_FEAT_TEMP_THRESH = 0x04,
	NVME_FEAT_ERR_RECOVERY = 0x05,
	NVME_FEAT_VOLATILE_WC = 0x06,
	NVME_FEAT_NUM_QUEUES = 0x07,
	NVME_FEAT_IRQ_COALESCE = 0x08,
	NVME_FEAT_WRITE_ATOMIC = 0x0a,
	NVME_FEAT_ASYNC_EVENT = 0x0b,
	NVME_FEAT_KATO = 0x0f,
	NVME_FEAT_HOST_ID = 0x81,
	NVME_FEAT_WRITE_PROTECT = 0x84,
};

/* Log page identifiers. */
enum {
	NVME_LOG_ERROR = 0x01,
	NVME_LOG_SMART = 0x02,
	NVME_LOG_FW_SLOT = 0x03,
	NVME_LOG_CHANGED_NS = 0x04,
	NVME_LOG_CMD_EFFECTS = 0x05,
	NVME_LOG_ANA = 0x0c,
	NVME_LOG_DISC = 0x70,
};

/* Get Log Page cdw10: LID 0-7, LSP 8-11 (RAE is bit 15), NUMDL 16-31. */
#define NVME_LOG_RAE (1u << 15)

/* Asynchronous events (completion dword 0: type 0-2, info 8-15, log 16-23). */
enum {
	NVME_AER_TYPE_ERROR = 0,
	NVME_AER_TYPE_SMART = 1,
	NVME_AER_TYPE_NOTICE = 2,
};

enum {
	NVME_AER_NOTICE_NS_CHANGED = 0x00,
	NVME_AER_NOTICE_FW_ACT_STARTING = 0x01,
	NVME_AER_NOTICE_ANA = 0x03,
	NVME_AER_NOTICE_DISC_CHANGED = 0xf0,
};

/* OAES bits (Identify Controller, Set Features 0Bh). */
enum {
	NVME_AEN_CFG_NS_ATTR = 1 << 8,
	NVME_AEN_CFG_FW_ACT = 1 << 9,
	NVME_AEN_CFG_ANA_CHANGE = 1 << 11,
};

#define NVME_AEN_CFG_DISC_CHANGE (1u << 31)

/* ---- fabrics commands ------------------------------------------------------ */

#define nvme_fabrics_command 0x7f

enum nvmf_fabrics_opcode {
	nvme_fabrics_type_property_set = 0x00,
	nvme_fabrics_type_connect = 0x01,
	nvme_fabrics_type_property_get = 0x04,
	nvme_fabrics_type_auth_send = 0x05,
	nvme_fabrics_type_auth_receive = 0x06,
	nvme_fabrics_type_disconnect = 0x08,
};

/**
 * struct nvmf_common_command - the fields every fabrics command has
 * @opcode: nvme_fabrics_command
 * @resv1: reserved
 * @command_id: echoed in the completion
 * @fctype: enum nvmf_fabrics_opcode
 * @resv2: reserved
 * @ts: fctype specific
 */
struct nvmf_common_command {
	uint8_t opcode;
	uint8_t resv1;
	uint16_t command_id;
	uint8_t fctype;
	uint8_t resv2[35];
	uint8_t ts[24];
};

/**
 * struct nvmf_connect_command - Connect (fctype 01h)
 * @opcode: nvme_fabrics_command
 * @resv1: reserved
 * @command_id: echoed
 * @fctype: nvme_fabrics_type_connect
 * @resv2: reserved
 * @dptr: the 1 KiB Connect data (keyed, or in-capsule)
 * @recfmt: record format, 0
 * @qid: 0 for the admin queue, 1.. for I/O queues
 * @sqsize: submission queue size, 0-based
 * @cattr: connect attributes (bit 2: SQ flow control disabled)
 * @resv3: reserved
 * @kato: keep-alive timeout in ms (admin queue)
 * @resv4: reserved
 */
struct nvmf_connect_command {
	uint8_t opcode;
	uint8_t resv1;
	uint16_t command_id;
	uint8_t fctype;
	uint8_t resv2[19];
	union nvme_data_ptr dptr;
	__le16 recfmt;
	__le16 qid;
	__le16 sqsize;
	uint8_t cattr;
	uint8_t resv3;
	__le32 kato;
	uint8_t resv4[12];
};

#define NVME_CONNECT_DISABLE_SQFLOW (1 << 2)

/* Connect result dword 0, above the cntlid: authentication required. */
#define NVME_CONNECT_AUTHREQ_ATR (1u << 17)
#define NVME_CONNECT_AUTHREQ_ASCR (1u << 18)

/**
 * struct nvmf_auth_command - AUTH_Send (fctype 05h), AUTH_Receive (06h)
 * @opcode: nvme_fabrics_command
 * @resv1: reserved
 * @command_id: echoed
 * @fctype: nvme_fabrics_type_auth_send or _receive
 * @resv2: reserved
 * @dptr: the payload (host to controller for Send, back for Receive)
 * @resv3: reserved (NSSF)
 * @spsp0: security protocol specific, 01h
 * @spsp1: security protocol specific, 01h
 * @secp: security protocol, E9h (DH-HMAC-CHAP)
 * @len: TL (Send) or AL (Receive): payload bytes
 * @resv4: reserved
 */
struct nvmf_auth_command {
	uint8_t opcode;
	uint8_t resv1;
	uint16_t command_id;
	uint8_t fctype;
	uint8_t resv2[19];
	union nvme_data_ptr dptr;
	uint8_t resv3;
	uint8_t spsp0;
	uint8_t spsp1;
	uint8_t secp;
	__le32 len;
	uint8_t resv4[16];
};

/**
 * struct nvmf_connect_data - the Connect command's data (1024 bytes)
 * @hostid: host identifier (UUID)
 * @cntlid: 0xffff (dynamic controller) on the admin queue; the
 *          controller's id on I/O queues
 * @resv4: reserved
 * @subsysnqn: the subsystem's NQN, NUL-padded
 * @hostnqn: the host's NQN, NUL-padded
 * @resv5: reserved
 */
struct nvmf_connect_data {
	uint8_t hostid[16];
	__le16 cntlid;
	char resv4[238];
	char subsysnqn[NVMF_NQN_FIELD_LEN];
	char hostnqn[NVMF_NQN_FIELD_LEN];
	char resv5[256];
};

/**
 * struct nvmf_property_set_command - Property Set (fctype 00h)
 * @opcode: nvme_fabrics_command
 * @resv1: reserved
 * @command_id: echoed
 * @fctype: nvme_fabrics_type_property_set
 * @resv2: reserved
 * @attrib: bit 0: 0 = 4 bytes, 1 = 8 bytes
 * @resv3: reserved
 * @offset: the property's offset (NVME_REG_*)
 * @value: the value
 * @resv4: reserved
 */
struct nvmf_property_set_command {
	uint8_t opcode;
	uint8_t resv1;
	uint16_t command_id;
	uint8_t fctype;
	uint8_t resv2[35];
	uint8_t attrib;
	uint8_t resv3[3];
	__le32 offset;
	__le64 value;
	uint8_t resv4[8];
};

/**
 * struct nvmf_property_get_command - Property Get (fctype 04h)
 * @opcode: nvme_fabrics_command
 * @resv1: reserved
 * @command_id: echoed
 * @fctype: nvme_fabrics_type_property_get
 * @resv2: reserved
 * @attrib: bit 0: 0 = 4 bytes, 1 = 8 bytes
 * @resv3: reserved
 * @offset: the property's offset (NVME_REG_*)
 * @resv4: reserved
 */
struct nvmf_property_get_command {
	uint8_t opcode;
	uint8_t resv1;
	uint16_t command_id;
	uint8_t fctype;
	uint8_t resv2[35];
	uint8_t attrib;
	uint8_t resv3[3];
	__le32 offset;
	uint8_t resv4[16];
};

/**
 * struct nvme_command - a 64-byte submission queue entry
 * @common: the fields every command has
 * @rw: Read, Write, Write Zeroes
 * @fabrics: a fabrics command
 * @connect: Connect
 * @prop_set: Property Set
 * @prop_get: Property Get
 * @auth: AUTH_Send, AUTH_Receive
 * @bytes: the raw bytes
 */
struct nvme_command {
	union {
		struct nvme_common_command common;
		struct nvme_rw_command rw;
		struct nvmf_common_command fabrics;
		struct nvmf_connect_command connect;
		struct nvmf_property_set_command prop_set;
		struct nvmf_property_get_command prop_get;
		struct nvmf_auth_command auth;
		uint8_t bytes[64];
	};
};

/* ---- completion queue entries ---------------------------------------------- */

/**
 * struct nvme_completion - a 16-byte completion queue entry
 * @result: command specific (dword 0, or dwords 0-1)
 * @sq_head: the submission queue head the controller has consumed to
 * @sq_id: the submission queue's id
 * @command_id: the command's id, echoed
 * @status: status << 1 | phase (the phase bit is 0 on fabrics)
 */
struct nvme_completion {
	union {
		__le16 u16;
		__le32 u32;
		__le64 u64;
	} result;
	__le16 sq_head;
	__le16 sq_id;
	uint16_t command_id;
	__le16 status;
};

/*
 * Status values as the kernel's nvme.h writes them: status code type << 8 |
 * status code, with DNR (do not retry) and MORE above; the completion's
 * status field holds this value shifted left by one.
 */
enum {
	/* generic command status */
	NVME_SC_SUCCESS = 0x0,
	NVME_SC_INVALID_OPCODE = 0x1,
	NVME_SC_INVALID_FIELD = 0x2,
	NVME_SC_CMDID_CONFLICT = 0x3,
	NVME_SC_DATA_XFER_ERROR = 0x4,
	NVME_SC_POWER_LOSS = 0x5,
	NVME_SC_INTERNAL = 0x6,
	NVME_SC_ABORT_REQ = 0x7,
	NVME_SC_ABORT_QUEUE = 0x8,
	NVME_SC_FUSED_FAIL = 0x9,
	NVME_SC_FUSED_MISSING = 0xa,
	NVME_SC_INVALID_NS = 0xb,
	NVME_SC_CMD_SEQ_ERROR = 0xc,
	NVME_SC_SGL_INVALID_LAST = 0xd,
	NVME_SC_SGL_INVALID_COUNT = 0xe,
	NVME_SC_SGL_INVALID_DATA = 0xf,
	NVME_SC_SGL_INVALID_METADATA = 0x10,
	NVME_SC_SGL_INVALID_TYPE = 0x11,
	NVME_SC_CMB_INVALID_USE = 0x12,
	NVME_SC_PRP_INVALID_OFFSET = 0x13,
	NVME_SC_ATOMIC_WU_EXCEEDED = 0x14,
	NVME_SC_OP_DENIED = 0x15,
	NVME_SC_SGL_INVALID_OFFSET = 0x16,
	NVME_SC_SGL_INVALID_SUBTYPE = 0x17,
	NVME_SC_HOST_ID_INCONSIST = 0x18,
	NVME_SC_KA_TIMEOUT_EXPIRED = 0x19,
	NVME_SC_KA_TIMEOUT_INVALID = 0x1a,
	NVME_SC_ABORTED_PREEMPT_ABORT = 0x1b,
	NVME_SC_SANITIZE_FAILED = 0x1c,
	NVME_SC_SANITIZE_IN_PROGRESS = 0x1d,
	NVME_SC_SGL_INVALID_GRANULARITY = 0x1e,
	NVME_SC_CMD_NOT_SUP_CMB_QUEUE = 0x1f,
	NVME_SC_NS_WRITE_PROTECTED = 0x20,
	NVME_SC_CMD_INTERRUPTED = 0x21,
	NVME_SC_TRANSIENT_TR_ERR = 0x22,
	NVME_SC_ADMIN_COMMAND_MEDIA_NOT_READY = 0x24,
	NVME_SC_INVALID_IO_CMD_SET = 0x2c,
	NVME_SC_LBA_RANGE = 0x80,
	NVME_SC_CAP_EXCEEDED = 0x81,
	NVME_SC_NS_NOT_READY = 0x82,
	NVME_SC_RESERVATION_CONFLICT = 0x83,
	NVME_SC_FORMAT_IN_PROGRESS = 0x84,

	/* command specific status */
	NVME_SC_CQ_INVALID = 0x100,
	NVME_SC_QID_INVALID = 0x101,
	NVME_SC_QUEUE_SIZE = 0x102,
	NVME_SC_ABORT_LIMIT = 0x103,
	NVME_SC_ABORT_MISSING = 0x104,
	NVME_SC_ASYNC_LIMIT = 0x105,
	NVME_SC_FIRMWARE_SLOT = 0x106,
	NVME_SC_FIRMWARE_IMAGE = 0x107,
	NVME_SC_INVALID_VECTOR = 0x108,
	NVME_SC_INVALID_LOG_PAGE = 0x109,
	NVME_SC_INVALID_FORMAT = 0x10a,
	NVME_SC_FW_NEEDS_CONV_RESET = 0x10b,
	NVME_SC_INVALID_QUEUE = 0x10c,
	NVME_SC_FEATURE_NOT_SAVEABLE = 0x10d,
	NVME_SC_FEATURE_NOT_CHANGEABLE = 0x10e,
	NVME_SC_FEATURE_NOT_PER_NS = 0x10f,
	NVME_SC_BAD_ATTRIBUTES = 0x180,
	NVME_SC_INVALID_PI = 0x181,
	NVME_SC_READ_ONLY = 0x182,

	/* fabrics command specific status (same values, fabrics commands) */
	NVME_SC_CONNECT_FORMAT = 0x180,
	NVME_SC_CONNECT_CTRL_BUSY = 0x181,
	NVME_SC_CONNECT_INVALID_PARAM = 0x182,
	NVME_SC_CONNECT_RESTART_DISC = 0x183,
	NVME_SC_CONNECT_INVALID_HOST = 0x184,
	NVME_SC_DISCOVERY_RESTART = 0x190,
	NVME_SC_AUTH_REQUIRED = 0x191,

	/* media and data integrity errors */
	NVME_SC_WRITE_FAULT = 0x280,
	NVME_SC_READ_ERROR = 0x281,
	NVME_SC_GUARD_CHECK = 0x282,
	NVME_SC_APPTAG_CHECK = 0x283,
	NVME_SC_REFTAG_CHECK = 0x284,
	NVME_SC_COMPARE_FAILED = 0x285,
	NVME_SC_ACCESS_DENIED = 0x286,
	NVME_SC_UNWRITTEN_BLOCK = 0x287,

	/* path related */
	NVME_SC_ANA_TRANSITION = 0x303,
	NVME_SC_HOST_PATH_ERROR = 0x370,
	NVME_SC_HOST_ABORTED_CMD = 0x371,

	NVME_SC_MASK = 0x00ff,
	NVME_SCT_MASK = 0x0700,
	NVME_SCT_SC_MASK = NVME_SCT_MASK | NVME_SC_MASK,
	NVME_SC_CRD = 0x1800,
	NVME_SC_MORE = 0x2000,
	NVME_SC_DNR = 0x4000,
};

/*
 * Connect's "invalid parameter" result (completion dword 0), as nvmet
 * writes it: the byte offset of the bad field, with bit 16 set when the
 * field is in the Connect data rather than in the SQE.
 */
#define IPO_IATTR_CONNECT_DATA(x) (((uint32_t)1 << 16) | (uint32_t)(x))
#define IPO_IATTR_CONNECT_SQE(x) ((uint32_t)(x))

/* ---- RDMA CM private data ------------------------------------------------ */

/**
 * struct nvme_rdma_cm_req - private data of the host's connect request
 * @recfmt: record format, 0
 * @qid: the queue's id (0: admin)
 * @hrqsize: the host's receive queue size (response slots, 1-based)
 * @hsqsize: the host's send queue size (0-based)
 * @cntlid: unused (0)
 * @rsvd: zero
 */
struct nvme_rdma_cm_req {
	__le16 recfmt;
	__le16 qid;
	__le16 hrqsize;
	__le16 hsqsize;
	__le16 cntlid;
	uint8_t rsvd[22];
};

/**
 * struct nvme_rdma_cm_rep - private data of the target's accept
 * @recfmt: record format, 0
 * @crqsize: the controller's receive queue size
 * @rsvd: zero
 */
struct nvme_rdma_cm_rep {
	__le16 recfmt;
	__le16 crqsize;
	uint8_t rsvd[28];
};

/**
 * struct nvme_rdma_cm_rej - private data of the target's reject
 * @recfmt: record format, 0
 * @sts: enum nvme_rdma_cm_status
 */
struct nvme_rdma_cm_rej {
	__le16 recfmt;
	__le16 sts;
};

enum nvme_rdma_cm_status {
	NVME_RDMA_CM_INVALID_LEN = 0x01,
	NVME_RDMA_CM_INVALID_RECFMT = 0x02,
	NVME_RDMA_CM_INVALID_QID = 0x03,
	NVME_RDMA_CM_INVALID_HSQSIZE = 0x04,
	NVME_RDMA_CM_INVALID_HRQSIZE = 0x05,
	NVME_RDMA_CM_NO_RSC = 0x06,
	NVME_RDMA_CM_INVALID_IRD = 0x07,
	NVME_RDMA_CM_INVALID_ORD = 0x08,
};

#define NVME_RDMA_CM_FMT_1_0 0x0

/* ---- Identify structures --------------------------------------------------- */

/**
 * struct nvme_id_power_state - a power state descriptor
 * @max_power: centiwatts
 * @rsvd2: reserved
 * @flags: MXPS, NOPS
 * @entry_lat: microseconds
 * @exit_lat: microseconds
 * @read_tput: relative read throughput
 * @read_lat: relative read latency
 * @write_tput: relative write throughput
 * @write_lat: relative write latency
 * @idle_power: idle power
 * @idle_scale: its scale
 * @rsvd19: reserved
 * @active_power: active power
 * @active_work_scale: its workload and scale
 * @rsvd23: reserved
 */
struct nvme_id_power_state {
	__le16 max_power;
	uint8_t rsvd2;
	uint8_t flags;
	__le32 entry_lat;
	__le32 exit_lat;
	uint8_t read_tput;
	uint8_t read_lat;
	uint8_t write_tput;
	uint8_t write_lat;
	__le16 idle_power;
	uint8_t idle_scale;
	uint8_t rsvd19;
	__le16 active_power;
	uint8_t active_work_scale;
	uint8_t rsvd23[9];
};

/**
 * struct nvme_id_ctrl - Identify Controller data (CNS 01h)
 * @vid: PCI vendor id
 * @ssvid: subsystem vendor id
 * @sn: serial number, space-padded
 * @mn: model number, space-padded
 * @fr: firmware revision, space-padded
 * @rab: recommended arbitration burst
 * @ieee: IEEE OUI
 * @cmic: multi-path and multi-controller capabilities (bit 3: ANA)
 * @mdts: maximum data transfer size, a power of two of CAP.MPSMIN pages
 *        (0: no limit)
 * @cntlid: controller id
 * @ver: version (as VS)
 * @rtd3r: RTD3 resume latency
 * @rtd3e: RTD3 entry latency
 * @oaes: optional asynchronous events supported
 * @ctratt: controller attributes (bit 6: traffic based keep alive)
 * @rrls: read recovery levels
 * @rsvd102: reserved
 * @cntrltype: 1 I/O, 2 discovery, 3 administrative
 * @fguid: FRU GUID
 * @crdt1: command retry delay time 1
 * @crdt2: command retry delay time 2
 * @crdt3: command retry delay time 3
 * @rsvd134: reserved
 * @oacs: optional admin commands
 * @acl: abort command limit
 * @aerl: asynchronous event request limit, 0-based
 * @frmw: firmware updates
 * @lpa: log page attributes (bit 1: commands effects log; bit 2: extended
 *       data for Get Log Page)
 * @elpe: error log page entries, 0-based
 * @npss: number of power states, 0-based
 * @avscc: admin vendor specific command configuration
 * @apsta: autonomous power state transitions
 * @wctemp: warning composite temperature threshold
 * @cctemp: critical composite temperature threshold
 * @mtfa: maximum time for firmware activation
 * @hmpre: host memory buffer preferred size
 * @hmmin: host memory buffer minimum size
 * @tnvmcap: total NVM capacity
 * @unvmcap: unallocated NVM capacity
 * @rpmbs: replay protected memory block support
 * @edstt: extended device self-test time
 * @dsto: device self-test options
 * @fwug: firmware update granularity
 * @kas: keep alive support, units of 100 ms (0: none)
 * @hctma: host controlled thermal management attributes
 * @mntmt: minimum thermal management temperature
 * @mxtmt: maximum thermal management temperature
 * @sanicap: sanitize capabilities
 * @hmminds: host memory buffer minimum descriptor entry size
 * @hmmaxd: host memory maximum descriptor entries
 * @rsvd338: reserved
 * @anatt: ANA transition time
 * @anacap: ANA capabilities
 * @anagrpmax: ANA group identifier maximum
 * @nanagrpid: number of ANA group identifiers
 * @rsvd352: reserved
 * @sqes: required and maximum SQE size (log2), 0x66
 * @cqes: required and maximum CQE size (log2), 0x44
 * @maxcmd: maximum outstanding commands
 * @nn: number of namespaces (highest NSID)
 * @oncs: optional NVM commands (bit 2: DSM, bit 3: Write Zeroes)
 * @fuses: fused operations
 * @fna: format NVM attributes
 * @vwc: volatile write cache (bit 0: present)
 * @awun: atomic write unit normal
 * @awupf: atomic write unit power fail
 * @icsvscc: NVM vendor specific command configuration
 * @nwpc: namespace write protection capabilities
 * @acwu: atomic compare and write unit
 * @rsvd534: reserved
 * @sgls: SGL support (bit 2: keyed; bit 20: offsets in the capsule)
 * @mnan: maximum number of allowed namespaces
 * @rsvd544: reserved
 * @subnqn: the subsystem's NQN
 * @rsvd1024: reserved
 * @ioccsz: I/O queue command capsule size, 16-byte units
 * @iorcsz: I/O queue response capsule size, 16-byte units
 * @icdoff: in-capsule data offset, 16-byte units (0)
 * @ctrattr: fabrics controller attributes
 * @msdbd: maximum SGL data block descriptors
 * @rsvd1804: reserved
 * @psd: power state descriptors
 * @vs: vendor specific
 */
struct nvme_id_ctrl {
	__le16 vid;
	__le16 ssvid;
	char sn[20];
	char mn[40];
	char fr[8];
	uint8_t rab;
	uint8_t ieee[3];
	uint8_t cmic;
	uint8_t mdts;
	__le16 cntlid;
	__le32 ver;
	__le32 rtd3r;
	__le32 rtd3e;
	__le32 oaes;
	__le32 ctratt;
	__le16 rrls;
	uint8_t rsvd102[9];
	uint8_t cntrltype;
	uint8_t fguid[16];
	__le16 crdt1;
	__le16 crdt2;
	__le16 crdt3;
	uint8_t rsvd134[122];
	__le16 oacs;
	uint8_t acl;
	uint8_t aerl;
	uint8_t frmw;
	uint8_t lpa;
	uint8_t elpe;
	uint8_t npss;
	uint8_t avscc;
	uint8_t apsta;
	__le16 wctemp;
	__le16 cctemp;
	__le16 mtfa;
	__le32 hmpre;
	__le32 hmmin;
	uint8_t tnvmcap[16];
	uint8_t unvmcap[16];
	__le32 rpmbs;
	__le16 edstt;
	uint8_t dsto;
	uint8_t fwug;
	__le16 kas;
	__le16 hctma;
	__le16 mntmt;
	__le16 mxtmt;
	__le32 sanicap;
	__le32 hmminds;
	__le16 hmmaxd;
	uint8_t rsvd338[4];
	uint8_t anatt;
	uint8_t anacap;
	__le32 anagrpmax;
	__le32 nanagrpid;
	uint8_t rsvd352[160];
	uint8_t sqes;
	uint8_t cqes;
	__le16 maxcmd;
	__le32 nn;
	__le16 oncs;
	__le16 fuses;
	uint8_t fna;
	uint8_t vwc;
	__le16 awun;
	__le16 awupf;
	uint8_t icsvscc;
	uint8_t nwpc;
	__le16 acwu;
	uint8_t rsvd534[2];
	__le32 sgls;
	__le32 mnan;
	uint8_t rsvd544[224];
	char subnqn[256];
	uint8_t rsvd1024[768];
	__le32 ioccsz;
	__le32 iorcsz;
	__le16 icdoff;
	uint8_t ctrattr;
	uint8_t msdbd;
	uint8_t rsvd1804[244];
	struct nvme_id_power_state psd[32];
	uint8_t vs[1024];
};

/* Identify Controller bits the target sets. */
enum {
	NVME_CTRL_CMIC_MULTI_CTRL = 1 << 1,
	NVME_CTRL_CMIC_ANA = 1 << 3,
	NVME_CTRL_CTRATT_128_ID = 1 << 0,
	NVME_CTRL_CTRATT_TBKAS = 1 << 6,
	NVME_CTRL_ONCS_DSM = 1 << 2,
	NVME_CTRL_ONCS_WRITE_ZEROES = 1 << 3,
	NVME_CTRL_VWC_PRESENT = 1 << 0,
	NVME_CTRL_LPA_CMD_EFFECTS_LOG = 1 << 1,
	NVME_CTRL_LPA_EXTENDED_DATA = 1 << 2,
	NVME_CTRL_OACS_NS_MGMT = 1 << 3,
	NVME_CNTRLTYPE_IO = 1,
	NVME_CNTRLTYPE_DISC = 2,
};

#define NVME_CTRL_SGLS_SUPPORTED (1u << 0)
#define NVME_CTRL_SGLS_KEYED (1u << 2)
#define NVME_CTRL_SGLS_OFFSET (1u << 20)

/**
 * struct nvme_lbaf - an LBA format
 * @ms: metadata bytes per block
 * @ds: data size, log2 (9: 512 bytes)
 * @rp: relative performance
 */
struct nvme_lbaf {
	__le16 ms;
	uint8_t ds;
	uint8_t rp;
};

/**
 * struct nvme_id_ns - Identify Namespace data (CNS 00h)
 * @nsze: size in blocks
 * @ncap: capacity in blocks (0: the host treats the namespace as absent)
 * @nuse: blocks in use
 * @nsfeat: features (bit 2: DEALLOCATE semantics)
 * @nlbaf: LBA formats, 0-based
 * @flbas: the format in use
 * @mc: metadata capabilities
 * @dpc: end-to-end protection capabilities
 * @dps: end-to-end protection settings
 * @nmic: multi-path I/O and sharing
 * @rescap: reservation capabilities
 * @fpi: format progress
 * @dlfeat: deallocate logical block features (bits 0-2: 1 reads zeroes)
 * @nawun: atomic write unit normal
 * @nawupf: atomic write unit power fail
 * @nacwu: atomic compare and write unit
 * @nabsn: atomic boundary size normal
 * @nabo: atomic boundary offset
 * @nabspf: atomic boundary size power fail
 * @noiob: optimal I/O boundary
 * @nvmcap: NVM capacity, bytes
 * @npwg: preferred write granularity
 * @npwa: preferred write alignment
 * @npdg: preferred deallocate granularity
 * @npda: preferred deallocate alignment
 * @nows: optimal write size
 * @rsvd74: reserved
 * @anagrpid: ANA group
 * @rsvd96: reserved
 * @nsattr: attributes (bit 0: write protected)
 * @nvmsetid: NVM set
 * @endgid: endurance group
 * @nguid: namespace GUID
 * @eui64: IEEE extended unique identifier
 * @lbaf: the LBA formats
 * @rsvd192: reserved
 * @vs: vendor specific
 */
struct nvme_id_ns {
	__le64 nsze;
	__le64 ncap;
	__le64 nuse;
	uint8_t nsfeat;
	uint8_t nlbaf;
	uint8_t flbas;
	uint8_t mc;
	uint8_t dpc;
	uint8_t dps;
	uint8_t nmic;
	uint8_t rescap;
	uint8_t fpi;
	uint8_t dlfeat;
	__le16 nawun;
	__le16 nawupf;
	__le16 nacwu;
	__le16 nabsn;
	__le16 nabo;
	__le16 nabspf;
	__le16 noiob;
	uint8_t nvmcap[16];
	__le16 npwg;
	__le16 npwa;
	__le16 npdg;
	__le16 npda;
	__le16 nows;
	uint8_t rsvd74[18];
	__le32 anagrpid;
	uint8_t rsvd96[3];
	uint8_t nsattr;
	__le16 nvmsetid;
	__le16 endgid;
	uint8_t nguid[16];
	uint8_t eui64[8];
	struct nvme_lbaf lbaf[16];
	uint8_t rsvd192[192];
	uint8_t vs[3712];
};

/* ---- log pages ----------------------------------------------------------- */

/**
 * struct nvme_smart_log - SMART / Health Information (log 02h, 512 bytes)
 * @critical_warning: critical warnings
 * @temperature: composite temperature, kelvin
 * @avail_spare: available spare, percent
 * @spare_thresh: its threshold
 * @percent_used: life used, percent
 * @endu_grp_crit_warn_sumry: endurance group critical warning summary
 * @rsvd7: reserved
 * @data_units_read: 1000s of 512-byte units read (128-bit)
 * @data_units_written: 1000s of 512-byte units written
 * @host_reads: read commands
 * @host_writes: write commands
 * @ctrl_busy_time: minutes busy
 * @power_cycles: power cycles
 * @power_on_hours: power-on hours
 * @unsafe_shutdowns: unsafe shutdowns
 * @media_errors: media errors
 * @num_err_log_entries: error log entries
 * @warning_temp_time: minutes above the warning threshold
 * @critical_comp_time: minutes above the critical threshold
 * @temp_sensor: temperature sensors
 * @thm_temp1_trans_count: thermal management transitions
 * @thm_temp2_trans_count: thermal management transitions
 * @thm_temp1_total_time: thermal management time
 * @thm_temp2_total_time: thermal management time
 * @rsvd232: reserved
 */
struct nvme_smart_log {
	uint8_t critical_warning;
	uint8_t temperature[2];
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint8_t endu_grp_crit_warn_sumry;
	uint8_t rsvd7[25];
	uint8_t data_units_read[16];
	uint8_t data_units_written[16];
	uint8_t host_reads[16];
	uint8_t host_writes[16];
	uint8_t ctrl_busy_time[16];
	uint8_t power_cycles[16];
	uint8_t power_on_hours[16];
	uint8_t unsafe_shutdowns[16];
	uint8_t media_errors[16];
	uint8_t num_err_log_entries[16];
	__le32 warning_temp_time;
	__le32 critical_comp_time;
	__le16 temp_sensor[8];
	__le32 thm_temp1_trans_count;
	__le32 thm_temp2_trans_count;
	__le32 thm_temp1_total_time;
	__le32 thm_temp2_total_time;
	uint8_t rsvd232[280];
};

/**
 * struct nvme_effects_log - Commands Supported and Effects (log 05h)
 * @acs: one entry per admin opcode (bit 0: supported)
 * @iocs: one entry per I/O opcode
 * @resv: reserved
 */
struct nvme_effects_log {
	__le32 acs[256];
	__le32 iocs[256];
	uint8_t resv[2048];
};

enum {
	NVME_CMD_EFFECTS_CSUPP = 1 << 0,
	NVME_CMD_EFFECTS_LBCC = 1 << 1,
	NVME_CMD_EFFECTS_NCC = 1 << 2,
};

/**
 * struct nvme_fw_slot_info_log - Firmware Slot Information (log 03h)
 * @afi: active firmware info
 * @rsvd1: reserved
 * @frs: firmware revision per slot
 * @rsvd64: reserved
 */
struct nvme_fw_slot_info_log {
	uint8_t afi;
	uint8_t rsvd1[7];
	__le64 frs[7];
	uint8_t rsvd64[448];
};

/* Discovery log entry fields. */
enum {
	NVMF_TRTYPE_RDMA = 1,
	NVMF_TRTYPE_FC = 2,
	NVMF_TRTYPE_TCP = 3,
	NVMF_TRTYPE_LOOP = 254,
};

enum {
	NVMF_ADDR_FAMILY_PCI = 0,
	NVMF_ADDR_FAMILY_IP4 = 1,
	NVMF_ADDR_FAMILY_IP6 = 2,
};

enum {
	NVME_NQN_DISC = 1, /* a referral to another discovery service */
	NVME_NQN_NVME = 2, /* an NVM subsystem */
	NVME_NQN_CURR = 3, /* the current discovery subsystem */
};

enum {
	NVMF_TREQ_NOT_SPECIFIED = 0,
	NVMF_TREQ_REQUIRED = 1,
	NVMF_TREQ_NOT_REQUIRED = 2,
	NVMF_TREQ_DISABLE_SQFLOW = 1 << 2,
};

enum {
	NVMF_RDMA_QPTYPE_CONNECTED = 1,
	NVMF_RDMA_QPTYPE_DATAGRAM = 2,
	NVMF_RDMA_PRTYPE_NOT_SPECIFIED = 1,
	NVMF_RDMA_PRTYPE_IB = 2,
	NVMF_RDMA_PRTYPE_ROCE = 3,
	NVMF_RDMA_PRTYPE_ROCEV2 = 4,
	NVMF_RDMA_PRTYPE_IWARP = 5,
	NVMF_RDMA_CMS_RDMA_CM = 1,
};

#define NVME_CNTLID_DYNAMIC 0xffff

/**
 * struct nvmf_disc_rsp_page_entry - one discovery log entry (1024 bytes)
 * @trtype: transport type (NVMF_TRTYPE_RDMA)
 * @adrfam: address family (NVMF_ADDR_FAMILY_IP4/IP6)
 * @subtype: NVME_NQN_NVME, NVME_NQN_DISC or NVME_NQN_CURR
 * @treq: transport requirements
 * @portid: port id
 * @cntlid: NVME_CNTLID_DYNAMIC
 * @asqsz: admin max SQ size
 * @resv8: reserved
 * @trsvcid: service id (the port, as text), space-padded
 * @resv64: reserved
 * @subnqn: subsystem NQN
 * @traddr: transport address (as text), space-padded
 * @tsas: transport specific attributes
 * @tsas.common: raw
 * @tsas.rdma: RDMA: QP type, provider type, CM service, P_Key
 */
struct nvmf_disc_rsp_page_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	__le16 portid;
	__le16 cntlid;
	__le16 asqsz;
	uint8_t resv8[22];
	char trsvcid[NVMF_TRSVCID_SIZE];
	uint8_t resv64[192];
	char subnqn[NVMF_NQN_FIELD_LEN];
	char traddr[NVMF_TRADDR_SIZE];
	union tsas {
		char common[NVMF_TSAS_SIZE];
		struct rdma {
			uint8_t qptype;
			uint8_t prtype;
			uint8_t cms;
			uint8_t resv3[5];
			uint16_t pkey;
			uint8_t resv10[246];
		} rdma;
	} tsas;
};

/**
 * struct nvmf_disc_rsp_page_hdr - discovery log header (1024 bytes; the
 * entries follow)
 * @genctr: generation counter (changes when the log does)
 * @numrec: entries
 * @recfmt: record format, 0
 * @resv14: reserved
 */
struct nvmf_disc_rsp_page_hdr {
	__le64 genctr;
	__le64 numrec;
	__le16 recfmt;
	uint8_t resv14[1006];
};

/* ---- sizes, checked ---------------------------------------------------------- */

#ifdef __cplusplus
#define RDMARW_NVME_ASSERT(c, m) static_assert(c, m)
#else
#define RDMARW_NVME_ASSERT(c, m) _Static_assert(c, m)
#endif
RDMARW_NVME_ASSERT(sizeof(struct nvme_sgl_desc) == 16, "sgl desc");
RDMARW_NVME_ASSERT(sizeof(struct nvme_keyed_sgl_desc) == 16, "keyed desc");
RDMARW_NVME_ASSERT(sizeof(union nvme_data_ptr) == 16, "dptr");
RDMARW_NVME_ASSERT(sizeof(struct nvme_common_command) == 64, "sqe");
RDMARW_NVME_ASSERT(sizeof(struct nvme_rw_command) == 64, "rw sqe");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_common_command) == 64, "fabrics");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_connect_command) == 64, "connect");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_property_set_command) == 64, "pset");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_property_get_command) == 64, "pget");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_auth_command) == 64, "auth");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_auth_command, secp) == 43, "secp");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_auth_command, len) == 44, "tl");
RDMARW_NVME_ASSERT(sizeof(struct nvme_command) == 64, "command");
RDMARW_NVME_ASSERT(sizeof(struct nvme_completion) == 16, "cqe");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_connect_data) == 1024, "connect data");
RDMARW_NVME_ASSERT(sizeof(struct nvme_rdma_cm_req) == 32, "cm req");
RDMARW_NVME_ASSERT(sizeof(struct nvme_rdma_cm_rep) == 32, "cm rep");
RDMARW_NVME_ASSERT(sizeof(struct nvme_id_power_state) == 32, "psd");
RDMARW_NVME_ASSERT(sizeof(struct nvme_id_ctrl) == 4096, "id ctrl");
RDMARW_NVME_ASSERT(sizeof(struct nvme_id_ns) == 4096, "id ns");
RDMARW_NVME_ASSERT(sizeof(struct nvme_smart_log) == 512, "smart");
RDMARW_NVME_ASSERT(sizeof(struct nvme_effects_log) == 4096, "effects");
RDMARW_NVME_ASSERT(sizeof(struct nvme_fw_slot_info_log) == 512, "fw slot");
RDMARW_NVME_ASSERT(sizeof(struct nvme_dsm_range) == 16, "dsm range");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_disc_rsp_page_entry) == 1024, "disc");
RDMARW_NVME_ASSERT(sizeof(struct nvmf_disc_rsp_page_hdr) == 1024, "disc hdr");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, kas) == 320, "kas");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, sqes) == 512, "sqes");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, sgls) == 536, "sgls");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, subnqn) == 768, "subnqn");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, ioccsz) == 1792, "ioccsz");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ctrl, psd) == 2048, "psd off");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ns, anagrpid) == 92, "anagrpid");
RDMARW_NVME_ASSERT(offsetof(struct nvme_id_ns, lbaf) == 128, "lbaf");
RDMARW_NVME_ASSERT(offsetof(struct nvme_smart_log, warning_temp_time) == 192,
		   "smart temp time");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_connect_command, dptr) == 24,
		   "connect dptr");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_connect_command, kato) == 48,
		   "connect kato");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_property_get_command, offset) == 44,
		   "pget offset");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_connect_data, subsysnqn) == 256,
		   "subsysnqn");
RDMARW_NVME_ASSERT(offsetof(struct nvmf_disc_rsp_page_entry, traddr) == 512,
		   "traddr");
#undef RDMARW_NVME_ASSERT

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_NVME_PROTO_H */
