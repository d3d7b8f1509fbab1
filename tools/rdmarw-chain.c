// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-chain: explain what the R/W API will post.
 *
 * Builds a software device of the chosen profile (attributes overridable),
 * a QP sized as a ULP would size it, and a local buffer laid out as the
 * command line says; runs rdma_rw_ctx_init() (or rdma_rw_ctx_init_bvec())
 * and rdma_rw_ctx_wrs(), and prints the chain of work requests it gets,
 * with the return value, the path the API took and why, and a check of
 * the chain against the API's rules.  --post also executes every chain
 * against a second device and verifies the bytes that moved.
 *
 * Addresses and keys are printed relative to what they point at (buf+0x..,
 * mr0.v1, local_dma_lkey) so that the output of a run is reproducible;
 * --absolute prints raw values.
 *
 * Exit status: 0 on success, 1 when init, the check or a post fails (or
 * the devices cannot be set up), 2 for bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdmarw/mr_pool.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "cli.h"
#include "json.h"

#define CHAIN_MAX_ENTRIES 65536U
#define CHAIN_MAX_ENTRY (1ULL << 30)
#define CHAIN_MAX_LAYOUT (1ULL << 32)
#define CHAIN_MAX_WRS (1U << 20)
#define CHAIN_MAX_REPEAT 4096U
#define CHAIN_MAX_WC 16
#define CHAIN_MSG_LEN 64U
#define CHAIN_GUARD 64U
#define CHAIN_PORT 1
#define CHAIN_DEF_RADDR 0x10000000ULL
#define CHAIN_DEF_RKEY 0x00001234U

#define EXIT_BAD_ARGS 2

/* ---- options ------------------------------------------------------------ */

enum chain_format { FMT_TEXT, FMT_JSON, FMT_DOT };

struct chain_opts {
	const char *profile;
	bool iommu;
	long long max_sgl_rd, max_send_sge, max_sge_rd, fr_pages; /* -1: keep */
	long long qp_send_sge; /* -1: the device's */
	bool dir_set;
	enum dma_data_direction dir;
	u32 *len; /* entry sizes */
	u32 nents;
	u64 offset;
	long long misalign; /* -1: entries are contiguous */
	u64 gap;
	u32 chain; /* 0: one array */
	bool bvec;
	bool force_mr;
	long long pool_size; /* -1: rdma_rw_mr_factor() */
	long long pool_free; /* -1: the whole pool */
	bool raddr_set, rkey_set;
	u64 remote_addr;
	u32 rkey;
	bool chain_wr;
	u32 repeat;
	bool post;
	enum chain_format fmt;
	bool absolute;
};

/* ---- state ------------------------------------------------------------- */

/* An MR of the context, named mr<i>, with the key it had after init. */
struct chain_mr {
	struct ib_mr *mr;
	u32 base_key;
};

/* One completion seen while executing a chain (--post). */
struct chain_wc {
	const char *side; /* "local" or "peer" */
	const char *cqe; /* which ib_cqe it came through */
	enum ib_wc_opcode opcode;
	enum ib_wc_status status;
	u32 byte_len;
};

/*
 * One WR of a chain as rdma_rw_ctx_wrs() returned it (the context rebuilds
 * its WRs in place on every call, so each chain is copied before the next).
 */
struct wr_snap {
	const struct ib_send_wr *ptr;
	enum ib_wr_opcode opcode;
	int send_flags;
	int num_sge;
	struct ib_sge *sges;
	const struct ib_cqe *wr_cqe;
	u32 ex;
	bool is_chain_wr;
	bool rdma; /* struct ib_rdma_wr */
	u64 remote_addr;
	u32 rkey;
	bool reg; /* struct ib_reg_wr */
	const struct ib_mr *mr;
	u32 key;
	int access;
	u64 mr_iova, mr_length;
	unsigned int mr_page_size;
};

/* What one rdma_rw_ctx_wrs() call returned, and what posting it did. */
struct chain_run {
	struct wr_snap *wrs;
	u32 nr_wrs;
	bool ended; /* the walk reached NULL */
	char check[256]; /* empty: the chain passes every check */
	bool posted;
	int post_ret;
	struct chain_wc wc[CHAIN_MAX_WC];
	u32 nr_wc;
	u32 done_calls;
	bool data_checked;
	char data[160]; /* verification result */
	bool data_ok;
};

struct chain {
	struct chain_opts o;
	/* devices and objects */
	struct soft_fabric *fabric;
	struct soft_profile prof;
	struct ib_device *dev, *peer;
	struct ib_pd *pd, *ppd;
	struct ib_cq *cq, *pcq;
	struct ib_qp *qp, *pqp;
	u32 max_rdma_ctxs;
	int pool_total;
	struct ib_mr **held;
	u32 nr_held;
	bool force;
	/* the local buffer and its entries */
	char *buf;
	size_t buf_len;
	u64 *off; /* entry offsets in buf */
	struct scatterlist **arrays;
	u32 nr_arrays;
	struct scatterlist *sgl;
	struct bio_vec *bvecs;
	struct bvec_iter iter;
	u64 bytes; /* sum of the entries */
	u64 xfer; /* bytes the transfer moves */
	u32 segs; /* entries (bio_vecs) left after the offset */
	bool empty_bvec; /* an empty bio_vec inside the iterator's range */
	/* the SEND appended as chain_wr, and the peer's side of --post */
	char *msg, *rmsg, *rbuf;
	size_t rbuf_len;
	struct ib_mr *rmr;
	struct ib_sge send_sge, recv_sge;
	struct ib_send_wr send_wr;
	struct ib_recv_wr recv_wr;
	struct ib_cqe cqe, send_cqe, recv_cqe;
	u64 raddr;
	u32 rkey;
	/* the context */
	struct rdma_rw_ctx ctx;
	bool ctx_live;
	int ret;
	char path[64];
	char why[192];
	struct chain_mr *mrs;
	u32 nr_mrs;
	u64 iova_base, iova_len;
	struct chain_run *runs;
	u32 nr_runs;
	bool failed;
};

static void fail(struct chain *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	fputs("rdmarw-chain: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->failed = true;
}

#define errno_name cli_errno_name

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: rdmarw-chain [options] read|write\n"
	      "Explain the work requests the R/W API builds for one RDMA READ or WRITE.\n"
	      "\n"
	      "Device (a software device; every attribute can be overridden):\n"
	      "  -p, --profile NAME     mlx5, rxe (default) or siw\n"
	      "      --iommu            emulated IOMMU (the IOVA path of --bvec)\n"
	      "      --max-sgl-rd N     entries above which a READ registers memory\n"
	      "      --max-send-sge N   device SGEs per send WR\n"
	      "      --max-sge-rd N     device SGEs per RDMA READ\n"
	      "      --fr-pages N       max_fast_reg_page_list_len\n"
	      "      --qp-send-sge N    the QP's cap.max_send_sge (default: the device's)\n"
	      "Local buffer:\n"
	      "      --sgl SPEC         entry sizes: SIZE[xCOUNT][,SIZE[xCOUNT]...],\n"
	      "                         K/M suffixes (default 4096); e.g. 4096x8, 512,100\n"
	      "      --offset N         sg_offset (with --bvec: where the iterator starts)\n"
	      "      --misalign N       each entry on its own page, starting N bytes in\n"
	      "      --gap N            bytes between entries (default 0: contiguous)\n"
	      "      --chain N          chained scatterlist arrays of N entries each\n"
	      "      --bvec             rdma_rw_ctx_init_bvec() with one bio_vec per entry\n"
	      "R/W API:\n"
	      "      --force-mr         rdma_rw_set_force_mr(true) (also RDMARW_FORCE_MR=1)\n"
	      "      --pool-size N      cap.max_rdma_ctxs, the MR pool's size\n"
	      "                         (default: rdma_rw_mr_factor() of the buffer)\n"
	      "      --pool-free N      take MRs out of the pool first, leaving N free\n"
	      "      --remote-addr A    remote address (default 0x10000000)\n"
	      "      --rkey K           remote key (default 0x1234)\n"
	      "      --chain-wr         append a signaled SEND as chain_wr\n"
	      "      --repeat N         build (and with --post, post) the chain N times\n"
	      "      --post             execute each chain against a peer device and\n"
	      "                         verify the bytes (remote buffer registered there)\n"
	      "Output:\n"
	      "      --json             every field of every WR and SGE, as JSON\n"
	      "      --dot              a Graphviz digraph of the chain\n"
	      "      --absolute         raw addresses and keys instead of buf+0x.., mr0.v1\n"
	      "  -h, --help             this text\n"
	      "      --version          the tool's and the library's version\n"
	      "\n"
	      "Exit status: 0 success; 1 init, check or post failed; 2 bad arguments.\n",
	      f);
}

