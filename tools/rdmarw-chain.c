// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-chain: explain what the R/W API will post.
 *
 * Builds two connected software devices of the chosen profile (attributes
 * overridable, tools/common/two_hosts.c), a QP sized as a ULP would size
 * it, and a local buffer laid out as the command line says; runs
 * rdma_rw_ctx_init() (or rdma_rw_ctx_init_bvec()) and rdma_rw_ctx_wrs(),
 * and prints the chain of work requests it gets, with the return value and
 * the decision the API recorded (rdmarw_rw_ctx_explain(): the path, why,
 * MRs, WQEs).  The tool holds none of the API's rules and re-checks none
 * of its promises (tests/test_rw_explain.c and tests/test_rw_chain.c do);
 * --post executes every chain against the peer and verifies the bytes.
 *
 * Addresses and keys are printed relative to what they point at (buf+0x..,
 * mr0.v1, local_dma_lkey) so that the output of a run is reproducible;
 * --absolute prints raw values.
 *
 * Exit status: 0 on success, 1 when init or a post fails (or
 * the devices cannot be set up), 2 for bad arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdmarw/kernel.h>
#include <rdmarw/mr_pool.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "cli.h"
#include "json.h"
#include "names.h"
#include "opts.h"
#include "two_hosts.h"

#define CHAIN_MAX_ENTRIES 65536U
#define CHAIN_MAX_ENTRY (1ULL << 30)
#define CHAIN_MAX_LAYOUT (1ULL << 32)
#define CHAIN_MAX_WC 16
#define CHAIN_MSG_LEN 64U
#define CHAIN_GUARD 64U
#define CHAIN_PORT 1
#define NAME_LEN 48
#define EXIT_BAD_ARGS 2
#define CHAIN_TOOL "rdmarw-chain"

/* ---- options ------------------------------------------------------------ */

enum chain_format { FMT_TEXT, FMT_JSON, FMT_DOT };

struct chain_opts {
	const char *profile;
	bool iommu, bvec, force_mr, chain_wr, post, absolute, json, dot;
	long long max_sgl_rd, max_send_sge, max_sge_rd, fr_pages; /* -1: keep */
	long long qp_send_sge; /* -1: the device's */
	long long misalign; /* -1: entries are contiguous */
	long long pool_size; /* -1: rdma_rw_mr_factor() */
	long long pool_free; /* -1: the whole pool */
	long long chain; /* 0: one array */
	long long repeat;
	long long offset, gap;
	long long remote_addr, rkey; /* -1: the defaults, or rbuf with --post */
	enum dma_data_direction dir;
	u32 len[CHAIN_MAX_ENTRIES]; /* entry sizes */
	u32 nents;
	enum chain_format fmt;
};

/* -p/--profile: one of the software device's profiles. */
static const char *set_profile(void *opts, const char *name)
{
	struct soft_profile p;

	((struct chain_opts *)opts)->profile = name;
	return soft_profile_get(name, &p) ?
		       "not a software profile (mlx5, rxe or siw)" :
		       NULL;
}

/* One part of an --sgl item, its SIZE or COUNT: NULL, or why not. */
static const char *sgl_part(const char *what, const char *s, u64 min, u64 max,
			    u64 *v)
{
	static char why[96];
	const char *bad = cli_parse_u64(s, min, max, v);

	if (!bad)
		return NULL;
	snprintf(why, sizeof(why), "%s '%s': %s", what, s, bad);
	return why;
}

/* --sgl: "4096x8", "512,4096,100", "4Kx2,100"; no empty item. */
static const char *parse_sgl(void *opts, const char *spec)
{
	struct chain_opts *o = opts;
	char *copy = strdup(spec), *rest = copy, *item, *size;
	const char *bad = NULL;
	u64 bytes, count;

	if (!copy)
		return "out of memory";
	for (o->nents = 0; !bad && (item = strsep(&rest, ","));) {
		size = strsep(&item, "x"); /* item: the COUNT, or NULL */
		count = 1;
		bad = sgl_part("SIZE", size, 0, CHAIN_MAX_ENTRY, &bytes);
		if (!bad && item)
			bad = sgl_part("COUNT", item, 1, CHAIN_MAX_ENTRIES,
				       &count);
		if (!bad && count > CHAIN_MAX_ENTRIES - o->nents)
			bad = "more than 65536 entries";
		while (!bad && count--)
			o->len[o->nents++] = (u32)bytes;
	}
	free(copy);
	return bad;
}

#define AT(f) CLI_FIELD(struct chain_opts, f)