/* A number with an optional K/M/G suffix (powers of 1024). */
static bool parse_u64(const char *s, u64 max, u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k':
	case 'K':
		v = v > ULLONG_MAX >> 10 ? ULLONG_MAX : v << 10;
		end++;
		break;
	case 'm':
	case 'M':
		v = v > ULLONG_MAX >> 20 ? ULLONG_MAX : v << 20;
		end++;
		break;
	case 'g':
	case 'G':
		v = v > ULLONG_MAX >> 30 ? ULLONG_MAX : v << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_ll(const char *s, u64 max, long long *out)
{
	u64 v;

	if (!parse_u64(s, max, &v))
		return false;
	*out = (long long)v;
	return true;
}

static bool add_entries(struct chain_opts *o, u64 size, u64 count)
{
	u32 *len;
	u64 i;

	if (!count || count > CHAIN_MAX_ENTRIES - o->nents)
		return false;
	len = realloc(o->len, (o->nents + count) * sizeof(*len));
	if (!len)
		return false;
	o->len = len;
	for (i = 0; i < count; i++)
		o->len[o->nents++] = (u32)size;
	return true;
}

/* One SIZE[xCOUNT] item of --sgl. */
static bool parse_sgl_item(struct chain_opts *o, char *item)
{
	char *x = strchr(item, 'x');
	u64 size, count = 1;

	if (x)
		*x = '\0';
	return parse_u64(item, CHAIN_MAX_ENTRY, &size) &&
	       (!x || parse_u64(x + 1, CHAIN_MAX_ENTRIES, &count)) &&
	       add_entries(o, size, count);
}

/* "4096x8", "512,4096,100", "4Kx2,100"; no empty item. */
static bool parse_sgl(struct chain_opts *o, const char *spec)
{
	char *copy = strdup(spec), *item, *comma;
	bool ok = copy != NULL;

	o->nents = 0;
	for (item = copy; ok; item = comma + 1) {
		comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		ok = parse_sgl_item(o, item);
		if (!comma)
			break;
	}
	free(copy);
	return ok && o->nents;
}

enum {
	OPT_IOMMU = 256,
	OPT_SGL_RD,
	OPT_SEND_SGE,
	OPT_SGE_RD,
	OPT_FR_PAGES,
	OPT_QP_SGE,
	OPT_SGL,
	OPT_OFFSET,
	OPT_MISALIGN,
	OPT_GAP,
	OPT_CHAIN,
	OPT_BVEC,
	OPT_FORCE,
	OPT_POOL_SIZE,
	OPT_POOL_FREE,
	OPT_RADDR,
	OPT_RKEY,
	OPT_CHAIN_WR,
	OPT_REPEAT,
	OPT_POST,
	OPT_JSON,
	OPT_DOT,
	OPT_ABSOLUTE,
};

static const struct option long_opts[] = {
	{ "profile", required_argument, NULL, 'p' },
	{ "iommu", no_argument, NULL, OPT_IOMMU },
	{ "max-sgl-rd", required_argument, NULL, OPT_SGL_RD },
	{ "max-send-sge", required_argument, NULL, OPT_SEND_SGE },
	{ "max-sge-rd", required_argument, NULL, OPT_SGE_RD },
	{ "fr-pages", required_argument, NULL, OPT_FR_PAGES },
	{ "qp-send-sge", required_argument, NULL, OPT_QP_SGE },
	{ "sgl", required_argument, NULL, OPT_SGL },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "misalign", required_argument, NULL, OPT_MISALIGN },
	{ "gap", required_argument, NULL, OPT_GAP },
	{ "chain", required_argument, NULL, OPT_CHAIN },
	{ "bvec", no_argument, NULL, OPT_BVEC },
	{ "force-mr", no_argument, NULL, OPT_FORCE },
	{ "pool-size", required_argument, NULL, OPT_POOL_SIZE },
	{ "pool-free", required_argument, NULL, OPT_POOL_FREE },
	{ "remote-addr", required_argument, NULL, OPT_RADDR },
	{ "rkey", required_argument, NULL, OPT_RKEY },
	{ "chain-wr", no_argument, NULL, OPT_CHAIN_WR },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "post", no_argument, NULL, OPT_POST },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "dot", no_argument, NULL, OPT_DOT },
	{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static bool set_format(struct chain_opts *o, enum chain_format fmt)
{
	if (o->fmt != FMT_TEXT && o->fmt != fmt)
		return false;
	o->fmt = fmt;
	return true;
}

/* One option; false for a bad value. */
static bool parse_opt(struct chain_opts *o, int opt, const char *arg)
{
	u64 v;

	switch (opt) {
	case 'p':
		o->profile = arg;
		return true;
	case OPT_IOMMU:
		o->iommu = true;
		return true;
	case OPT_SGL_RD:
		return parse_ll(arg, UINT32_MAX, &o->max_sgl_rd);
	case OPT_SEND_SGE:
		return parse_ll(arg, INT_MAX, &o->max_send_sge);
	case OPT_SGE_RD:
		return parse_ll(arg, INT_MAX, &o->max_sge_rd);
	case OPT_FR_PAGES:
		return parse_ll(arg, UINT32_MAX, &o->fr_pages);
	case OPT_QP_SGE:
		return parse_ll(arg, UINT32_MAX, &o->qp_send_sge);
	case OPT_SGL:
		return parse_sgl(o, arg);
	case OPT_OFFSET:
		return parse_u64(arg, UINT32_MAX, &o->offset);
	case OPT_MISALIGN:
		return parse_ll(arg, PAGE_SIZE - 1, &o->misalign);
	case OPT_GAP:
		return parse_u64(arg, CHAIN_MAX_ENTRY, &o->gap);
	case OPT_CHAIN:
		if (!parse_u64(arg, CHAIN_MAX_ENTRIES, &v) || !v)
			return false;
		o->chain = (u32)v;
		return true;
	case OPT_BVEC:
		o->bvec = true;
		return true;
	case OPT_FORCE:
		o->force_mr = true;
		return true;
	case OPT_POOL_SIZE:
		return parse_ll(arg, 65536, &o->pool_size);
	case OPT_POOL_FREE:
		return parse_ll(arg, 65536, &o->pool_free);
	case OPT_RADDR:
		o->raddr_set = true;
		return parse_u64(arg, UINT64_MAX, &o->remote_addr);
	case OPT_RKEY:
		o->rkey_set = true;
		if (!parse_u64(arg, UINT32_MAX, &v))
			return false;
		o->rkey = (u32)v;
		return true;
	case OPT_CHAIN_WR:
		o->chain_wr = true;
		return true;
	case OPT_REPEAT:
		if (!parse_u64(arg, CHAIN_MAX_REPEAT, &v) || !v)
			return false;
		o->repeat = (u32)v;
		return true;
	case OPT_POST:
		o->post = true;
		return true;
	case OPT_JSON:
		return set_format(o, FMT_JSON);
	case OPT_DOT:
		return set_format(o, FMT_DOT);
	case OPT_ABSOLUTE:
		o->absolute = true;
		return true;
	default:
		return false;
	}
}

static void opts_defaults(struct chain_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->profile = "rxe";
	o->max_sgl_rd = o->max_send_sge = o->max_sge_rd = o->fr_pages = -1;
	o->qp_send_sge = -1;
	o->misalign = -1;
	o->pool_size = o->pool_free = -1;
	o->remote_addr = CHAIN_DEF_RADDR;
	o->rkey = CHAIN_DEF_RKEY;
	o->repeat = 1;
}

static bool parse_dir(struct chain_opts *o, const char *word)
{
	if (!strcmp(word, "read"))
		o->dir = DMA_FROM_DEVICE;
	else if (!strcmp(word, "write"))
		o->dir = DMA_TO_DEVICE;
	else
		return false;
	o->dir_set = true;
	return true;
}

/* Returns -1 to go on, or the exit status (0 for --help, 2 on error). */
static int parse_args(struct chain_opts *o, int argc, char **argv)
{
	int opt, idx = -1;

	opts_defaults(o);

	while ((opt = getopt_long(argc, argv, "p:h", long_opts, &idx)) != -1) {
		const char *name = idx >= 0 ? long_opts[idx].name : "p";

		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == 'V')
			cli_version("rdmarw-chain");
		if (opt == '?' || !parse_opt(o, opt, optarg)) {
			if (opt == OPT_JSON || opt == OPT_DOT)
				fputs("rdmarw-chain: --json and --dot exclude each other\n",
				      stderr);
			else if (opt != '?')
				fprintf(stderr,
					"rdmarw-chain: bad value for -%s%s: '%s'\n",
					idx >= 0 ? "-" : "", name,
					optarg ? optarg : "");
			return EXIT_BAD_ARGS;
		}
		idx = -1;
	}
	if (optind != argc - 1 || !parse_dir(o, argv[optind])) {
		fputs("rdmarw-chain: give one direction: read or write\n",
		      stderr);
		return EXIT_BAD_ARGS;
	}
	if (!o->nents && !add_entries(o, PAGE_SIZE, 1))
		return EXIT_BAD_ARGS;
	return -1;
}

/* ---- the local buffer --------------------------------------------------- */

static u64 round_up_page(u64 v)
{
	return (v + PAGE_SIZE - 1) & ~(u64)(PAGE_SIZE - 1);
}

/* Place the entries: contiguous, or each on its own page with --misalign. */
static bool layout(struct chain *c)
{
	const struct chain_opts *o = &c->o;
	u64 cursor = 0;
	u32 i;

	c->off = calloc(o->nents, sizeof(*c->off));
	if (!c->off)
		return false;
	for (i = 0; i < o->nents; i++) {
		u64 start = cursor;

		if (i)
			start += o->gap;
		if (o->misalign >= 0)
			start = round_up_page(start) + (u64)o->misalign;
		c->off[i] = start;
		cursor = start + o->len[i];
		c->bytes += o->len[i];
		if (cursor > CHAIN_MAX_LAYOUT)
			return false;
	}
	c->buf_len = round_up_page(cursor ? cursor : 1);
	c->buf = mmap(NULL, c->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->buf == MAP_FAILED) {
		c->buf = NULL;
		return false;
	}
	return true;
}

/* Entries in each scatterlist array (the last array takes the rest). */
static u32 array_entries(const struct chain *c, u32 a)
{
	u32 per = c->o.chain ? c->o.chain : c->o.nents;
	u32 left = c->o.nents - a * per;

	return left < per ? left : per;
}

/*
 * The scatterlist: one array, or arrays of --chain entries each plus a
 * link slot, joined with sg_chain() as block layers build long lists.
 */
static bool build_sgl(struct chain *c)
{
	u32 per = c->o.chain ? c->o.chain : c->o.nents, a, i, n = 0;

	c->nr_arrays = (c->o.nents + per - 1) / per;
	c->arrays = calloc(c->nr_arrays, sizeof(*c->arrays));
	if (!c->arrays)
		return false;
	for (a = 0; a < c->nr_arrays; a++) {
		u32 cnt = array_entries(c, a);
		u32 slots = cnt + (a + 1 < c->nr_arrays);

		c->arrays[a] = calloc(slots, sizeof(struct scatterlist));
		if (!c->arrays[a])
			return false;
		sg_init_table(c->arrays[a], slots);
		for (i = 0; i < cnt; i++, n++)
			sg_set_buf(&c->arrays[a][i], c->buf + c->off[n],
				   c->o.len[n]);
		if (a)
			sg_chain(c->arrays[a - 1], array_entries(c, a - 1) + 1,
				 c->arrays[a]);
	}
	c->sgl = c->arrays[0];
	return true;
}

/* One bio_vec per entry; the iterator starts --offset bytes in. */
static bool build_bvecs(struct chain *c)
{
	u32 i;

	c->bvecs = calloc(c->o.nents, sizeof(*c->bvecs));
	if (!c->bvecs)
		return false;
	for (i = 0; i < c->o.nents; i++)
		bvec_set_virt(&c->bvecs[i], c->buf + c->off[i], c->o.len[i]);
	memset(&c->iter, 0, sizeof(c->iter));
	c->iter.bi_size = c->bytes > UINT_MAX ? UINT_MAX : (u32)c->bytes;
	if (c->o.offset >= c->iter.bi_size)
		c->iter.bi_size = 0; /* nothing left: init must refuse it */
	else
		bvec_iter_advance(c->bvecs, &c->iter, (u32)c->o.offset);
	return true;
}

/*
 * Entries (or bio_vecs) the transfer uses after the offset, and its bytes.
 * A scatterlist skips every entry the offset covers (an empty first entry
 * too); an iterator stops as soon as its bytes are used up.
 */
static void count_transfer(struct chain *c)
{
	u64 skip = c->o.offset, rem;
	u32 i = 0;

	c->segs = 0;
	c->xfer = c->bytes > skip ? c->bytes - skip : 0;
	while (i < c->o.nents && skip >= c->o.len[i] && (skip || !c->o.bvec)) {
		skip -= c->o.len[i];
		i++;
	}
	if (!c->o.bvec) {
		c->segs = c->o.nents - i;
		return;
	}
	for (rem = c->xfer; i < c->o.nents && rem; i++, skip = 0) {
		u64 take = c->o.len[i] - skip;

		c->empty_bvec |= !c->o.len[i];
		c->segs++;
		rem -= take < rem ? take : rem;
	}
}

/* ---- devices ------------------------------------------------------------ */

static void apply_overrides(struct chain *c)
{
	struct ib_device_attr *a = &c->prof.attrs;
	const struct chain_opts *o = &c->o;

	if (o->max_sgl_rd >= 0)
		a->max_sgl_rd = (u32)o->max_sgl_rd;
	if (o->max_send_sge >= 0)
		a->max_send_sge = (int)o->max_send_sge;
	if (o->max_sge_rd >= 0)
		a->max_sge_rd = (int)o->max_sge_rd;
	if (o->fr_pages >= 0)
		a->max_fast_reg_page_list_len = (u32)o->fr_pages;
	c->prof.iommu = o->iommu;
	c->prof.threaded = false;
}

static struct ib_qp *make_qp(struct chain *c, struct ib_pd *pd,
			     struct ib_cq *cq, u32 send_sge, u32 send_wr,
			     u32 ctxs)
{
	struct ib_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = send_wr,
			 .max_recv_wr = 4,
			 .max_send_sge = send_sge,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = CHAIN_PORT,
	};
	struct ib_qp *qp = ib_create_qp(pd, &attr);

	if (IS_ERR(qp)) {
		fail(c, "ib_create_qp: %s", errno_name((int)PTR_ERR(qp)));
		return NULL;
	}
	return qp;
}

/* Pages the entries span: what a ULP hands to rdma_rw_mr_factor(). */
static unsigned int buffer_pages(const struct chain *c)
{
	u64 pages = 0;
	u32 i;

	for (i = 0; i < c->o.nents; i++) {
		u64 first = c->off[i] / PAGE_SIZE;
		u64 end = c->off[i] + (c->o.len[i] ? c->o.len[i] : 1);

		pages += (end + PAGE_SIZE - 1) / PAGE_SIZE - first;
	}
	return pages > UINT_MAX ? UINT_MAX : (unsigned int)pages;
}

/* A Send Queue deep enough for any chain of this buffer (and the SEND). */
static u32 send_queue_depth(const struct chain *c)
{
	u64 wrs = 3ULL * c->o.nents + 4;
	u64 max = (u64)c->dev->attrs.max_qp_wr;

	return (u32)(wrs < max ? wrs : max);
}

static bool open_local(struct chain *c)
{
	u32 sge;

	c->dev = soft_device_create(c->fabric, "chain%d", &c->prof);
	if (IS_ERR(c->dev)) {
		fail(c,
		     "soft_device_create: %s (check the attribute overrides)",
		     errno_name((int)PTR_ERR(c->dev)));
		c->dev = NULL;
		return false;
	}
	c->pd = ib_alloc_pd(c->dev, 0);
	c->cq = IS_ERR(c->pd) ?
			ERR_PTR(-EINVAL) :
			ib_alloc_cq(c->dev, NULL, 256, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->pd) || IS_ERR(c->cq)) {
		fail(c, "ib_alloc_pd/ib_alloc_cq failed");
		return false;
	}
	sge = c->o.qp_send_sge >= 0 ? (u32)c->o.qp_send_sge :
				      (u32)c->dev->attrs.max_send_sge;
	c->max_rdma_ctxs = (u32)c->o.pool_size;
	if (c->o.pool_size < 0) {
		c->max_rdma_ctxs =
			rdma_rw_mr_factor(c->dev, CHAIN_PORT, buffer_pages(c));
		if (!c->max_rdma_ctxs)
			c->max_rdma_ctxs = 1;
	}
	c->qp = make_qp(c, c->pd, c->cq, sge, send_queue_depth(c),
			c->max_rdma_ctxs);
	if (!c->qp)
		return false;
	c->pool_total = ib_mr_pool_count(c->qp, &c->qp->rdma_mrs);
	return true;
}

/* The peer of --post: its QP, a receive for the SEND, the remote buffer. */
static bool open_peer(struct chain *c)
{
	int ret;

	c->peer = soft_device_create(c->fabric, "chain_peer%d", &c->prof);
	if (IS_ERR(c->peer)) {
		c->peer = NULL;
		fail(c, "soft_device_create (peer) failed");
		return false;
	}
	c->ppd = ib_alloc_pd(c->peer, 0);
	c->pcq = IS_ERR(c->ppd) ?
			 ERR_PTR(-EINVAL) :
			 ib_alloc_cq(c->peer, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->ppd) || IS_ERR(c->pcq)) {
		fail(c, "peer PD/CQ failed");
		return false;
	}
	c->pqp = make_qp(c, c->ppd, c->pcq, 1, 4, 0);
	if (!c->pqp)
		return false;
	ret = soft_qp_connect(c->qp, c->pqp);
	if (ret) {
		fail(c, "soft_qp_connect: %s", errno_name(ret));
		return false;
	}
	c->rbuf_len = round_up_page(c->xfer + 2 * CHAIN_GUARD);
	c->rbuf = aligned_alloc(PAGE_SIZE, c->rbuf_len);
	c->rmsg = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!c->rbuf || !c->rmsg) {
		fail(c, "out of memory");
		return false;
	}
	c->rmr = ib_reg_user_mr(c->ppd, (u64)(uintptr_t)c->rbuf, c->rbuf_len,
				(u64)(uintptr_t)c->rbuf,
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
					IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(c->rmr)) {
		fail(c, "ib_reg_user_mr: %s", errno_name((int)PTR_ERR(c->rmr)));
		c->rmr = NULL;
		return false;
	}
	return true;
}

/* Take MRs out of the pool so that init sees only --pool-free of them. */
static bool hold_mrs(struct chain *c)
{
	u32 want, i;

	if (c->o.pool_free < 0)
		return true;
	if (c->o.pool_free > c->pool_total) {
		fprintf(stderr,
			"rdmarw-chain: --pool-free %lld: the pool holds %d MRs (raise --pool-size)\n",
			c->o.pool_free, c->pool_total);
		return false;
	}
	want = (u32)(c->pool_total - c->o.pool_free);
	c->held = calloc(want ? want : 1, sizeof(*c->held));
	if (!c->held)
		return false;
	for (i = 0; i < want; i++) {
		c->held[i] = ib_mr_pool_get(c->qp, &c->qp->rdma_mrs);
		if (!c->held[i])
			return false;
		c->nr_held++;
	}
	return true;
}

static void release_mrs(struct chain *c)
{
	while (c->nr_held)
		ib_mr_pool_put(c->qp, &c->qp->rdma_mrs, c->held[--c->nr_held]);
}

/* ---- names: addresses and keys relative to what they point at ----------- */

#define NAME_LEN 48

static bool in_range(u64 a, const void *base, u64 len)
{
	u64 b = (u64)(uintptr_t)base;

	return base && a >= b && a - b <= len;
}

static const char *fmt_addr(const struct chain *c, u64 a, char *out)
{
	static const char *const names[] = { "buf", "msg", "rbuf", "rmsg" };
	const void *bases[] = { c->buf, c->msg, c->rbuf, c->rmsg };
	const u64 lens[] = { c->buf_len, PAGE_SIZE, c->rbuf_len, PAGE_SIZE };
	size_t i;

	if (!c->o.absolute) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (in_range(a, bases[i], lens[i])) {
				snprintf(out, NAME_LEN, "%s+0x%" PRIx64,
					 names[i],
					 a - (u64)(uintptr_t)bases[i]);
				return out;
			}
		}
		if (c->iova_len && a >= c->iova_base &&
		    a - c->iova_base < c->iova_len) {
			snprintf(out, NAME_LEN, "iova+0x%" PRIx64,
				 a - c->iova_base);
			return out;
		}
	}
	snprintf(out, NAME_LEN, "0x%" PRIx64, a);
	return out;
}

/* Index of the context's MR with the key's 24-bit index, or -1. */
static int mr_of_key(const struct chain *c, u32 key)
{
	u32 i;

	for (i = 0; i < c->nr_mrs; i++)
		if ((c->mrs[i].base_key >> 8) == (key >> 8))
			return (int)i;
	return -1;
}

/* A local key: local_dma_lkey, mr<i>.v<variant since init>, or raw. */
static const char *fmt_lkey(const struct chain *c, u32 key, char *out)
{
	int m = c->o.absolute ? -1 : mr_of_key(c, key);

	if (c->o.absolute)
		snprintf(out, NAME_LEN, "0x%08x", key);
	else if (c->pd && key == c->pd->local_dma_lkey)
		snprintf(out, NAME_LEN, "local_dma_lkey");
	else if (c->ppd && key == c->ppd->local_dma_lkey && c->peer)
		snprintf(out, NAME_LEN, "peer_local_dma_lkey");
	else if (m >= 0)
		snprintf(out, NAME_LEN, "mr%d.v%u", m,
			 (key - c->mrs[m].base_key) & 0xffu);
	else
		snprintf(out, NAME_LEN, "0x%08x", key);
	return out;
}

static const char *fmt_rkey(const struct chain *c, u32 key, char *out)
{
	if (!c->o.absolute && c->rmr && key == c->rmr->rkey)
		snprintf(out, NAME_LEN, "rmr");
	else
		snprintf(out, NAME_LEN, "0x%08x", key);
	return out;
}

static const char *cqe_name(const struct chain *c, const struct ib_cqe *cqe)
{
	if (!cqe)
		return NULL;
	if (cqe == &c->cqe)
		return "cqe";
	if (cqe == &c->send_cqe)
		return "send_cqe";
	if (cqe == &c->recv_cqe)
		return "recv_cqe";
	return "unknown";
}

/* "IB_WR_RDMA_READ" -> "RDMA_READ" */
static const char *opname(enum ib_wr_opcode op)
{
	const char *s = ib_wr_opcode_str(op);

	return strncmp(s, "IB_WR_", 6) ? s : s + 6;
}

static const char *dir_name(enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE ? "DMA_TO_DEVICE" : "DMA_FROM_DEVICE";
}

static const char *type_name(u8 type)
{
	switch (type) {
	case RDMA_RW_SINGLE_WR:
		return "SINGLE";
	case RDMA_RW_MULTI_WR:
		return "MULTI";
	case RDMA_RW_MR:
		return "MR";
	case RDMA_RW_SIG_MR:
		return "SIG_MR";
	case RDMA_RW_IOVA:
		return "IOVA";
	default:
		return "?";
	}
}

static const char *protocol_name(struct ib_device *dev)
{
	if (rdma_protocol_iwarp(dev, CHAIN_PORT))
		return "iWARP";
	if (rdma_protocol_roce(dev, CHAIN_PORT))
		return "RoCE";
	return "InfiniBand";
}

struct flag_name {
	int bit;
	const char *name;
};