/* The options, each once, in --help's order (tools/common/opts.h). */
static const struct cli_opt chain_opts[] = {
	{ .help = "Device (a software device; every attribute can be overridden):" },
	{ "profile", 'p', CLI_CALL, "NAME", "mlx5, rxe (default) or siw",
	  .call = set_profile },
	{ "iommu", 0, CLI_FLAG, NULL,
	  "emulated IOMMU (the IOVA path of --bvec)", AT(iommu) },
	{ "max-sgl-rd", 0, CLI_NUM, "N",
	  "entries above which a READ registers memory", AT(max_sgl_rd),
	  CLI_RANGE(0, UINT32_MAX) },
	{ "max-send-sge", 0, CLI_NUM, "N", "device SGEs per send WR",
	  AT(max_send_sge), CLI_RANGE(0, INT_MAX) },
	{ "max-sge-rd", 0, CLI_NUM, "N", "device SGEs per RDMA READ",
	  AT(max_sge_rd), CLI_RANGE(0, INT_MAX) },
	{ "fr-pages", 0, CLI_NUM, "N", "max_fast_reg_page_list_len",
	  AT(fr_pages), CLI_RANGE(0, UINT32_MAX) },
	{ "qp-send-sge", 0, CLI_NUM, "N",
	  "the QP's cap.max_send_sge (default: the device's)", AT(qp_send_sge),
	  CLI_RANGE(0, UINT32_MAX) },
	{ .help = "Local buffer:" },
	{ "sgl", 0, CLI_CALL, "SPEC",
	  "entry sizes: SIZE[xCOUNT][,SIZE[xCOUNT]...],\n"
	  "K/M suffixes (default 4096); e.g. 4096x8, 512,100",
	  .call = parse_sgl },
	{ "offset", 0, CLI_NUM, "N",
	  "sg_offset (with --bvec: where the iterator starts)", AT(offset),
	  CLI_RANGE(0, UINT32_MAX) },
	{ "misalign", 0, CLI_NUM, "N",
	  "each entry on its own page, starting N bytes in", AT(misalign),
	  CLI_RANGE(0, PAGE_SIZE - 1) },
	{ "gap", 0, CLI_NUM, "N",
	  "bytes between entries (default 0: contiguous)", AT(gap),
	  CLI_RANGE(0, CHAIN_MAX_ENTRY) },
	{ "chain", 0, CLI_NUM, "N",
	  "chained scatterlist arrays of N entries each", AT(chain),
	  CLI_RANGE(1, CHAIN_MAX_ENTRIES) },
	{ "bvec", 0, CLI_FLAG, NULL,
	  "rdma_rw_ctx_init_bvec() with one bio_vec per entry", AT(bvec) },
	{ .help = "R/W API:" },
	{ "force-mr", 0, CLI_FLAG, NULL,
	  "rdma_rw_set_force_mr(true) (also RDMARW_FORCE_MR=1)", AT(force_mr) },
	{ "pool-size", 0, CLI_NUM, "N",
	  "cap.max_rdma_ctxs, the MR pool's size\n"
	  "(default: rdma_rw_mr_factor() of the buffer)",
	  AT(pool_size), CLI_RANGE(0, 65536) },
	{ "pool-free", 0, CLI_NUM, "N",
	  "take MRs out of the pool first, leaving N free", AT(pool_free),
	  CLI_RANGE(0, 65536) },
	{ "remote-addr", 0, CLI_NUM, "A", "remote address (default 0x10000000)",
	  AT(remote_addr), CLI_RANGE(0, INT64_MAX) },
	{ "rkey", 0, CLI_NUM, "K", "remote key (default 0x1234)", AT(rkey),
	  CLI_RANGE(0, UINT32_MAX) },
	{ "chain-wr", 0, CLI_FLAG, NULL, "append a signaled SEND as chain_wr",
	  AT(chain_wr) },
	{ "repeat", 0, CLI_NUM, "N",
	  "build (and with --post, post) the chain N times", AT(repeat),
	  CLI_RANGE(1, 4096) },
	{ "post", 0, CLI_FLAG, NULL,
	  "execute each chain against a peer device and\n"
	  "verify the bytes (remote buffer registered there)",
	  AT(post) },
	{ .help = "Output:" },
	{ "json", 0, CLI_FLAG, NULL, "every field of every WR and SGE, as JSON",
	  AT(json) },
	{ "dot", 0, CLI_FLAG, NULL, "a Graphviz digraph of the chain",
	  AT(dot) },
	{ "absolute", 0, CLI_FLAG, NULL,
	  "raw addresses and keys instead of buf+0x.., mr0.v1", AT(absolute) },
};

static const struct cli_tool chain_cli = {
	.name = CHAIN_TOOL,
	.synopsis = "[options] read|write",
	.about =
		"Explain the work requests the R/W API builds for one RDMA READ or WRITE.",
	.epilog =
		"Exit status: 0 success; 1 init or post failed; 2 bad arguments.\n",
	CLI_OPTS(chain_opts),
};

/* The options, then one direction; exits for --help, --version, refusals. */
static void parse_args(struct chain_opts *o, int argc, char **argv)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->profile = "rxe";
	o->max_sgl_rd = o->max_send_sge = o->max_sge_rd = o->fr_pages = -1;
	o->qp_send_sge = o->misalign = o->pool_size = o->pool_free = -1;
	o->remote_addr = o->rkey = -1;
	o->repeat = 1;
	i = cli_opts_parse(&chain_cli, o, argc, argv);
	if (o->json && o->dot)
		cli_refuse(CHAIN_TOOL, "--json and --dot exclude each other");
	o->fmt = o->json ? FMT_JSON : o->dot ? FMT_DOT : FMT_TEXT;
	if (i == argc - 1 && !strcmp(argv[i], "read"))
		o->dir = DMA_FROM_DEVICE;
	else if (i == argc - 1 && !strcmp(argv[i], "write"))
		o->dir = DMA_TO_DEVICE;
	else
		cli_refuse(CHAIN_TOOL, "give one direction: read or write");
	if (!o->nents && parse_sgl(o, "4096"))
		exit(EXIT_FAILURE);
}

/* ---- state -------------------------------------------------------------- */

struct chain {
	struct chain_opts o;
	struct soft_profile prof;
	struct two_hosts h;
	u32 pool_pages;
	int pool_total;
	struct ib_mr **held;
	u32 nr_held;
	/* the local buffer, its entries, and what the transfer should move */
	char *buf;
	size_t buf_len;
	u64 off[CHAIN_MAX_ENTRIES]; /* where each entry starts in buf */
	struct scatterlist *sgl; /* the arrays, chained, in one block */
	u32 nr_arrays;
	struct bio_vec *bvecs;
	struct bvec_iter iter;
	u64 bytes, xfer;
	u32 pages; /* the entries span: what a ULP gives rdma_rw_mr_factor() */
	/* the SEND appended as chain_wr, and the peer's side of --post */
	char msg[CHAIN_MSG_LEN], rmsg[CHAIN_MSG_LEN];
	char *rbuf, *copy; /* copy: the transfer's bytes */
	size_t rbuf_len;
	struct ib_mr *rmr;
	struct ib_sge send_sge, recv_sge;
	struct ib_send_wr send_wr;
	struct ib_recv_wr recv_wr;
	struct ib_cqe cqe, send_cqe, recv_cqe;
	u64 raddr;
	u32 rkey;
	/* the context and the decision the API recorded */
	struct rdma_rw_ctx ctx;
	bool ctx_live;
	int ret;
	struct rdmarw_rw_decision d;
	bool have_d;
	const char *path;
	char why[RDMARW_RW_REASON_LEN];
	u32 *base_keys; /* the context's MRs' keys after init */
	u32 nr_mrs;
	struct jw j;
	int depth; /* output: 0 in a record, 1 in a list */
	bool first; /* output: nothing yet in this list item */
	bool failed;
};

/* A failure: one line on stderr, and the exit status 1. */
#define fail(c, ...) (cli_warn(CHAIN_TOOL, __VA_ARGS__), (c)->failed = true)