static const struct flag_name access_names[] = {
	{ IB_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },
	{ IB_ACCESS_REMOTE_WRITE, "REMOTE_WRITE" },
	{ IB_ACCESS_REMOTE_READ, "REMOTE_READ" },
	{ IB_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC" },
	{ IB_ACCESS_MW_BIND, "MW_BIND" },
	{ IB_ZERO_BASED, "ZERO_BASED" },
	{ 0, NULL },
};

static const struct flag_name send_flag_names[] = {
	{ IB_SEND_FENCE, "FENCE" },	    { IB_SEND_SIGNALED, "SIGNALED" },
	{ IB_SEND_SOLICITED, "SOLICITED" }, { IB_SEND_INLINE, "INLINE" },
	{ IB_SEND_IP_CSUM, "IP_CSUM" },	    { 0, NULL },
};

/* "A|B" for the bits of @v; "0" for none. */
static const char *fmt_flags(const struct flag_name *t, int v, char *out,
			     size_t n)
{
	size_t used = 0;

	out[0] = '\0';
	for (; t->name; t++) {
		if (!(v & t->bit))
			continue;
		used += (size_t)snprintf(out + used, n - used, "%s%s",
					 used ? "|" : "", t->name);
		if (used >= n)
			break;
		v &= ~t->bit;
	}
	if (v && used < n)
		snprintf(out + used, n - used, "%s0x%x", used ? "|" : "", v);
	else if (!used)
		snprintf(out, n, "0");
	return out;
}

/* ---- the path and why --------------------------------------------------- */

/* Pages per MR for R/W contexts: min(max_fast_reg_page_list_len, 256). */
static u32 pages_per_mr(const struct chain *c)
{
	u32 fr = c->dev->attrs.max_fast_reg_page_list_len;

	return fr < 256 ? fr : 256;
}

/*
 * Why the API registers memory for this I/O (the rules of rw.h), or NULL.
 * The bio_vec paths do not look at max_sgl_rd.
 */
static const char *mr_reason(struct chain *c, char *out, size_t n)
{
	struct ib_device *dev = c->dev;
	bool read = c->o.dir == DMA_FROM_DEVICE;
	u32 sgl_rd = dev->attrs.max_sgl_rd;

	int used = 0;

	out[0] = '\0';
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return NULL;
	if (read && rdma_protocol_iwarp(dev, CHAIN_PORT))
		used += snprintf(out, n, "iWARP READ needs MR");
	if (read && !c->o.bvec && sgl_rd && c->segs > sgl_rd)
		used += snprintf(out + used, n - (size_t)used,
				 "%smax_sgl_rd %u < %u entries",
				 used ? ", " : "", sgl_rd, c->segs);
	if (c->force)
		used += snprintf(out + used, n - (size_t)used, "%sforce_mr",
				 used ? ", " : "");
	return used ? out : NULL;
}

static u32 max_sge(const struct chain *c)
{
	return c->o.dir == DMA_TO_DEVICE ? c->qp->max_write_sge :
					   c->qp->max_read_sge;
}

static void explain_sge_path(struct chain *c, const char *mr)
{
	const char *op = c->o.dir == DMA_TO_DEVICE ? "WRITE" : "READ";
	u32 sgl_rd = c->dev->attrs.max_sgl_rd;
	size_t n = sizeof(c->why);

	if (mr) {
		snprintf(
			c->why, n,
			"pool exhausted: fell back to %s (-EAGAIN) from MR (%s); up to %u SGEs per %s",
			type_name(c->ctx.type), mr, max_sge(c), op);
		return;
	}
	if (c->ctx.type == RDMA_RW_SINGLE_WR && c->o.bvec)
		snprintf(c->why, n, "the transfer lies within one bio_vec");
	else if (c->ctx.type == RDMA_RW_SINGLE_WR)
		snprintf(c->why, n, "one entry");
	else if (c->o.bvec)
		snprintf(c->why, n, "%s: one SGE per bio_vec, up to %u per %s",
			 c->dev->iommu ? "no IOVA range" :
					 "virtual DMA, no IOVA API",
			 max_sge(c), op);
	else if (!mr && c->o.dir == DMA_FROM_DEVICE && sgl_rd)
		snprintf(c->why, n,
			 "%u entries <= max_sgl_rd %u: up to %u SGEs per READ",
			 c->segs, sgl_rd, max_sge(c));
	else
		snprintf(c->why, n, "%u entries: up to %u SGEs per %s", c->segs,
			 max_sge(c), op);
}

static void explain_path(struct chain *c)
{
	char mr[64];
	const char *why = mr_reason(c, mr, sizeof(mr));

	snprintf(c->path, sizeof(c->path), "%s", type_name(c->ctx.type));
	switch (c->ctx.type) {
	case RDMA_RW_MR:
		snprintf(c->why, sizeof(c->why),
			 "%s: %u MR%s of up to %u pages", why ? why : "?",
			 c->ctx.nr_ops, c->ctx.nr_ops == 1 ? "" : "s",
			 pages_per_mr(c));
		break;
	case RDMA_RW_IOVA:
		snprintf(c->why, sizeof(c->why),
			 "IOMMU: %u bio_vecs linked into one IOVA range",
			 c->segs);
		break;
	default:
		explain_sge_path(c, why);
		break;
	}
}

/* One contiguous piece of the transfer in the local buffer. */
struct seg {
	u64 addr;
	u64 len;
};

/* The pieces of the local buffer the transfer moves, in order. */
static struct seg *transfer_segs(const struct chain *c, u32 *nr)
{
	u64 skip = c->o.offset, rem = c->xfer;
	struct seg *s = calloc(c->o.nents ? c->o.nents : 1, sizeof(*s));
	u32 i = 0, n = 0;

	if (!s)
		return NULL;
	while (i < c->o.nents && skip >= c->o.len[i] && (skip || !c->o.bvec)) {
		skip -= c->o.len[i];
		i++;
	}
	for (; i < c->o.nents && n < c->segs; i++, skip = 0) {
		s[n].addr = (u64)(uintptr_t)c->buf + c->off[i] + skip;
		s[n].len = c->o.len[i] - skip;
		if (c->o.bvec && s[n].len > rem)
			s[n].len = rem;
		rem -= s[n].len < rem ? s[n].len : rem;
		n++;
	}
	*nr = n;
	return s;
}

/*
 * Why ib_map_mr_sg() cannot take a chunk of @n pieces in one MR (its page
 * rules: only the first may start inside a page, only the last may end
 * inside one unless the next continues it, at most pages-per-MR pages).
 */
static bool chunk_problem(const struct chain *c, const struct seg *s, u32 n,
			  u32 first, char *out, size_t len)
{
	u64 pages = 0, end = 0, ppm = pages_per_mr(c);
	bool iwarp = rdma_protocol_iwarp(c->dev, CHAIN_PORT);
	u32 j;

	for (j = 0; j < n; j++) {
		u64 a = s[j].addr, e = a + s[j].len;
		u64 from = a & ~(u64)(PAGE_SIZE - 1);

		if (iwarp && !s[j].len) {
			snprintf(
				out, len,
				"entry %u is empty: siw's MR page list refuses empty entries",
				first + j);
			return true;
		}

		if (j && (end % PAGE_SIZE || a % PAGE_SIZE)) {
			if (end != a) {
				snprintf(
					out, len,
					"entry %u does not continue entry %u and one of them is not page aligned there (the MR page-list rules)",
					first + j, first + j - 1);
				return true;
			}
			from = round_up_page(end);
		}
		if (e > from)
			pages += (round_up_page(e) - from) / PAGE_SIZE;
		end = e;
	}
	if (pages > ppm && !iwarp) {
		snprintf(out, len,
			 "entries %u..%u span %" PRIu64
			 " pages, more than the %" PRIu64 " an MR holds",
			 first, first + n - 1, pages, ppm);
		return true;
	}
	return false;
}

static bool mr_layout_problem(const struct chain *c, char *out, size_t len)
{
	u32 nr, i, ppm = pages_per_mr(c);
	struct seg *s = transfer_segs(c, &nr);
	bool bad = false;

	for (i = 0; s && ppm && i < nr && !bad; i += ppm)
		bad = chunk_problem(c, s + i, nr - i < ppm ? nr - i : ppm, i,
				    out, len);
	free(s);
	return bad;
}

/*
 * Why the IOMMU cannot link the bio_vecs into one IOVA range: each must
 * continue the previous one, or both must meet at a page boundary.
 */
static bool iova_problem(const struct chain *c, char *out, size_t len)
{
	u32 nr, i;
	struct seg *s = transfer_segs(c, &nr);
	bool bad = false;

	for (i = 1; s && i < nr && !bad; i++) {
		u64 end = s[i - 1].addr + s[i - 1].len;

		bad = end != s[i].addr &&
		      (end % PAGE_SIZE || s[i].addr % PAGE_SIZE);
		if (bad)
			snprintf(
				out, len,
				"the IOMMU cannot link bio_vec %u after bio_vec %u in one IOVA range (neither contiguous nor meeting at a page boundary); a failed link is final",
				i, i - 1);
	}
	free(s);
	return bad;
}

/* What made init fail, as far as the documented rules tell. */
static void explain_error(struct chain *c)
{
	char mr[64];
	const char *why = mr_reason(c, mr, sizeof(mr));
	size_t n = sizeof(c->why);
	int free_mrs = ib_mr_pool_count(c->qp, &c->qp->rdma_mrs);

	snprintf(c->path, sizeof(c->path), "none");
	if (c->ret == -EAGAIN)
		snprintf(
			c->why, n,
			"registration required (%s) and the QP's MR pool has %d of %d MRs free; no fallback on iWARP or under force_mr",
			why ? why : "?", free_mrs, c->pool_total);
	else if (c->ret == -EINVAL && !c->xfer && c->o.bvec)
		snprintf(c->why, n,
			 "the iterator is empty: --offset %" PRIu64
			 " of %" PRIu64 " bytes",
			 c->o.offset, c->bytes);
	else if (c->ret == -EINVAL && !c->segs)
		snprintf(c->why, n,
			 "sg_offset %" PRIu64
			 " at or past the end of the list (%" PRIu64 " bytes)",
			 c->o.offset, c->bytes);
	else if (c->ret == -EINVAL && c->empty_bvec)
		snprintf(c->why, n, "an empty bio_vec in the iterator's range");
	else if (c->ret == -EINVAL && !max_sge(c))
		snprintf(c->why, n, "the QP has no SGE for this direction");
	else if (c->ret == -EINVAL && why && mr_layout_problem(c, c->why, n))
		;
	else if (c->o.bvec && !why && c->dev->iommu && c->segs > 1 &&
		 iova_problem(c, c->why, n))
		;
	else if (c->ret == -ENOMEM)
		snprintf(c->why, n,
			 "out of memory (context storage or mapping)");
	else
		snprintf(c->why, n, "see rdma_rw_ctx_init(3)");
}

/* The local MRs of an MR context, named in order, keys as after init. */
static bool collect_mrs(struct chain *c)
{
	u32 i;

	if (c->ctx.type == RDMA_RW_IOVA) {
		c->iova_base = c->ctx.iova.state.addr & ~(u64)(PAGE_SIZE - 1);
		c->iova_len = c->ctx.iova.state.size + PAGE_SIZE;
	}
	if (c->ctx.type != RDMA_RW_MR)
		return true;
	c->mrs = calloc(c->ctx.nr_ops, sizeof(*c->mrs));
	if (!c->mrs)
		return false;
	for (i = 0; i < c->ctx.nr_ops; i++) {
		c->mrs[i].mr = c->ctx.reg[i].mr;
		c->mrs[i].base_key = c->ctx.reg[i].mr->lkey;
	}
	c->nr_mrs = c->ctx.nr_ops;
	return true;
}

static int do_init(struct chain *c)
{
	if (c->o.bvec)
		return rdma_rw_ctx_init_bvec(&c->ctx, c->qp, CHAIN_PORT,
					     c->bvecs, c->o.nents, c->iter,
					     c->raddr, c->rkey, c->o.dir);
	return rdma_rw_ctx_init(&c->ctx, c->qp, CHAIN_PORT, c->sgl, c->o.nents,
				(u32)c->o.offset, c->raddr, c->rkey, c->o.dir);
}

static void ctx_destroy(struct chain *c)
{
	if (!c->ctx_live)
		return;
	if (c->o.bvec)
		rdma_rw_ctx_destroy_bvec(&c->ctx, c->qp, CHAIN_PORT, c->bvecs,
					 c->o.nents, c->o.dir);
	else
		rdma_rw_ctx_destroy(&c->ctx, c->qp, CHAIN_PORT, c->sgl,
				    c->o.nents, c->o.dir);
	c->ctx_live = false;
}

/* ---- one chain: copy it, check it --------------------------------------- */

static bool is_rdma_opcode(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM ||
	       op == IB_WR_RDMA_READ || op == IB_WR_RDMA_READ_WITH_INV;
}

static bool snap_one(struct chain *c, struct wr_snap *s,
		     const struct ib_send_wr *wr)
{
	s->ptr = wr;
	s->opcode = wr->opcode;
	s->send_flags = wr->send_flags;
	s->num_sge = wr->num_sge;
	s->wr_cqe = wr->wr_cqe;
	s->ex = wr->ex.invalidate_rkey;
	s->is_chain_wr = wr == &c->send_wr;
	if (wr->num_sge > 0 && wr->num_sge <= 65536 && wr->sg_list) {
		s->sges = malloc((size_t)wr->num_sge * sizeof(*s->sges));
		if (!s->sges)
			return false;
		memcpy(s->sges, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*s->sges));
	}
	s->rdma = !s->is_chain_wr && is_rdma_opcode(wr->opcode);
	if (s->rdma) {
		s->remote_addr = rdma_wr(wr)->remote_addr;
		s->rkey = rdma_wr(wr)->rkey;
	}
	s->reg = !s->is_chain_wr && wr->opcode == IB_WR_REG_MR;
	if (s->reg) {
		s->mr = reg_wr(wr)->mr;
		s->key = reg_wr(wr)->key;
		s->access = reg_wr(wr)->access;
		s->mr_iova = s->mr->iova;
		s->mr_length = s->mr->length;
		s->mr_page_size = s->mr->page_size;
	}
	return true;
}

static bool snapshot(struct chain *c, struct chain_run *r,
		     const struct ib_send_wr *first)
{
	const struct ib_send_wr *wr;
	u32 cap = 0;

	for (wr = first; wr && r->nr_wrs < CHAIN_MAX_WRS; wr = wr->next) {
		if (r->nr_wrs == cap) {
			struct wr_snap *n;

			cap = cap ? 2 * cap : 16;
			n = realloc(r->wrs, cap * sizeof(*n));
			if (!n)
				return false;
			r->wrs = n;
		}
		memset(&r->wrs[r->nr_wrs], 0, sizeof(*r->wrs));
		if (!snap_one(c, &r->wrs[r->nr_wrs++], wr))
			return false;
	}
	r->ended = !wr;
	return true;
}

#define CHECK(r, cond, ...)                                                    \
	do {                                                                   \
		if (!(cond)) {                                                 \
			snprintf((r)->check, sizeof((r)->check), __VA_ARGS__); \
			return false;                                          \
		}                                                              \
	} while (0)

/* Walks the transfer's pieces as WRs consume them. */
struct stream {
	const struct seg *s;
	u32 nr, k;
};

/*
 * The next @len bytes of the local buffer must start at @addr (unless it
 * is an IOVA) and end where a piece of the transfer ends.
 */
static bool stream_take(struct stream *st, u64 addr, u64 len, bool iova)
{
	u64 got = 0;

	if (st->k >= st->nr || (!iova && st->s[st->k].addr != addr))
		return false;
	if (!len)
		return st->s[st->k++].len == 0;
	while (got < len && st->k < st->nr)
		got += st->s[st->k++].len;
	return got == len;
}

/* Every RDMA WR: the remote range, contiguous, and the local pieces. */
static bool check_rdma(struct chain *c, struct chain_run *r,
		       const struct wr_snap *w, struct stream *st, u64 *done,
		       const struct wr_snap *reg)
{
	bool iova = c->ctx.type == RDMA_RW_IOVA;
	bool read = c->o.dir == DMA_FROM_DEVICE;
	enum ib_wr_opcode want = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
	int i;

	if (reg && read && rdma_cap_read_inv(c->dev, CHAIN_PORT))
		want = IB_WR_RDMA_READ_WITH_INV;
	CHECK(r, w->opcode == want, "RDMA WR is %s, expected %s",
	      opname(w->opcode), opname(want));
	CHECK(r, w->remote_addr == c->raddr + *done && w->rkey == c->rkey,
	      "RDMA WR remote range is not contiguous from remote_addr/rkey");
	CHECK(r, w->num_sge >= 1 && (u32)w->num_sge <= max_sge(c) && w->sges,
	      "RDMA WR has %d SGEs (QP limit %u)", w->num_sge, max_sge(c));
	for (i = 0; i < w->num_sge; i++) {
		const struct ib_sge *g = &w->sges[i];

		if (reg) {
			CHECK(r,
			      w->num_sge == 1 && g->addr == reg->mr_iova &&
				      g->length == reg->mr_length &&
				      g->lkey == reg->key,
			      "RDMA WR SGE does not match its REG_MR");
			CHECK(r,
			      w->opcode != IB_WR_RDMA_READ_WITH_INV ||
				      w->ex == reg->key,
			      "READ_WITH_INV does not name the registered key");
		} else {
			CHECK(r, g->lkey == c->pd->local_dma_lkey,
			      "SGE lkey is not the PD's local_dma_lkey");
		}
		CHECK(r, stream_take(st, g->addr, g->length, iova),
		      "SGE %d of an RDMA WR is not the next piece of the buffer",
		      i);
		*done += g->length;
	}
	return true;
}

/* A REG_MR (and the LOCAL_INV before it): key and rights as rw.h says. */
static bool check_reg(struct chain *c, struct chain_run *r,
		      const struct wr_snap *w, const struct wr_snap *inv)
{
	int access = IB_ACCESS_LOCAL_WRITE;

	if (rdma_protocol_iwarp(c->dev, CHAIN_PORT))
		access |= IB_ACCESS_REMOTE_WRITE;
	CHECK(r, w->access == access, "REG_MR access 0x%x, expected 0x%x",
	      w->access, access);
	CHECK(r, (w->key >> 8) == (w->mr->lkey >> 8) && w->key == w->mr->lkey,
	      "REG_MR key is not the MR's key");
	CHECK(r,
	      !inv || ((inv->ex >> 8) == (w->key >> 8) &&
		       ((inv->ex + 1) & 0xffu) == (w->key & 0xffu)),
	      "LOCAL_INV does not name the MR's previous key");
	return true;
}

static bool check_signals(struct chain *c, struct chain_run *r, u32 n_rw)
{
	u32 i;

	for (i = 0; i < n_rw; i++) {
		const struct wr_snap *w = &r->wrs[i];
		bool last = i + 1 == n_rw && !c->o.chain_wr;

		CHECK(r, !(w->send_flags & IB_SEND_SIGNALED) == !last,
		      "wr%u is %ssignaled", i, last ? "not " : "");
		CHECK(r, last ? w->wr_cqe == &c->cqe : !w->wr_cqe,
		      "wr%u carries the wrong wr_cqe", i);
	}
	return true;
}

/* Walk the RDMA part: [LOCAL_INV] REG_MR RDMA per MR, or RDMA WRs only. */
static bool check_wrs(struct chain *c, struct chain_run *r, u32 n_rw,
		      struct stream *st, u32 *nr_ops)
{
	const struct wr_snap *inv = NULL, *reg = NULL;
	bool mr = c->ctx.type == RDMA_RW_MR;
	u64 done = 0;
	u32 i;

	for (i = 0; i < n_rw; i++) {
		const struct wr_snap *w = &r->wrs[i];

		if (w->opcode == IB_WR_LOCAL_INV) {
			CHECK(r, mr && !inv && !reg, "unexpected LOCAL_INV");
			inv = w;
		} else if (w->opcode == IB_WR_REG_MR) {
			CHECK(r, mr && !reg, "unexpected REG_MR");
			if (!check_reg(c, r, w, inv))
				return false;
			reg = w;
		} else {
			CHECK(r, !mr || reg, "RDMA WR without its REG_MR");
			if (!check_rdma(c, r, w, st, &done, reg))
				return false;
			(*nr_ops)++;
			inv = reg = NULL;
		}
	}
	CHECK(r, !inv && !reg, "registration without its RDMA WR");
	CHECK(r, done == c->xfer,
	      "the WRs move %" PRIu64 " bytes, not %" PRIu64, done, c->xfer);
	return true;
}

/* The chain against the rules of rdma_rw_ctx_wrs(); false with r->check. */
static bool check_run(struct chain *c, struct chain_run *r, bool first)
{
	u32 n_rw = r->nr_wrs, nr_ops = 0, nr_segs;
	struct stream st = { 0 };
	bool ok;

	CHECK(r, r->ended, "the chain does not end (more than %u WRs)",
	      CHAIN_MAX_WRS);
	if (c->o.chain_wr) {
		CHECK(r, n_rw && r->wrs[n_rw - 1].is_chain_wr,
		      "chain_wr is not the last WR");
		n_rw--;
	}
	CHECK(r, n_rw, "the chain has no RDMA WR");
	CHECK(r, !first || (int)n_rw == c->ret,
	      "the chain has %u WRs but init returned %d", n_rw, c->ret);
	if (!check_signals(c, r, n_rw))
		return false;
	st.s = transfer_segs(c, &nr_segs);
	st.nr = nr_segs;
	CHECK(r, st.s, "out of memory");
	ok = check_wrs(c, r, n_rw, &st, &nr_ops);
	free((void *)st.s);
	if (!ok)
		return false;
	CHECK(r, nr_ops == c->ctx.nr_ops, "%u RDMA WRs but nr_ops is %u",
	      nr_ops, c->ctx.nr_ops);
	return true;
}

/* ---- --post: execute a chain against the peer --------------------------- */

static u8 pattern(u64 i, u32 seed)
{
	return (u8)(i * 131 + seed * 7 + 1 + (i >> 8));
}

static void fill(char *p, u64 n, u32 seed)
{
	u64 i;

	for (i = 0; i < n; i++)
		p[i] = (char)pattern(i, seed);
}

static bool all_bytes(const char *p, u64 n, u8 v)
{
	u64 i;

	for (i = 0; i < n; i++)
		if ((u8)p[i] != v)
			return false;
	return true;
}