#define errno_name cli_errno_name

/* ---- the local buffer --------------------------------------------------- */

#define round_up_page(v) (DIV_ROUND_UP((u64)(v), PAGE_SIZE) * PAGE_SIZE)

/*
 * Place the entries: contiguous, or each on its own page with --misalign;
 * in at most 4 GiB, so the pages they span fit in a u32.
 */
static bool layout(struct chain *c)
{
	const struct chain_opts *o = &c->o;
	u64 cursor = 0, start;
	u32 i;

	for (i = 0; i < o->nents; i++) {
		start = cursor + (i ? (u64)o->gap : 0);
		if (o->misalign >= 0)
			start = round_up_page(start) + (u64)o->misalign;
		c->off[i] = start;
		cursor = start + o->len[i];
		c->bytes += o->len[i];
		c->pages += DIV_ROUND_UP(start + (o->len[i] ? o->len[i] : 1),
					 PAGE_SIZE) -
			    start / PAGE_SIZE;
		if (cursor > CHAIN_MAX_LAYOUT)
			return false;
	}
	c->buf_len = round_up_page(cursor ? cursor : 1);
	c->buf = mmap(NULL, c->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->buf == MAP_FAILED)
		c->buf = NULL;
	return c->buf != NULL;
}

/*
 * The scatterlist: one array, or arrays of --chain entries, each but the
 * last with a link slot (sg_chain()) to the next, in one block; and one
 * bio_vec per entry, with an iterator that starts --offset bytes in.
 */