/* Buffers before the post: the source patterned, the sink and guards set. */
static void prepare_data(struct chain *c, u32 seed)
{
	memset(c->rbuf, 0xa5, c->rbuf_len);
	if (c->o.dir == DMA_TO_DEVICE) {
		fill(c->buf, c->buf_len, seed);
	} else {
		fill(c->rbuf + CHAIN_GUARD, c->xfer, seed);
		memset(c->buf, 0xee, c->buf_len);
	}
	fill(c->msg, CHAIN_MSG_LEN, seed + 1000);
	memset(c->rmsg, 0, PAGE_SIZE);
}

/* The transfer's bytes against the remote buffer, and nothing else moved. */
static bool verify_data(struct chain *c, char *out, size_t n)
{
	const char *remote = c->rbuf + CHAIN_GUARD;
	u32 nr, i;
	struct seg *s = transfer_segs(c, &nr);
	u64 pos = 0;
	bool ok = s != NULL;

	for (i = 0; ok && i < nr; pos += s[i].len, i++) {
		char *local = (char *)(uintptr_t)s[i].addr;

		ok = !memcmp(local, remote + pos, s[i].len);
		if (ok && c->o.dir == DMA_FROM_DEVICE)
			memset(local, 0xee, s[i].len);
	}
	free(s);
	if (!ok) {
		snprintf(out, n, "MISMATCH in the transferred bytes");
		return false;
	}
	if (!all_bytes(c->rbuf, CHAIN_GUARD, 0xa5) ||
	    !all_bytes(remote + c->xfer, c->rbuf_len - CHAIN_GUARD - c->xfer,
		       0xa5) ||
	    (c->o.dir == DMA_FROM_DEVICE &&
	     !all_bytes(c->buf, c->buf_len, 0xee))) {
		snprintf(out, n,
			 "MISMATCH: bytes outside the transfer changed");
		return false;
	}
	if (c->o.chain_wr && memcmp(c->rmsg, c->msg, CHAIN_MSG_LEN)) {
		snprintf(out, n, "MISMATCH in the SEND's payload");
		return false;
	}
	snprintf(out, n,
		 "%" PRIu64
		 " bytes verified%s, bytes outside the transfer unchanged",
		 c->xfer, c->o.chain_wr ? " and the SEND's payload" : "");
	return true;
}

static void poll_side(struct chain *c, struct chain_run *r, struct ib_cq *cq,
		      const char *side)
{
	struct ib_wc wc[8];
	int n, i;

	while ((n = ib_poll_cq(cq, 8, wc)) > 0) {
		for (i = 0; i < n && r->nr_wc < CHAIN_MAX_WC; i++) {
			struct chain_wc *w = &r->wc[r->nr_wc++];

			w->side = side;
			w->cqe = cqe_name(c, wc[i].wr_cqe);
			w->opcode = wc[i].opcode;
			w->status = wc[i].status;
			w->byte_len = wc[i].byte_len;
		}
	}
}

/* Exactly the completions rw.h promises: one for the chain, one receive. */
static bool completions_ok(struct chain *c, struct chain_run *r)
{
	u32 i, local = 0, peer = 0;
	const struct ib_cqe *want = c->o.chain_wr ? &c->send_cqe : &c->cqe;

	for (i = 0; i < r->nr_wc; i++) {
		if (r->wc[i].status != IB_WC_SUCCESS)
			return false;
		if (!strcmp(r->wc[i].side, "local"))
			local += r->wc[i].cqe &&
				 !strcmp(r->wc[i].cqe, cqe_name(c, want));
		else
			peer++;
	}
	return r->nr_wc == 1 + (u32)c->o.chain_wr && local == 1 &&
	       peer == (u32)c->o.chain_wr;
}

static bool post_run(struct chain *c, struct chain_run *r, u32 seed,
		     const struct ib_send_wr *first)
{
	const struct ib_send_wr *bad = NULL;
	bool verify = !c->o.raddr_set && !c->o.rkey_set;
	int ret;

	prepare_data(c, seed);
	if (c->o.chain_wr) {
		ret = ib_post_recv(c->pqp, &c->recv_wr, NULL);
		if (ret) {
			fail(c, "ib_post_recv (peer): %s", errno_name(ret));
			return false;
		}
	}
	r->posted = true;
	r->post_ret = ib_post_send(c->qp, first, &bad);
	poll_side(c, r, c->cq, "local");
	poll_side(c, r, c->pcq, "peer");
	if (r->post_ret || !completions_ok(c, r)) {
		snprintf(
			r->data, sizeof(r->data),
			"not checked: the chain did not complete with exactly the expected completions, all successful");
		return false;
	}
	if (!verify) {
		snprintf(r->data, sizeof(r->data),
			 "not verified (--remote-addr or --rkey given)");
		r->data_ok = true;
		return true;
	}
	r->data_checked = true;
	r->data_ok = verify_data(c, r->data, sizeof(r->data));
	return r->data_ok;
}

/* ---- text output -------------------------------------------------------- */

static const char *fmt_raddr(const struct chain *c, u64 a, char *out)
{
	if (!c->o.absolute && in_range(a, c->rbuf, c->rbuf_len))
		snprintf(out, NAME_LEN, "rbuf+0x%" PRIx64,
			 a - (u64)(uintptr_t)c->rbuf);
	else
		snprintf(out, NAME_LEN, "0x%" PRIx64, a);
	return out;
}

static int mr_index(const struct chain *c, const struct ib_mr *mr)
{
	u32 i;

	for (i = 0; i < c->nr_mrs; i++)
		if (c->mrs[i].mr == mr)
			return (int)i;
	return -1;
}

static void print_header(const struct chain *c)
{
	const struct ib_device_attr *a = &c->dev->attrs;

	printf("device: %s %s max_send_sge=%d max_sge_rd=%d max_sgl_rd=%u fr_pages=%u iommu=%s\n",
	       c->prof.name, protocol_name(c->dev), a->max_send_sge,
	       a->max_sge_rd, a->max_sgl_rd, a->max_fast_reg_page_list_len,
	       c->dev->iommu ? "on" : "off");
	printf("qp: max_send_sge=%u max_read_sge=%u max_write_sge=%u max_send_wr=%u max_rdma_ctxs=%u force_mr=%s\n",
	       c->qp->cap.max_send_sge, c->qp->max_read_sge,
	       c->qp->max_write_sge, c->qp->cap.max_send_wr, c->max_rdma_ctxs,
	       c->force ? "on" : "off");
	if (c->pool_total > 0)
		printf("pool: %d MR%s of %u pages, %d free at init\n",
		       c->pool_total, c->pool_total == 1 ? "" : "s",
		       pages_per_mr(c), c->pool_total - (int)c->nr_held);
	else
		printf("pool: none (the API registers no memory on this device)\n");
}

static void print_entries(const struct chain *c)
{
	char a[NAME_LEN];
	u32 i, shown = c->o.nents < 16 ? c->o.nents : 16;

	printf("%s: %u %s%s, %" PRIu64 " bytes:", c->o.bvec ? "bvec" : "sgl",
	       c->o.nents, c->o.bvec ? "bio_vec" : "entr",
	       c->o.bvec ? (c->o.nents == 1 ? "" : "s") :
			   (c->o.nents == 1 ? "y" : "ies"),
	       c->bytes);
	for (i = 0; i < shown; i++)
		printf(" %s:%u",
		       fmt_addr(c, (u64)(uintptr_t)c->buf + c->off[i], a),
		       c->o.len[i]);
	if (shown < c->o.nents)
		printf(" ... (%u more)", c->o.nents - shown);
	if (c->o.chain && !c->o.bvec)
		printf(" (chained arrays of %u)", c->o.chain);
	printf("\n");
}

static void print_call(const struct chain *c)
{
	char ra[NAME_LEN], rk[NAME_LEN];

	fmt_raddr(c, c->raddr, ra);
	fmt_rkey(c, c->rkey, rk);
	if (c->o.bvec)
		printf("call: rdma_rw_ctx_init_bvec(ctx, qp, 1, bvecs, %u, {bi_size=%u bi_idx=%u bi_bvec_done=%u}, %s, %s, %s)\n",
		       c->o.nents, c->iter.bi_size, c->iter.bi_idx,
		       c->iter.bi_bvec_done, ra, rk, dir_name(c->o.dir));
	else
		printf("call: rdma_rw_ctx_init(ctx, qp, 1, sgl, %u, %" PRIu64
		       ", %s, %s, %s)\n",
		       c->o.nents, c->o.offset, ra, rk, dir_name(c->o.dir));
	if (c->ret >= 0)
		printf("ret: %d (WQEs)\n", c->ret);
	else
		printf("ret: %d (%s)\n", c->ret, errno_name(c->ret));
	if (c->ret >= 0)
		printf("path: %s (%s)\n", c->path, c->why);
	else
		printf("path: none\n");
}

static void print_sges(const struct chain *c, const struct wr_snap *w)
{
	char a[NAME_LEN], k[NAME_LEN];
	int i;

	printf(" num_sge=%d sge=[", w->num_sge);
	for (i = 0; w->sges && i < w->num_sge; i++)
		printf("%s%s len=%u lkey=%s", i ? "; " : "",
		       fmt_addr(c, w->sges[i].addr, a), w->sges[i].length,
		       fmt_lkey(c, w->sges[i].lkey, k));
	printf("]");
}

static void print_wr(const struct chain *c, u32 i, const struct wr_snap *w)
{
	char a[NAME_LEN], k[NAME_LEN], f[96];

	printf("wr%u: %s", i, opname(w->opcode));
	if (w->reg)
		printf(" mr=mr%d key=%s iova=%s len=%" PRIu64
		       " page_size=%u access=%s",
		       mr_index(c, w->mr), fmt_lkey(c, w->key, k),
		       fmt_addr(c, w->mr_iova, a), w->mr_length,
		       w->mr_page_size,
		       fmt_flags(access_names, w->access, f, sizeof(f)));
	else if (w->opcode != IB_WR_LOCAL_INV)
		print_sges(c, w);
	if (w->rdma)
		printf(" raddr=%s rkey=%s", fmt_raddr(c, w->remote_addr, a),
		       fmt_rkey(c, w->rkey, k));
	if (w->opcode == IB_WR_LOCAL_INV ||
	    w->opcode == IB_WR_RDMA_READ_WITH_INV ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		printf(" inv=%s", fmt_lkey(c, w->ex, k));
	if (w->send_flags)
		printf(" %s",
		       fmt_flags(send_flag_names, w->send_flags, f, sizeof(f)));
	if (w->wr_cqe)
		printf(" wr_cqe=%s", cqe_name(c, w->wr_cqe));
	if (w->is_chain_wr)
		printf(" (chain_wr)");
	printf("\n");
}

static const char *wc_opname(enum ib_wc_opcode op)
{
	switch (op) {
	case IB_WC_SEND:
		return "IB_WC_SEND";
	case IB_WC_RDMA_WRITE:
		return "IB_WC_RDMA_WRITE";
	case IB_WC_RDMA_READ:
		return "IB_WC_RDMA_READ";
	case IB_WC_LOCAL_INV:
		return "IB_WC_LOCAL_INV";
	case IB_WC_REG_MR:
		return "IB_WC_REG_MR";
	case IB_WC_RECV:
		return "IB_WC_RECV";
	default:
		return "IB_WC_OTHER";
	}
}

static void print_post(const struct chain_run *r)
{
	u32 i;

	if (!r->posted)
		return;
	printf("post: ib_post_send = %d%s%s\n", r->post_ret,
	       r->post_ret ? " " : "",
	       r->post_ret ? errno_name(r->post_ret) : "");
	for (i = 0; i < r->nr_wc; i++)
		printf("completion: %s %s %s byte_len=%u wr_cqe=%s\n",
		       r->wc[i].side, wc_opname(r->wc[i].opcode),
		       cli_wc_status_name(r->wc[i].status), r->wc[i].byte_len,
		       r->wc[i].cqe ? r->wc[i].cqe : "NULL");
	if (r->data[0])
		printf("data: %s\n", r->data);
}

static void print_run(const struct chain *c, u32 n)
{
	const struct chain_run *r = &c->runs[n];
	u32 i;

	if (c->o.repeat > 1)
		printf("chain %u/%u:", n + 1, c->o.repeat);
	else
		printf("chain:");
	for (i = 0; i < r->nr_wrs; i++)
		printf("%s%s", i ? " → " : " ", opname(r->wrs[i].opcode));
	printf("\n");
	for (i = 0; i < r->nr_wrs; i++)
		print_wr(c, i, &r->wrs[i]);
	printf("check: %s%s\n", r->check[0] ? "FAILED: " : "ok", r->check);
	print_post(r);
}

static void print_text(const struct chain *c)
{
	u32 i;

	print_header(c);
	print_entries(c);
	print_call(c);
	for (i = 0; i < c->nr_runs; i++)
		print_run(c, i);
}

/* ---- JSON output -------------------------------------------------------- */

static void jw_flags(struct jw *j, const char *key, const struct flag_name *t,
		     int v)
{
	jw_open_inline(j, key, '[');
	for (; t->name; t++)
		if (v & t->bit)
			jw_str(j, NULL, t->name);
	jw_close(j, ']');
}

/* Addresses and keys: numbers with --absolute, names otherwise. */
static void jw_addr(struct jw *j, const struct chain *c, const char *key, u64 a)
{
	char n[NAME_LEN];

	if (c->o.absolute)
		jw_u64(j, key, a);
	else
		jw_str(j, key, fmt_addr(c, a, n));
}

static void jw_raddr(struct jw *j, const struct chain *c, const char *key,
		     u64 a)
{
	char n[NAME_LEN];

	if (c->o.absolute)
		jw_u64(j, key, a);
	else
		jw_str(j, key, fmt_raddr(c, a, n));
}

static void jw_lkey(struct jw *j, const struct chain *c, const char *key, u32 k)
{
	char n[NAME_LEN];

	if (c->o.absolute)
		jw_u64(j, key, k);
	else
		jw_str(j, key, fmt_lkey(c, k, n));
}

static void jw_rkey(struct jw *j, const struct chain *c, const char *key, u32 k)
{
	char n[NAME_LEN];

	if (c->o.absolute)
		jw_u64(j, key, k);
	else
		jw_str(j, key, fmt_rkey(c, k, n));
}

static void json_device(struct jw *j, const struct chain *c)
{
	const struct ib_device_attr *a = &c->dev->attrs;

	jw_open(j, "device", '{');
	jw_str(j, "profile", c->prof.name);
	jw_str(j, "protocol", protocol_name(c->dev));
	jw_bool(j, "iommu", c->dev->iommu);
	jw_int(j, "max_send_sge", a->max_send_sge);
	jw_int(j, "max_sge_rd", a->max_sge_rd);
	jw_u64(j, "max_sgl_rd", a->max_sgl_rd);
	jw_u64(j, "max_fast_reg_page_list_len", a->max_fast_reg_page_list_len);
	jw_u64(j, "pages_per_mr", pages_per_mr(c));
	jw_close(j, '}');
	jw_open(j, "qp", '{');
	jw_u64(j, "max_send_sge", c->qp->cap.max_send_sge);
	jw_u64(j, "max_read_sge", c->qp->max_read_sge);
	jw_u64(j, "max_write_sge", c->qp->max_write_sge);
	jw_u64(j, "max_send_wr", c->qp->cap.max_send_wr);
	jw_u64(j, "max_rdma_ctxs", c->max_rdma_ctxs);
	jw_bool(j, "force_mr", c->force);
	jw_int(j, "pool_size", c->pool_total);
	jw_int(j, "pool_free_at_init", c->pool_total - (int)c->nr_held);
	jw_close(j, '}');
}

static void json_request(struct jw *j, const struct chain *c)
{
	u32 i;

	jw_open(j, "request", '{');
	jw_str(j, "api",
	       c->o.bvec ? "rdma_rw_ctx_init_bvec" : "rdma_rw_ctx_init");
	jw_str(j, "dir", dir_name(c->o.dir));
	jw_u64(j, c->o.bvec ? "nr_bvec" : "sg_cnt", c->o.nents);
	jw_u64(j, "offset", c->o.offset);
	jw_raddr(j, c, "remote_addr", c->raddr);
	jw_rkey(j, c, "rkey", c->rkey);
	jw_u64(j, "bytes", c->bytes);
	jw_u64(j, "transfer_bytes", c->xfer);
	jw_u64(j, "chained_arrays", c->o.bvec ? 0 : c->nr_arrays);
	jw_bool(j, "chain_wr", c->o.chain_wr);
	if (c->o.bvec) {
		jw_open_inline(j, "iter", '{');
		jw_u64(j, "bi_size", c->iter.bi_size);
		jw_u64(j, "bi_idx", c->iter.bi_idx);
		jw_u64(j, "bi_bvec_done", c->iter.bi_bvec_done);
		jw_close(j, '}');
	}
	jw_open(j, "entries", '[');
	for (i = 0; i < c->o.nents; i++) {
		jw_open_inline(j, NULL, '{');
		jw_addr(j, c, "addr", (u64)(uintptr_t)c->buf + c->off[i]);
		jw_u64(j, "length", c->o.len[i]);
		jw_close(j, '}');
	}
	jw_close(j, ']');
	jw_close(j, '}');
}

static void json_wr_fields(struct jw *j, const struct chain *c,
			   const struct wr_snap *w)
{
	int i;

	jw_open(j, "sges", '[');
	for (i = 0; w->sges && i < w->num_sge; i++) {
		jw_open_inline(j, NULL, '{');
		jw_addr(j, c, "addr", w->sges[i].addr);
		jw_u64(j, "length", w->sges[i].length);
		jw_lkey(j, c, "lkey", w->sges[i].lkey);
		jw_close(j, '}');
	}
	jw_close(j, ']');
	if (w->opcode == IB_WR_LOCAL_INV ||
	    w->opcode == IB_WR_RDMA_READ_WITH_INV ||
	    w->opcode == IB_WR_SEND_WITH_INV)
		jw_lkey(j, c, "invalidate_rkey", w->ex);
	else
		jw_u64(j, "ex", w->ex);
	if (w->rdma) {
		jw_raddr(j, c, "remote_addr", w->remote_addr);
		jw_rkey(j, c, "rkey", w->rkey);
	}
	if (w->reg) {
		char mr[16];

		snprintf(mr, sizeof(mr), "mr%d", mr_index(c, w->mr));
		jw_open(j, "reg", '{');
		jw_str(j, "mr", mr);
		jw_lkey(j, c, "key", w->key);
		jw_u64(j, "access", (u64)w->access);
		jw_flags(j, "access_names", access_names, w->access);
		jw_addr(j, c, "mr_iova", w->mr_iova);
		jw_u64(j, "mr_length", w->mr_length);
		jw_u64(j, "mr_page_size", w->mr_page_size);
		jw_close(j, '}');
	}
}

static void json_wr(struct jw *j, const struct chain *c,
		    const struct chain_run *r, u32 i)
{
	const struct wr_snap *w = &r->wrs[i];

	jw_open(j, NULL, '{');
	jw_u64(j, "index", i);
	jw_str(j, "opcode", ib_wr_opcode_str(w->opcode));
	jw_u64(j, "opcode_value", (u64)w->opcode);
	jw_u64(j, "send_flags", (u64)w->send_flags);
	jw_flags(j, "send_flags_names", send_flag_names, w->send_flags);
	jw_int(j, "num_sge", w->num_sge);
	jw_str(j, "wr_cqe", cqe_name(c, w->wr_cqe));
	jw_bool(j, "chain_wr", w->is_chain_wr);
	if (i + 1 < r->nr_wrs)
		jw_u64(j, "next", i + 1);
	else
		jw_str(j, "next", NULL);
	json_wr_fields(j, c, w);
	jw_close(j, '}');
}

static void json_post(struct jw *j, const struct chain_run *r)
{
	u32 i;

	jw_open(j, "post", '{');
	jw_int(j, "ib_post_send", r->post_ret);
	jw_open(j, "completions", '[');
	for (i = 0; i < r->nr_wc; i++) {
		jw_open_inline(j, NULL, '{');
		jw_str(j, "side", r->wc[i].side);
		jw_str(j, "wr_cqe", r->wc[i].cqe);
		jw_str(j, "opcode", wc_opname(r->wc[i].opcode));
		jw_str(j, "status", cli_wc_status_name(r->wc[i].status));
		jw_u64(j, "byte_len", r->wc[i].byte_len);
		jw_close(j, '}');
	}
	jw_close(j, ']');
	jw_bool(j, "data_verified", r->data_checked && r->data_ok);
	jw_str(j, "data", r->data[0] ? r->data : NULL);
	jw_close(j, '}');
}

static void json_runs(struct jw *j, const struct chain *c)
{
	u32 n, i;

	jw_open(j, "chains", '[');
	for (n = 0; n < c->nr_runs; n++) {
		const struct chain_run *r = &c->runs[n];

		jw_open(j, NULL, '{');
		jw_u64(j, "call", n + 1);
		jw_u64(j, "nr_wrs", r->nr_wrs);
		jw_open(j, "wrs", '[');
		for (i = 0; i < r->nr_wrs; i++)
			json_wr(j, c, r, i);
		jw_close(j, ']');
		jw_str(j, "check", r->check[0] ? r->check : "ok");
		if (r->posted)
			json_post(j, r);
		jw_close(j, '}');
	}
	jw_close(j, ']');
}

static void print_json(const struct chain *c)
{
	struct jw j = { 0 };

	jw_open(&j, NULL, '{');
	jw_str(&j, "tool", "rdmarw-chain");
	jw_bool(&j, "relative", !c->o.absolute);
	json_device(&j, c);
	json_request(&j, c);
	jw_int(&j, "ret", c->ret);
	jw_str(&j, "errno", c->ret < 0 ? errno_name(c->ret) : NULL);
	jw_open(&j, "path", '{');
	jw_str(&j, "type", c->path);
	jw_str(&j, "reason", c->why);
	jw_u64(&j, "nr_ops", c->ret >= 0 ? c->ctx.nr_ops : 0);
	jw_close(&j, '}');
	json_runs(&j, c);
	jw_bool(&j, "ok", !c->failed);
	jw_close(&j, '}');
}

/* ---- Graphviz output ---------------------------------------------------- */

static void dot_wr(const struct chain *c, const char *id,
		   const struct wr_snap *w)
{
	char a[NAME_LEN], k[NAME_LEN], f[96];

	printf("\t%s [label=\"%s", id, opname(w->opcode));
	if (w->reg)
		printf("\\nkey=%s\\nlen=%" PRIu64 "\\n%s",
		       fmt_lkey(c, w->key, k), w->mr_length,
		       fmt_flags(access_names, w->access, f, sizeof(f)));
	if (w->opcode == IB_WR_LOCAL_INV ||
	    w->opcode == IB_WR_RDMA_READ_WITH_INV)
		printf("\\ninv=%s", fmt_lkey(c, w->ex, k));
	if (w->num_sge > 0 && w->sges)
		printf("\\n%d SGE%s from %s", w->num_sge,
		       w->num_sge == 1 ? "" : "s",
		       fmt_addr(c, w->sges[0].addr, a));
	if (w->rdma)
		printf("\\nraddr=%s", fmt_raddr(c, w->remote_addr, a));
	printf("\"%s%s];\n",
	       (w->send_flags & IB_SEND_SIGNALED) ? " penwidth=2" : "",
	       w->is_chain_wr ? " style=dashed" : "");
}

static void dot_run(const struct chain *c, u32 n)
{
	const struct chain_run *r = &c->runs[n];
	char id[32], prev[32];
	u32 i;

	if (c->nr_runs > 1)
		printf("\tsubgraph cluster_%u {\n\tlabel=\"chain %u/%u\";\n",
		       n + 1, n + 1, c->nr_runs);
	for (i = 0; i < r->nr_wrs; i++) {
		const struct wr_snap *w = &r->wrs[i];

		snprintf(id, sizeof(id), "c%u_wr%u", n + 1, i);
		dot_wr(c, id, w);
		if (i)
			printf("\t%s -> %s;\n", prev, id);
		if (w->reg)
			printf("\t%s -> mr%d [style=dotted label=\"registers\"];\n",
			       id, mr_index(c, w->mr));
		if (w->opcode == IB_WR_LOCAL_INV && mr_of_key(c, w->ex) >= 0)
			printf("\t%s -> mr%d [style=dotted label=\"invalidates\"];\n",
			       id, mr_of_key(c, w->ex));
		if (w->wr_cqe && (w->send_flags & IB_SEND_SIGNALED))
			printf("\t%s_done [shape=ellipse label=\"%s->done\"];\n\t%s -> %s_done [style=dashed label=\"completion\"];\n",
			       id, cqe_name(c, w->wr_cqe), id, id);
		memcpy(prev, id, sizeof(prev));
	}
	if (c->nr_runs > 1)
		printf("\t}\n");
}

static void print_dot(const struct chain *c)
{
	u32 i;

	printf("digraph rdma_rw_chain {\n\trankdir=LR;\n");
	printf("\tnode [shape=box fontname=\"monospace\"];\n");
	printf("\tlabel=\"%s %s: %s (%s), ret %d\";\n", c->prof.name,
	       c->o.dir == DMA_TO_DEVICE ? "write" : "read", c->path, c->why,
	       c->ret);
	for (i = 0; i < c->nr_mrs; i++)
		printf("\tmr%u [shape=cylinder label=\"mr%u\"];\n", i, i);
	for (i = 0; i < c->nr_runs; i++)
		dot_run(c, i);
	printf("}\n");
}

/* ---- set-up, the calls, tear-down ---------------------------------------- */

/* The SEND appended as chain_wr, and the peer's receive for it. */
static bool setup_send(struct chain *c)
{
	c->msg = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!c->msg)
		return false;
	memset(c->msg, 0, PAGE_SIZE);
	c->send_sge.addr = (u64)(uintptr_t)c->msg;
	c->send_sge.length = CHAIN_MSG_LEN;
	c->send_sge.lkey = c->pd->local_dma_lkey;
	c->send_wr.opcode = IB_WR_SEND;
	c->send_wr.sg_list = &c->send_sge;
	c->send_wr.num_sge = 1;
	c->send_wr.send_flags = IB_SEND_SIGNALED;
	c->send_wr.wr_cqe = &c->send_cqe;
	if (c->peer) {
		c->recv_sge.addr = (u64)(uintptr_t)c->rmsg;
		c->recv_sge.length = CHAIN_MSG_LEN;
		c->recv_sge.lkey = c->ppd->local_dma_lkey;
		c->recv_wr.sg_list = &c->recv_sge;
		c->recv_wr.num_sge = 1;
		c->recv_wr.wr_cqe = &c->recv_cqe;
	}
	return true;
}