static bool build_lists(struct chain *c)
{
	u32 per = c->o.chain ? (u32)c->o.chain : c->o.nents, a, i;
	struct scatterlist *sg;

	c->nr_arrays = DIV_ROUND_UP(c->o.nents, per);
	c->sgl = calloc(c->o.nents + c->nr_arrays - 1, sizeof(*c->sgl));
	c->bvecs = calloc(c->o.nents, sizeof(*c->bvecs));
	if (!c->sgl || !c->bvecs)
		return false;
	sg_init_table(c->sgl, c->o.nents + c->nr_arrays - 1);
	for (a = 1; a < c->nr_arrays; a++)
		sg_chain(&c->sgl[(a - 1) * (per + 1)], per + 1,
			 &c->sgl[a * (per + 1)]);
	for_each_sg(c->sgl, sg, c->o.nents, i) {
		sg_set_buf(sg, c->buf + c->off[i], c->o.len[i]);
		bvec_set_virt(&c->bvecs[i], c->buf + c->off[i], c->o.len[i]);
	}
	c->iter.bi_size = c->bytes > UINT_MAX ? UINT_MAX : (u32)c->bytes;
	if ((u64)c->o.offset >= c->iter.bi_size)
		c->iter.bi_size = 0; /* nothing left: init must refuse it */
	else
		bvec_iter_advance(c->bvecs, &c->iter, (u32)c->o.offset);
	return true;
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

/*
 * Both devices, the local QP sized for the buffer (a Send Queue deep
 * enough for any chain of it and the SEND) and the peer's QP, connected.
 */
static bool open_hosts(struct chain *c)
{
	static const char *const names[2] = { "chain%d", "chain_peer%d" };
	struct ib_qp_init_attr attr[2] = {
		{ .cap = { .max_recv_wr = 4, .max_recv_sge = 1 },
		  .sq_sig_type = IB_SIGNAL_REQ_WR },
		{ .cap = { .max_send_wr = 4,
			   .max_recv_wr = 4,
			   .max_send_sge = 1,
			   .max_recv_sge = 1 },
		  .sq_sig_type = IB_SIGNAL_REQ_WR },
	};
	int ret;

	ret = two_hosts_devices(&c->h, &c->prof, names, false);
	if (ret) {
		fail(c, "%s: %s (check the attribute overrides)", c->h.failed,
		     errno_name(ret));
		return false;
	}
	ret = two_hosts_side(&c->h, 0, 256, IB_POLL_DIRECT);
	if (!ret)
		ret = two_hosts_side(&c->h, 1, 64, IB_POLL_DIRECT);
	attr[0].cap.max_rdma_ctxs =
		c->o.pool_size >= 0 ?
			(u32)c->o.pool_size :
			max(rdma_rw_mr_factor(c->h.dev[0], CHAIN_PORT,
					      c->pages),
			    1U);
	attr[0].cap.max_send_sge = c->o.qp_send_sge >= 0 ?
					   (u32)c->o.qp_send_sge :
					   (u32)c->h.dev[0]->attrs.max_send_sge;
	attr[0].cap.max_send_wr = (u32)min(3ULL * c->o.nents + 4,
					   (u64)c->h.dev[0]->attrs.max_qp_wr);
	if (!ret)
		ret = two_hosts_qps(&c->h, attr, true);
	if (ret) {
		fail(c, "%s: %s", c->h.failed, errno_name(ret));
		return false;
	}
	c->pool_total = ib_mr_pool_count(c->h.qp[0], &c->h.qp[0]->rdma_mrs);
	if (c->pool_total > 0)
		c->pool_pages = list_first_entry(&c->h.qp[0]->rdma_mrs,
						 struct ib_mr, qp_entry)
					->max_num_sg;
	return true;
}

/* --post: the remote buffer, registered on the peer. */
static bool open_remote(struct chain *c)
{
	c->rbuf_len = round_up_page(c->xfer + 2 * CHAIN_GUARD);
	c->rbuf = aligned_alloc(PAGE_SIZE, c->rbuf_len);
	c->copy = malloc(c->xfer ? c->xfer : 1);
	if (!c->rbuf || !c->copy) {
		fail(c, "out of memory");
		return false;
	}
	c->rmr = ib_reg_user_mr(c->h.pd[1], (u64)(uintptr_t)c->rbuf,
				c->rbuf_len, (u64)(uintptr_t)c->rbuf,
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
	struct ib_qp *qp = c->h.qp[0];
	u32 want =
		c->o.pool_free < 0 ? 0 : (u32)(c->pool_total - c->o.pool_free);

	c->held = calloc(want + 1, sizeof(*c->held));
	while (c->held && c->nr_held < want &&
	       (c->held[c->nr_held] = ib_mr_pool_get(qp, &qp->rdma_mrs)))
		c->nr_held++;
	return c->held && c->nr_held == want;
}

/* ---- names: addresses and keys relative to what they point at ----------- */

/* Index of the context's MR with the key's 24-bit index, or -1. */
static int mr_of_key(const struct chain *c, u32 key)
{
	u32 i;

	for (i = 0; i < c->nr_mrs; i++)
		if ((c->base_keys[i] >> 8) == (key >> 8))
			return (int)i;
	return -1;
}

static const char *cqe_name(const struct chain *c, const struct ib_cqe *cqe)
{
	if (!cqe)
		return NULL;
	if (cqe == &c->cqe)
		return "cqe";
	if (cqe == &c->send_cqe)
		return "send_cqe";
	return cqe == &c->recv_cqe ? "recv_cqe" : "unknown";
}

/* ---- the decision, in words --------------------------------------------- */

/* The library's words for the decision; an init that refused its
 * arguments (or the tool's own empty iterator) recorded none. */
static void explain(struct chain *c)
{
	int ret;

	c->path = c->ret < 0 ? "none" : names_rw_type(c->d.type);
	if (c->have_d) {
		/* RDMARW_RW_REASON_LEN holds every text: an error is a bug */
		ret = rdmarw_rw_ctx_reason(&c->ctx, c->why, sizeof(c->why));
		if (ret < 0)
			fail(c, "rdmarw_rw_ctx_reason: %s", errno_name(ret));
		return;
	}
	if (c->o.bvec && !c->iter.bi_size)
		snprintf(c->why, sizeof(c->why),
			 "the iterator is empty: --offset %lld of %" PRIu64
			 " bytes",
			 c->o.offset, c->bytes);
	else
		snprintf(
			c->why, sizeof(c->why),
			"init refused its arguments (see rdma_rw_ctx_init(3))");
}

/* ---- init ---------------------------------------------------------------- */

static void run_init(struct chain *c)
{
	u32 i;

	if (c->o.bvec)
		c->ret = rdma_rw_ctx_init_bvec(&c->ctx, c->h.qp[0], CHAIN_PORT,
					       c->bvecs, c->o.nents, c->iter,
					       c->raddr, c->rkey, c->o.dir);
	else
		c->ret = rdma_rw_ctx_init(&c->ctx, c->h.qp[0], CHAIN_PORT,
					  c->sgl, c->o.nents, (u32)c->o.offset,
					  c->raddr, c->rkey, c->o.dir);
	c->have_d = !rdmarw_rw_ctx_explain(&c->ctx, &c->d);
	c->ctx_live = c->ret >= 0;
	c->failed = !c->ctx_live;
	explain(c);
	if (!c->ctx_live || c->d.type != RDMA_RW_MR)
		return;
	c->base_keys = calloc(c->d.nr_mrs, sizeof(*c->base_keys));
	for (i = 0; c->base_keys && i < c->d.nr_mrs; i++)
		c->base_keys[i] = c->ctx.reg[i].mr->lkey;
	c->nr_mrs = c->base_keys ? c->d.nr_mrs : 0;
}

/* ---- output: one description of each record, walked by every writer ---- */

/*
 * How a field's value is formatted.  The names are the kernel's members
 * (ib_send_wr, ib_rdma_wr, ib_reg_wr, ib_sge, ib_device_attr, ib_qp_cap):
 * the same in text, JSON and dot.  Addresses and keys are names (buf+0x..,
 * mr0.v1) unless --absolute, when JSON prints them as numbers.
 */
enum kind {
	K_NUM, /* a number, signed (an int converted to u64 prints as the int) */
	K_BOOL,
	K_STR, /* NULL: JSON null, left out of text and dot */
	K_ADDR, /* a local address */
	K_RADDR, /* a remote address */
	K_LKEY,
	K_RKEY,
	K_OPCODE, /* enum ib_wr_opcode: its name, JSON adds <name>_value */
	K_SEND_FLAGS, /* names; JSON adds <name>_value */
	K_ACCESS,
};

/*
 * Open a record ('{') or a list of records ('['): sg_list, entries,
 * completions.  Text: "name: field=value ...", a list as
 * field=[a=1 b=2; a=3 b=4]; dot: a node with one field a line; JSON: an
 * object.  A record in a list has no name; @name NULL: JSON's anonymous one.
 */
static void begin(struct chain *c, const char *name, char brace)
{
	bool item = brace == '{' && c->depth;

	if (c->o.fmt == FMT_JSON && item)
		jw_open_inline(&c->j, NULL, '{');
	else if (c->o.fmt == FMT_JSON)
		jw_open(&c->j, name, brace);
	else if (item && !c->first)
		printf("; ");
	else if (brace == '[')
		printf("%s%s=[", c->o.fmt == FMT_DOT ? "\\n" : " ", name);
	else if (!item && c->o.fmt == FMT_TEXT)
		printf("%s:", name);
	else if (!item)
		printf("\t%s [label=\"%s", name, name);
	c->depth = brace == '[' || item;
	c->first = true;
}

/* Close what begin() opened; @dot_attrs: a dot node's attributes. */
static void end(struct chain *c, char brace, const char *dot_attrs)
{
	bool item = brace == '}' && c->depth;

	if (c->o.fmt == FMT_JSON)
		jw_close(&c->j, brace);
	else if (brace == ']')
		printf("]");
	else if (!item && c->o.fmt == FMT_TEXT)
		printf("\n");
	else if (!item)
		printf("\"%s];\n", dot_attrs);
	c->depth = item;
}

/*
 * An address as buf+0x.., msg+, rbuf+, rmsg+ or iova+ (a remote one only
 * as rbuf+); a local key as local_dma_lkey or mr<i>.v<variant since
 * init>, a remote one as rmr; raw with --absolute or when it points at
 * none of them.  (Every WR printed is the local QP's: no key of the peer's
 * PD appears in one.)
 */
static const char *fmt_ref(const struct chain *c, enum kind k, u64 v, char *out)
{
	const struct dma_iova_state *iova = &c->ctx.iova.state;
	const struct {
		const char *name;
		u64 base, last; /* the offset of the range's last byte */
		bool on;
	} r[] = {
		{ "buf", (uintptr_t)c->buf, c->buf_len, c->buf },
		{ "msg", (uintptr_t)c->msg, CHAIN_MSG_LEN, true },
		{ "rbuf", (uintptr_t)c->rbuf, c->rbuf_len, c->rbuf },
		{ "rmsg", (uintptr_t)c->rmsg, CHAIN_MSG_LEN, c->o.post },
		{ "iova", iova->addr & ~(u64)(PAGE_SIZE - 1),
		  iova->size + PAGE_SIZE - 1,
		  c->ctx_live && c->d.type == RDMA_RW_IOVA },
	};
	u32 key = (u32)v, i = k == K_RADDR ? 2 : 0, to = k == K_RADDR ? 3 : 5;
	bool rel = !c->o.absolute, lkey = rel && k == K_LKEY;
	int m = mr_of_key(c, key);

	for (; rel && k <= K_RADDR && i < to; i++) {
		if (r[i].on && v >= r[i].base && v - r[i].base <= r[i].last) {
			snprintf(out, NAME_LEN, "%s+0x%" PRIx64, r[i].name,
				 v - r[i].base);
			return out;
		}
	}
	if (k <= K_RADDR)
		snprintf(out, NAME_LEN, "0x%" PRIx64, v);
	else if (lkey && key == c->h.pd[0]->local_dma_lkey)
		return "local_dma_lkey";
	else if (lkey && m >= 0)
		snprintf(out, NAME_LEN, "mr%d.v%u", m,
			 (key - c->base_keys[m]) & 0xffu);
	else if (rel && k == K_RKEY && c->rmr && key == c->rmr->rkey)
		return "rmr";
	else
		snprintf(out, NAME_LEN, "0x%08x", key);
	return out;
}

/*
 * One field.  @terse: text and dot leave it out when it is 0 (false, NULL);
 * JSON always prints it.
 */
static void field(struct chain *c, const char *name, enum kind k, u64 v,
		  const char *s, bool terse)
{
	const struct name_bit *flags =
		k == K_ACCESS ? names_access : names_send_flags;
	char buf[96], key[NAME_LEN];
	const char *str = buf, *sep;

	if (k == K_STR)
		str = s;
	else if (k == K_NUM)
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
	else if (k == K_BOOL)
		str = v ? "true" : "false";
	else if (k == K_OPCODE)
		str = names_wr_opcode((enum ib_wr_opcode)v);
	else if (k >= K_SEND_FLAGS)
		str = names_flags(flags, (int)v, buf, sizeof(buf));
	else
		str = fmt_ref(c, k, v, buf);
	if (c->o.fmt != FMT_JSON) {
		if (terse && !v && !s)
			return;
		if (c->depth)
			sep = c->first ? "" : " ";
		else
			sep = c->o.fmt == FMT_TEXT ? " " : "\\n";
		printf("%s%s=%s", sep, name, str);
		c->first = false;
		return;
	}
	if (k == K_NUM)
		jw_int(&c->j, name, (long long)v);
	else if (k == K_BOOL)
		jw_bool(&c->j, name, v);
	else if (c->o.absolute && k >= K_ADDR && k <= K_RKEY)
		jw_u64(&c->j, name, v);
	else if (k >= K_SEND_FLAGS)
		names_jw_flags(&c->j, name, flags, (int)v);
	else
		jw_str(&c->j, name, str);
	if (k >= K_OPCODE) {
		snprintf(key, sizeof(key), "%s_value", name);
		jw_u64(&c->j, key, v);
	}
}

#define F(c, n, k, v) field(c, n, k, (u64)(v), NULL, false)
#define TERSE(c, n, k, v) field(c, n, k, (u64)(v), NULL, true)
#define NUM(c, n, v) field(c, n, K_NUM, (u64)(v), NULL, false)
#define BOOL(c, n, v) field(c, n, K_BOOL, !!(v), NULL, false)
#define STR(c, n, s) field(c, n, K_STR, 0, s, true)

/* A WR's fields: ib_send_wr's, with ib_reg_wr's or ib_rdma_wr's. */
static void describe_wr(struct chain *c, const struct ib_send_wr *wr)
{
	const struct ib_reg_wr *r = reg_wr(wr);
	enum ib_wr_opcode op = wr->opcode;
	char mr[16];
	int s;

	F(c, "opcode", K_OPCODE, op);
	field(c, "num_sge", K_NUM, (u64)wr->num_sge, NULL, !wr->sg_list);
	if (wr->sg_list) {
		begin(c, "sg_list", '[');
		for (s = 0; s < wr->num_sge; s++) {
			begin(c, NULL, '{');
			F(c, "addr", K_ADDR, wr->sg_list[s].addr);
			NUM(c, "length", wr->sg_list[s].length);
			F(c, "lkey", K_LKEY, wr->sg_list[s].lkey);
			end(c, '}', NULL);
		}
		end(c, ']', NULL);
	}
	if (op == IB_WR_REG_MR) {
		snprintf(mr, sizeof(mr), "mr%d", mr_of_key(c, r->mr->lkey));
		STR(c, "mr", mr);
		F(c, "key", K_LKEY, r->key);
		F(c, "mr_iova", K_ADDR, r->mr->iova);
		NUM(c, "mr_length", r->mr->length);
		NUM(c, "mr_page_size", r->mr->page_size);
		F(c, "access", K_ACCESS, (u64)r->access);
	}
	if (op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_READ ||
	    op == IB_WR_RDMA_READ_WITH_INV) {
		F(c, "remote_addr", K_RADDR, rdma_wr(wr)->remote_addr);
		F(c, "rkey", K_RKEY, rdma_wr(wr)->rkey);
	}
	if (op == IB_WR_LOCAL_INV || op == IB_WR_RDMA_READ_WITH_INV ||
	    op == IB_WR_SEND_WITH_INV)
		F(c, "invalidate_rkey", K_LKEY, wr->ex.invalidate_rkey);
	else
		TERSE(c, "ex", K_NUM, wr->ex.invalidate_rkey);
	TERSE(c, "send_flags", K_SEND_FLAGS, wr->send_flags);
	STR(c, "wr_cqe", cqe_name(c, wr->wr_cqe));
	TERSE(c, "chain_wr", K_BOOL, wr == &c->send_wr);
}

/* The device, the QP, the request and the decision: what comes first. */
static void describe_head(struct chain *c)
{
	const struct ib_device_attr *a = &c->h.dev[0]->attrs;
	const struct ib_qp *qp = c->h.qp[0];
	u32 i;

	begin(c, "device", '{');
	STR(c, "profile", c->prof.name);
	STR(c, "protocol", names_protocol(c->h.dev[0]));
	BOOL(c, "iommu", c->h.dev[0]->iommu);
	NUM(c, "max_send_sge", a->max_send_sge);
	NUM(c, "max_sge_rd", a->max_sge_rd);
	NUM(c, "max_sgl_rd", a->max_sgl_rd);
	NUM(c, "max_fast_reg_page_list_len", a->max_fast_reg_page_list_len);
	end(c, '}', " shape=note");
	begin(c, "qp", '{');
	NUM(c, "max_send_sge", qp->cap.max_send_sge);
	NUM(c, "max_read_sge", qp->max_read_sge);
	NUM(c, "max_write_sge", qp->max_write_sge);
	NUM(c, "max_send_wr", qp->cap.max_send_wr);
	NUM(c, "max_rdma_ctxs", qp->cap.max_rdma_ctxs);
	BOOL(c, "force_mr", rdma_rw_get_force_mr());
	NUM(c, "pool_size", c->pool_total);
	NUM(c, "pool_free_at_init", c->pool_total - (int)c->nr_held);
	NUM(c, "pages_per_mr", c->pool_pages);
	end(c, '}', " shape=note");
	begin(c, "request", '{');
	STR(c, "api", c->o.bvec ? "rdma_rw_ctx_init_bvec" : "rdma_rw_ctx_init");
	STR(c, "dir", names_dir(c->o.dir));
	NUM(c, "port_num", CHAIN_PORT);
	NUM(c, c->o.bvec ? "nr_bvec" : "sg_cnt", c->o.nents);
	NUM(c, "offset", c->o.offset);
	F(c, "remote_addr", K_RADDR, c->raddr);
	F(c, "rkey", K_RKEY, c->rkey);
	NUM(c, "bytes", c->bytes);
	NUM(c, "transfer_bytes", c->xfer);
	NUM(c, "chained_arrays", c->o.bvec ? 0 : c->nr_arrays);
	TERSE(c, "entries_per_array", K_NUM, c->o.bvec ? 0 : c->o.chain);
	BOOL(c, "chain_wr", c->o.chain_wr);
	if (c->o.bvec) {
		NUM(c, "bi_size", c->iter.bi_size);
		NUM(c, "bi_idx", c->iter.bi_idx);
		NUM(c, "bi_bvec_done", c->iter.bi_bvec_done);
	}
	begin(c, "entries", '[');
	for (i = 0; i < c->o.nents; i++) {
		begin(c, NULL, '{');
		F(c, "addr", K_ADDR, (u64)(uintptr_t)c->buf + c->off[i]);
		NUM(c, "length", c->o.len[i]);
		end(c, '}', NULL);
	}
	end(c, ']', NULL);
	end(c, '}', " shape=note");
	begin(c, "path", '{');
	NUM(c, "ret", c->ret);
	STR(c, "errno", c->ret < 0 ? errno_name(c->ret) : NULL);
	STR(c, "type", c->path);
	NUM(c, "nr_ops", c->ret >= 0 ? c->d.nr_ops : 0);
	NUM(c, "nr_mrs", c->ret >= 0 ? c->d.nr_mrs : 0);
	NUM(c, "nr_wqes", c->ret >= 0 ? c->d.nr_wqes : 0);
	STR(c, "reason", c->why);
	end(c, '}', " shape=note");
}

/* ---- --post: execute a chain against the peer --------------------------- */

static void fill(char *p, u64 n, u32 seed)
{
	u64 i;

	for (i = 0; i < n; i++)
		p[i] = (char)(u8)(i * 131 + seed * 7 + 1 + (i >> 8));
}

static bool all_bytes(const char *p, u64 n, u8 v)
{
	u64 i;

	for (i = 0; i < n; i++)
		if ((u8)p[i] != v)
			return false;
	return true;
}

/*
 * The transfer's bytes (read from the local buffer through the
 * scatterlist, from the offset on) against the remote buffer, and nothing
 * else moved: NULL, or what differs.
 */
static const char *verify_data(struct chain *c)
{
	const char *remote = c->rbuf + CHAIN_GUARD;
	bool read = c->o.dir == DMA_FROM_DEVICE;

	if (sg_pcopy_to_buffer(c->sgl, c->o.nents, c->copy, c->xfer,
			       (size_t)c->o.offset) != c->xfer ||
	    memcmp(c->copy, remote, c->xfer))
		return "MISMATCH in the transferred bytes";
	memset(c->copy, 0xee, c->xfer);
	if (read)
		sg_pcopy_from_buffer(c->sgl, c->o.nents, c->copy, c->xfer,
				     (size_t)c->o.offset);
	if (!all_bytes(c->rbuf, CHAIN_GUARD, 0xa5) ||
	    !all_bytes(remote + c->xfer, c->rbuf_len - CHAIN_GUARD - c->xfer,
		       0xa5) ||
	    (read && !all_bytes(c->buf, c->buf_len, 0xee)))
		return "MISMATCH: bytes outside the transfer changed";
	if (c->o.chain_wr && memcmp(c->rmsg, c->msg, CHAIN_MSG_LEN))
		return "MISMATCH in the SEND's payload";
	return NULL;
}

/*
 * Post the chain, print its completions (text: one line each; JSON: the
 * "post" object) and verify the bytes.  Exactly the completions rw.h
 * promises: one for the chain, and the peer's receive of the SEND.
 */
static bool post_chain(struct chain *c, u32 seed, const struct ib_send_wr *wr)
{
	const struct ib_cqe *want = c->o.chain_wr ? &c->send_cqe : &c->cqe;
	u32 nr_wc = 0, local = 0, peer = 0;
	const char *msg;
	char data[160], id[32];
	bool ok = true;
	struct ib_wc wc;
	int ret, s;

	memset(c->rbuf, 0xa5, c->rbuf_len);
	if (c->o.dir == DMA_TO_DEVICE) {
		fill(c->buf, c->buf_len, seed);
	} else {
		fill(c->rbuf + CHAIN_GUARD, c->xfer, seed);
		memset(c->buf, 0xee, c->buf_len);
	}
	fill(c->msg, CHAIN_MSG_LEN, seed + 1000);
	memset(c->rmsg, 0, CHAIN_MSG_LEN);
	if (c->o.chain_wr &&
	    (ret = ib_post_recv(c->h.qp[1], &c->recv_wr, NULL))) {
		fail(c, "ib_post_recv (peer): %s", errno_name(ret));
		return false;
	}
	ret = ib_post_send(c->h.qp[0], wr, NULL);
	snprintf(id, sizeof(id), c->o.fmt == FMT_DOT ? "c%u_post" : "post",
		 seed);
	begin(c, id, '{');
	NUM(c, "ib_post_send", ret);
	STR(c, "errno", ret ? errno_name(ret) : NULL);
	begin(c, "completions", '[');
	for (s = 0; s < 2; s++) {
		while (ib_poll_cq(c->h.cq[s], 1, &wc) > 0 &&
		       nr_wc++ < CHAIN_MAX_WC) {
			ok &= wc.status == IB_WC_SUCCESS;
			local += !s && wc.wr_cqe == want;
			peer += s;
			begin(c, NULL, '{');
			STR(c, "side", s ? "peer" : "local");
			STR(c, "opcode", names_wc_opcode(wc.opcode));
			STR(c, "status", cli_wc_status_name(wc.status));
			NUM(c, "byte_len", wc.byte_len);
			STR(c, "wr_cqe", cqe_name(c, wc.wr_cqe));
			end(c, '}', NULL);
		}
	}
	end(c, ']', NULL);
	ok &= !ret && nr_wc == 1 + (u32)c->o.chain_wr && local == 1 &&
	      peer == (u32)c->o.chain_wr;
	snprintf(data, sizeof(data),
		 "%" PRIu64
		 " bytes verified%s, bytes outside the transfer unchanged",
		 c->xfer, c->o.chain_wr ? " and the SEND's payload" : "");
	if (!ok)
		msg = "not checked: the chain did not complete with exactly the expected completions, all successful";
	else if (c->o.remote_addr >= 0 || c->o.rkey >= 0)
		msg = "not verified (--remote-addr or --rkey given)";
	else
		msg = verify_data(c);
	ok &= !msg || c->o.remote_addr >= 0 || c->o.rkey >= 0;
	BOOL(c, "data_verified", !msg);
	STR(c, "data", msg ? msg : data);
	end(c, '}', " shape=note");
	return ok;
}

/* Dot: the chain's links, and the MRs each WR registers or invalidates. */
static void dot_edges(const struct chain *c, u32 n, u32 i,
		      const struct ib_send_wr *wr)
{
	int inv = mr_of_key(c, wr->ex.invalidate_rkey);

	if (i)
		printf("\tc%u_wr%u -> c%u_wr%u;\n", n, i - 1, n, i);
	if (wr->opcode == IB_WR_REG_MR)
		printf("\tc%u_wr%u -> mr%d [style=dotted label=\"registers\"];\n",
		       n, i, mr_of_key(c, reg_wr(wr)->mr->lkey));
	if (wr->opcode == IB_WR_LOCAL_INV && inv >= 0)
		printf("\tc%u_wr%u -> mr%d [style=dotted label=\"invalidates\"];\n",
		       n, i, inv);
	if (wr->wr_cqe && (wr->send_flags & IB_SEND_SIGNALED))
		printf("\tc%u_wr%u_done [shape=ellipse label=\"%s->done\"];\n\tc%u_wr%u -> c%u_wr%u_done [style=dashed label=\"completion\"];\n",
		       n, i, cqe_name(c, wr->wr_cqe), n, i, n, i);
}

/* One chain: its WRs through describe_wr() in the chosen format. */
static void print_chain(struct chain *c, u32 n, const struct ib_send_wr *first)
{
	const struct ib_send_wr *wr;
	char id[32], attrs[32];
	u32 i;

	for (i = 0, wr = first; wr; wr = wr->next)
		i++;
	if (c->o.fmt == FMT_JSON) {
		jw_u64(&c->j, "call", n);
		jw_u64(&c->j, "nr_wrs", i);
		jw_open(&c->j, "wrs", '[');
	} else if (c->o.fmt == FMT_TEXT) {
		printf(c->o.repeat > 1 ? "chain %u/%lld:" : "chain:", n,
		       c->o.repeat);
		for (i = 0, wr = first; wr; wr = wr->next)
			printf("%s%s", i++ ? " → " : " ",
			       names_wr_opcode(wr->opcode));
		printf("\n");
	} else if (c->o.repeat > 1) {
		printf("\tsubgraph cluster_%u {\n\tlabel=\"chain %u/%lld\";\n",
		       n, n, c->o.repeat);
	}
	for (i = 0, wr = first; wr; wr = wr->next, i++) {
		if (c->o.fmt == FMT_DOT)
			snprintf(id, sizeof(id), "c%u_wr%u", n, i);
		else
			snprintf(id, sizeof(id), "wr%u", i);
		begin(c, c->o.fmt == FMT_JSON ? NULL : id, '{');
		if (c->o.fmt == FMT_JSON)
			NUM(c, "index", i);
		describe_wr(c, wr);
		snprintf(attrs, sizeof(attrs), "%s%s",
			 wr->send_flags & IB_SEND_SIGNALED ? " penwidth=2" : "",
			 wr == &c->send_wr ? " style=dashed" : "");
		end(c, '}', attrs);
		if (c->o.fmt == FMT_DOT)
			dot_edges(c, n, i, wr);
	}
	if (c->o.fmt == FMT_JSON)
		jw_close(&c->j, ']');
	else if (c->o.fmt == FMT_DOT && c->o.repeat > 1)
		printf("\t}\n");
}

/* Print the start of the output: everything before the chains. */
static void print_head(struct chain *c)
{
	u32 i;

	if (c->o.fmt == FMT_JSON) {
		jw_open(&c->j, NULL, '{');
		jw_str(&c->j, "tool", CHAIN_TOOL);
		jw_bool(&c->j, "relative", !c->o.absolute);
	} else if (c->o.fmt == FMT_DOT) {
		printf("digraph rdma_rw_chain {\n\trankdir=LR;\n");
		printf("\tnode [shape=box fontname=\"monospace\"];\n");
	}
	describe_head(c);
	for (i = 0; c->o.fmt == FMT_DOT && i < c->nr_mrs; i++)
		printf("\tmr%u [shape=cylinder label=\"mr%u\"];\n", i, i);
	if (c->o.fmt == FMT_JSON)
		jw_open(&c->j, "chains", '[');
}

/* rdma_rw_ctx_wrs() --repeat times: print each chain and (--post) post it. */
static void run_chains(struct chain *c)
{
	struct ib_send_wr *chain_wr = c->o.chain_wr ? &c->send_wr : NULL;
	struct ib_send_wr *first;
	u32 n;

	for (n = 1; c->ctx_live && n <= c->o.repeat && !c->failed; n++) {
		first = rdma_rw_ctx_wrs(&c->ctx, c->h.qp[0], CHAIN_PORT,
					&c->cqe, chain_wr);
		if (!first) {
			fail(c, "rdma_rw_ctx_wrs returned NULL");
			break;
		}
		if (c->o.fmt == FMT_JSON)
			jw_open(&c->j, NULL, '{');
		print_chain(c, n, first);
		if (c->o.post)
			c->failed |= !post_chain(c, n, first);
		if (c->o.fmt == FMT_JSON)
			jw_close(&c->j, '}');
	}
}

/* ---- set-up, tear-down -------------------------------------------------- */

/* The SEND appended as chain_wr, and the peer's receive for it. */
static void setup_send(struct chain *c)
{
	c->send_sge = (struct ib_sge){ (uintptr_t)c->msg, CHAIN_MSG_LEN,
				       c->h.pd[0]->local_dma_lkey };
	c->send_wr = (struct ib_send_wr){ .opcode = IB_WR_SEND,
					  .sg_list = &c->send_sge,
					  .num_sge = 1,
					  .send_flags = IB_SEND_SIGNALED,
					  .wr_cqe = &c->send_cqe };
	c->recv_sge = (struct ib_sge){ (uintptr_t)c->rmsg, CHAIN_MSG_LEN,
				       c->h.pd[1]->local_dma_lkey };
	c->recv_wr = (struct ib_recv_wr){ .sg_list = &c->recv_sge,
					  .num_sge = 1,
					  .wr_cqe = &c->recv_cqe };
}

/* The devices and the buffer.  Returns -1 to go on, or an exit code. */
static int setup(struct chain *c)
{
	if (soft_profile_get(c->o.profile, &c->prof))
		return EXIT_BAD_ARGS; /* -p/--profile refused it already */
	apply_overrides(c);
	if (c->o.force_mr)
		rdma_rw_set_force_mr(true);
	if (!layout(c))
		cli_refuse(CHAIN_TOOL, "the buffer layout exceeds 4 GiB");
	c->xfer = c->bytes > (u64)c->o.offset ? c->bytes - (u64)c->o.offset : 0;
	if (!build_lists(c) || !open_hosts(c) || (c->o.post && !open_remote(c)))
		return EXIT_FAILURE;
	setup_send(c);
	c->raddr = c->o.remote_addr >= 0 ? (u64)c->o.remote_addr :
		   c->o.post ? (u64)(uintptr_t)c->rbuf + CHAIN_GUARD :
			       0x10000000;
	c->rkey = c->o.rkey >= 0 ? (u32)c->o.rkey :
		  c->o.post	 ? c->rmr->rkey :
				   0x1234;
	if (c->o.pool_free > c->pool_total) {
		cli_warn(
			CHAIN_TOOL,
			"--pool-free %lld: the pool holds %d MRs (raise --pool-size)",
			c->o.pool_free, c->pool_total);
		return EXIT_BAD_ARGS;
	}
	return hold_mrs(c) ? -1 : EXIT_FAILURE;
}

/* Destroy everything; a context must leave nothing DMA-mapped behind. */
static void teardown(struct chain *c)
{
	int ret;

	if (c->ctx_live && c->o.bvec)
		rdma_rw_ctx_destroy_bvec(&c->ctx, c->h.qp[0], CHAIN_PORT,
					 c->bvecs, c->o.nents, c->o.dir);
	else if (c->ctx_live)
		rdma_rw_ctx_destroy(&c->ctx, c->h.qp[0], CHAIN_PORT, c->sgl,
				    c->o.nents, c->o.dir);
	while (c->nr_held)
		ib_mr_pool_put(c->h.qp[0], &c->h.qp[0]->rdma_mrs,
			       c->held[--c->nr_held]);
	if (c->h.dev[0] && rdmarw_dma_mapped(c->h.dev[0]))
		fail(c, "%ld DMA mappings left after destroy",
		     rdmarw_dma_mapped(c->h.dev[0]));
	if (c->rmr && (ret = ib_dereg_mr(c->rmr)))
		fail(c, "ib_dereg_mr: %s", errno_name(ret));
	if ((ret = two_hosts_close(&c->h)))
		fail(c, "%s: %s", c->h.failed, errno_name(ret));
	free(c->sgl);
	free(c->bvecs);
	free(c->copy);
	free(c->base_keys);
	free(c->held);
	free(c->rbuf);
	if (c->buf)
		munmap(c->buf, c->buf_len);
}

int main(int argc, char **argv)
{
	struct chain *c = calloc(1, sizeof(*c));
	int code;

	if (!c)
		return EXIT_FAILURE;
	parse_args(&c->o, argc, argv);
	code = setup(c);
	if (code < 0) {
		run_init(c);
		print_head(c);
		run_chains(c);
		if (c->o.fmt == FMT_JSON) {
			jw_close(&c->j, ']');
			jw_bool(&c->j, "ok", !c->failed);
			jw_close(&c->j, '}');
		} else if (c->o.fmt == FMT_DOT) {
			printf("}\n");
		} else if (c->ret < 0) {
			printf("error: %s: %s: %s\n",
			       c->o.bvec ? "rdma_rw_ctx_init_bvec" :
					   "rdma_rw_ctx_init",
			       errno_name(c->ret), c->why);
		}
	}
	teardown(c);
	if (code < 0)
		code = c->failed ? EXIT_FAILURE : EXIT_SUCCESS;
	free(c);
	return code;
}