/* Build the devices and the buffer.  Returns -1 to go on, or an exit code. */
static int setup(struct chain *c)
{
	int ret = soft_profile_get(c->o.profile, &c->prof);

	if (ret) {
		fprintf(stderr,
			"rdmarw-chain: unknown profile '%s' (mlx5, rxe, siw)\n",
			c->o.profile);
		return EXIT_BAD_ARGS;
	}
	apply_overrides(c);
	if (c->o.force_mr)
		rdma_rw_set_force_mr(true);
	c->force = rdma_rw_get_force_mr();
	if (!layout(c)) {
		fprintf(stderr,
			"rdmarw-chain: the buffer layout exceeds 4 GiB\n");
		return EXIT_BAD_ARGS;
	}
	if (!(c->o.bvec ? build_bvecs(c) : build_sgl(c)))
		return EXIT_FAILURE;
	count_transfer(c);
	c->fabric = soft_fabric_create();
	if (IS_ERR(c->fabric)) {
		c->fabric = NULL;
		return EXIT_FAILURE;
	}
	if (!open_local(c) || (c->o.post && !open_peer(c)) || !setup_send(c))
		return EXIT_FAILURE;
	c->raddr = c->o.remote_addr;
	c->rkey = c->o.rkey;
	if (c->o.post && !c->o.raddr_set)
		c->raddr = (u64)(uintptr_t)c->rbuf + CHAIN_GUARD;
	if (c->o.post && !c->o.rkey_set)
		c->rkey = c->rmr->rkey;
	if (!hold_mrs(c))
		return c->o.pool_free > c->pool_total ? EXIT_BAD_ARGS :
							EXIT_FAILURE;
	return -1;
}

/* rdma_rw_ctx_wrs() --repeat times: copy, check and (--post) post each. */
static void run_chains(struct chain *c)
{
	struct ib_send_wr *chain_wr = c->o.chain_wr ? &c->send_wr : NULL;
	u32 n;

	c->runs = calloc(c->o.repeat, sizeof(*c->runs));
	if (!c->runs) {
		fail(c, "out of memory");
		return;
	}
	for (n = 0; n < c->o.repeat && !c->failed; n++) {
		struct chain_run *r = &c->runs[c->nr_runs++];
		struct ib_send_wr *first;

		first = rdma_rw_ctx_wrs(&c->ctx, c->qp, CHAIN_PORT, &c->cqe,
					chain_wr);
		if (!first) {
			snprintf(r->check, sizeof(r->check),
				 "rdma_rw_ctx_wrs returned NULL");
			c->failed = true;
			break;
		}
		if (!snapshot(c, r, first)) {
			fail(c, "out of memory");
			break;
		}
		if (!check_run(c, r, n == 0))
			c->failed = true;
		else if (c->o.post && !post_run(c, r, n + 1, first))
			c->failed = true;
	}
}

static void run(struct chain *c)
{
	c->ret = do_init(c);
	if (c->ret < 0) {
		explain_error(c);
		c->failed = true;
		return;
	}
	c->ctx_live = true;
	if (!collect_mrs(c)) {
		fail(c, "out of memory");
		return;
	}
	explain_path(c);
	run_chains(c);
}

static void check_ret(struct chain *c, const char *what, int ret)
{
	if (ret)
		fail(c, "%s: %s", what, errno_name(ret));
}

static void teardown_objects(struct chain *c)
{
	if (c->qp)
		check_ret(c, "ib_destroy_qp", ib_destroy_qp(c->qp));
	if (c->pqp)
		check_ret(c, "ib_destroy_qp (peer)", ib_destroy_qp(c->pqp));
	if (c->rmr)
		check_ret(c, "ib_dereg_mr", ib_dereg_mr(c->rmr));
	if (!IS_ERR_OR_NULL(c->cq))
		check_ret(c, "ib_free_cq", ib_free_cq(c->cq));
	if (!IS_ERR_OR_NULL(c->pcq))
		check_ret(c, "ib_free_cq (peer)", ib_free_cq(c->pcq));
	if (!IS_ERR_OR_NULL(c->pd))
		check_ret(c, "ib_dealloc_pd", ib_dealloc_pd(c->pd));
	if (!IS_ERR_OR_NULL(c->ppd))
		check_ret(c, "ib_dealloc_pd (peer)", ib_dealloc_pd(c->ppd));
	if (c->dev)
		check_ret(c, "soft_device_destroy",
			  soft_device_destroy(c->dev));
	if (c->peer)
		check_ret(c, "soft_device_destroy (peer)",
			  soft_device_destroy(c->peer));
	if (c->fabric)
		check_ret(c, "soft_fabric_destroy",
			  soft_fabric_destroy(c->fabric));
}

static void free_memory(struct chain *c)
{
	u32 i, n;

	for (n = 0; c->runs && n < c->nr_runs; n++) {
		for (i = 0; i < c->runs[n].nr_wrs; i++)
			free(c->runs[n].wrs[i].sges);
		free(c->runs[n].wrs);
	}
	free(c->runs);
	for (i = 0; c->arrays && i < c->nr_arrays; i++)
		free(c->arrays[i]);
	free(c->arrays);
	free(c->bvecs);
	free(c->mrs);
	free(c->held);
	free(c->off);
	free(c->msg);
	free(c->rmsg);
	free(c->rbuf);
	free(c->o.len);
	if (c->buf)
		munmap(c->buf, c->buf_len);
}

/* Destroy everything; a context must leave nothing DMA-mapped behind. */
static void teardown(struct chain *c)
{
	ctx_destroy(c);
	if (c->qp)
		release_mrs(c);
	if (c->dev && c->dev->dma_mapped)
		fail(c, "%ld DMA mappings left after destroy",
		     c->dev->dma_mapped);
	teardown_objects(c);
	free_memory(c);
}

int main(int argc, char **argv)
{
	struct chain *c = calloc(1, sizeof(*c));
	int code;

	if (!c)
		return EXIT_FAILURE;
	code = parse_args(&c->o, argc, argv);
	if (code < 0)
		code = setup(c);
	if (code < 0) {
		run(c);
		if (c->o.fmt == FMT_JSON)
			print_json(c);
		else if (c->o.fmt == FMT_DOT)
			print_dot(c);
		else
			print_text(c);
		if (c->ret < 0 && c->o.fmt == FMT_TEXT)
			printf("error: %s: %s: %s\n",
			       c->o.bvec ? "rdma_rw_ctx_init_bvec" :
					   "rdma_rw_ctx_init",
			       errno_name(c->ret), c->why);
	}
	teardown(c);
	if (code < 0)
		code = c->failed ? EXIT_FAILURE : EXIT_SUCCESS;
	free(c);
	return code;
}
