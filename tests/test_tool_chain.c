// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-chain: the tool's exact output on representative cases (opcodes,
 * SGEs, keys relative to their MR, the path and its reason, the return
 * value), its JSON (parsed here), its Graphviz output, --help and bad
 * arguments.  The tool is found next to the tests in the build tree
 * (../tools/rdmarw-chain) or through $RDMARW_CHAIN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 32

static char tool[PATH_MAX];

/* ---- running the tool -------------------------------------------------- */

struct result {
	char *out; /* stdout */
	int status; /* exit status */
};

static void find_tool(void)
{
	const char *env = getenv("RDMARW_CHAIN");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(tool, sizeof(tool), "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 32);
	assert_true(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	assert_non_null(slash);
	strcpy(slash, "/../tools/rdmarw-chain");
	memcpy(tool, self, sizeof(tool));
}

static char *read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	assert_non_null(buf);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Run the tool with a NULL-terminated list of arguments (stderr dropped). */
static struct result run_argv(const char *const *args)
{
	const char *argv[MAX_ARGS + 2] = { tool };
	struct result r;
	int fds[2], wstatus, i;
	pid_t pid;

	for (i = 0; args[i]; i++) {
		assert_true(i < MAX_ARGS);
		argv[i + 1] = args[i];
	}
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		if (!freopen("/dev/null", "w", stderr))
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		unsetenv("RDMARW_FORCE_MR");
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	r.out = read_all(fds[0]);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_true(WIFEXITED(wstatus));
	r.status = WEXITSTATUS(wstatus);
	return r;
}

#define RUN(...) run_argv((const char *const[]){ __VA_ARGS__, NULL })

/*
 * The lines from the one starting with @from to the end must be exactly
 * @want (NULL-terminated).
 */
static void expect_tail(const char *out, const char *from,
			const char *const *want)
{
	const char *p = out;
	size_t n, i;

	while (p && strncmp(p, from, strlen(from))) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		fail_msg("no line starting with '%s' in:\n%s", from, out);
	for (i = 0; want[i]; i++) {
		const char *nl = strchr(p, '\n');

		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n != strlen(want[i]) || strncmp(p, want[i], n))
			fail_msg("line %zu after '%s':\n got: %.*s\nwant: %s",
				 i, from, (int)n, p, want[i]);
		p = nl ? nl + 1 : p + n;
	}
	if (*p)
		fail_msg("unexpected lines after the expected ones:\n%s", p);
}

#define EXPECT_TAIL(out, from, ...) \
	expect_tail(out, from, (const char *const[]){ __VA_ARGS__, NULL })

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * Run the tool with @args: it must exit with @status, and its output from
 * the line starting with @from on must be exactly @want.
 */
static void expect_run(int status, const char *const *args, const char *from,
		       const char *const *want)
{
	struct result r = run_argv(args);

	assert_int_equal(r.status, status);
	expect_tail(r.out, from, want);
	free(r.out);
}

#define EXPECT_RUN(status, args, from, ...) \
	expect_run(status, args, from,      \
		   (const char *const[]){ __VA_ARGS__, NULL })

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);
	const char *p = out;

	for (; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/*
 * The text line of RDMA WR @idx over @n whole pages from page @first of the
 * buffer to the default remote address, with @tail after the rkey; the
 * string lives until the fourth call after.
 */
static const char *page_wr(unsigned int idx, const char *op, unsigned int first,
			   unsigned int n, const char *tail)
{
	static char ring[4][8192];
	static unsigned int next;
	char *s = ring[next++ % 4];
	int used =
		sprintf(s, "wr%u: opcode=%s num_sge=%u sg_list=[", idx, op, n);
	unsigned int i;

	for (i = 0; i < n; i++)
		used += sprintf(
			s + used,
			"%saddr=buf+0x%x length=4096 lkey=local_dma_lkey",
			i ? "; " : "", (first + i) * 4096);
	sprintf(s + used, "] remote_addr=0x%x rkey=0x00001234%s",
		0x10000000 + first * 4096, tail);
	return s;
}

/* ---- chains ------------------------------------------------------------- */

static void rxe_write_single(void **state)
{
	struct result r = RUN("-p", "rxe", "write");

	assert_int_equal(r.status, 0);
	assert_non_null(strstr(
		r.out, " pool_size=0 pool_free_at_init=0 pages_per_mr=0\n"));
	EXPECT_TAIL(
		r.out, "request:",
		"request: api=rdma_rw_ctx_init dir=DMA_TO_DEVICE port_num=1 sg_cnt=1 offset=0 remote_addr=0x10000000 rkey=0x00001234 bytes=4096 transfer_bytes=4096 chained_arrays=1 chain_wr=false entries=[addr=buf+0x0 length=4096]",
		"path: ret=1 type=SINGLE nr_ops=1 nr_mrs=0 nr_wqes=1 reason=one entry",
		"chain: RDMA_WRITE",
		"wr0: opcode=RDMA_WRITE num_sge=1 sg_list=[addr=buf+0x0 length=4096 lkey=local_dma_lkey] remote_addr=0x10000000 rkey=0x00001234 send_flags=SIGNALED wr_cqe=cqe");
	free(r.out);
}

/* rxe: 32 SGEs per WRITE, so 33 entries take two WRs (32 + 1). */
static void rxe_write_sge_limit(void **state)
{
	const char *wr0 = page_wr(0, "RDMA_WRITE", 0, 32, "");

	EXPECT_RUN(
		0, ARGS("-p", "rxe", "--sgl", "4096x33", "write"), "path:",
		"path: ret=2 type=MULTI nr_ops=2 nr_mrs=0 nr_wqes=2 reason=33 entries: up to 32 SGEs per WRITE",
		"chain: RDMA_WRITE → RDMA_WRITE", wr0,
		"wr1: opcode=RDMA_WRITE num_sge=1 sg_list=[addr=buf+0x20000 length=4096 lkey=local_dma_lkey] remote_addr=0x10020000 rkey=0x00001234 send_flags=SIGNALED wr_cqe=cqe");
}

static void rxe_write_at_sge_limit(void **state)
{
	struct result r = RUN("-p", "rxe", "--sgl", "4096x32", "write");

	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\npath: ret=1 type=MULTI "));
	assert_true(has_line(r.out, "chain: RDMA_WRITE"));
	free(r.out);
}

static void siw_read_mr(void **state)
{
	struct result r = RUN("-p", "siw", "--sgl", "4096x2", "read");

	assert_int_equal(r.status, 0);
	assert_non_null(strstr(
		r.out, " pool_size=1 pool_free_at_init=1 pages_per_mr=256\n"));
	EXPECT_TAIL(
		r.out, "path:",
		"path: ret=2 type=MR nr_ops=1 nr_mrs=1 nr_wqes=2 reason=iWARP READ needs MR: 1 MR of up to 256 pages",
		"chain: REG_MR → RDMA_READ_WITH_INV",
		"wr0: opcode=REG_MR mr=mr0 key=mr0.v1 mr_iova=buf+0x0 mr_length=8192 mr_page_size=4096 access=LOCAL_WRITE|REMOTE_WRITE",
		"wr1: opcode=RDMA_READ_WITH_INV num_sge=1 sg_list=[addr=buf+0x0 length=8192 lkey=mr0.v1] remote_addr=0x10000000 rkey=0x00001234 invalidate_rkey=mr0.v1 send_flags=SIGNALED wr_cqe=cqe");
	free(r.out);
}

/* mlx5: max_sgl_rd 3, so a READ of 9 entries registers. */
static void mlx5_read_above_sgl_rd(void **state)
{
	EXPECT_RUN(
		0, ARGS("-p", "mlx5", "--sgl", "4096x9", "read"), "path:",
		"path: ret=2 type=MR nr_ops=1 nr_mrs=1 nr_wqes=2 reason=READ of more than max_sgl_rd 3 entries: 1 MR of up to 256 pages",
		"chain: REG_MR → RDMA_READ",
		"wr0: opcode=REG_MR mr=mr0 key=mr0.v1 mr_iova=buf+0x0 mr_length=36864 mr_page_size=4096 access=LOCAL_WRITE",
		"wr1: opcode=RDMA_READ num_sge=1 sg_list=[addr=buf+0x0 length=36864 lkey=mr0.v1] remote_addr=0x10000000 rkey=0x00001234 send_flags=SIGNALED wr_cqe=cqe");
}

static void mlx5_read_at_sgl_rd(void **state)
{
	const char *wr0 = page_wr(0, "RDMA_READ", 0, 3,
				  " send_flags=SIGNALED wr_cqe=cqe");

	EXPECT_RUN(
		0, ARGS("-p", "mlx5", "--sgl", "4096x3", "read"), "path:",
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=3 entries <= max_sgl_rd 3: up to 30 SGEs per READ",
		"chain: RDMA_READ", wr0);
}

/* An empty pool under max_sgl_rd alone: the SGE path instead. */
static void mlx5_read_pool_empty_falls_back(void **state)
{
	struct result r = RUN("-p", "mlx5", "--sgl", "4096x9", "--pool-free",
			      "0", "read");
	const char *wr0 = page_wr(0, "RDMA_READ", 0, 9,
				  " send_flags=SIGNALED wr_cqe=cqe");

	assert_int_equal(r.status, 0);
	assert_non_null(strstr(
		r.out, " pool_size=1 pool_free_at_init=0 pages_per_mr=256\n"));
	EXPECT_TAIL(
		r.out, "path:",
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=the QP's MR pool ran out: fell back to MULTI from MR (READ of more than max_sgl_rd 3 entries); up to 30 SGEs per READ",
		"chain: RDMA_READ", wr0);
	free(r.out);
}

/* On iWARP the MR is required: an empty pool is -EAGAIN, exit 1. */
static void siw_read_pool_empty_fails(void **state)
{
	EXPECT_RUN(
		1,
		ARGS("-p", "siw", "--sgl", "4096x2", "--pool-free", "0",
		     "read"),
		"path:",
		"path: ret=-11 errno=-EAGAIN type=none nr_ops=0 nr_mrs=0 nr_wqes=0 reason=registration required (iWARP READ needs MR) and the QP's MR pool ran out; no fallback on iWARP or under force_mr",
		"error: rdma_rw_ctx_init: -EAGAIN: registration required (iWARP READ needs MR) and the QP's MR pool ran out; no fallback on iWARP or under force_mr");
}

static void force_mr_write(void **state)
{
	struct result r =
		RUN("-p", "rxe", "--force-mr", "--sgl", "4096x3", "write");

	assert_int_equal(r.status, 0);
	assert_non_null(strstr(
		r.out, " pool_size=1 pool_free_at_init=1 pages_per_mr=256\n"));
	EXPECT_TAIL(
		r.out, "path:",
		"path: ret=2 type=MR nr_ops=1 nr_mrs=1 nr_wqes=2 reason=force_mr: 1 MR of up to 256 pages",
		"chain: REG_MR → RDMA_WRITE",
		"wr0: opcode=REG_MR mr=mr0 key=mr0.v1 mr_iova=buf+0x0 mr_length=12288 mr_page_size=4096 access=LOCAL_WRITE",
		"wr1: opcode=RDMA_WRITE num_sge=1 sg_list=[addr=buf+0x0 length=12288 lkey=mr0.v1] remote_addr=0x10000000 rkey=0x00001234 send_flags=SIGNALED wr_cqe=cqe");
	free(r.out);
}

/* Pages per MR 4: 9 entries at offset 100 take three MRs (4 + 4 + 1). */
static void mr_split_with_offset(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "rxe", "--force-mr", "--fr-pages", "4", "--sgl",
		     "4096x9", "--offset", "100", "read"),
		"path:",
		"path: ret=6 type=MR nr_ops=3 nr_mrs=3 nr_wqes=6 reason=force_mr: 3 MRs of up to 4 pages",
		"chain: REG_MR → RDMA_READ → REG_MR → RDMA_READ → REG_MR → RDMA_READ",
		"wr0: opcode=REG_MR mr=mr0 key=mr0.v1 mr_iova=buf+0x64 mr_length=16284 mr_page_size=4096 access=LOCAL_WRITE",
		"wr1: opcode=RDMA_READ num_sge=1 sg_list=[addr=buf+0x64 length=16284 lkey=mr0.v1] remote_addr=0x10000000 rkey=0x00001234",
		"wr2: opcode=REG_MR mr=mr1 key=mr1.v1 mr_iova=buf+0x4000 mr_length=16384 mr_page_size=4096 access=LOCAL_WRITE",
		"wr3: opcode=RDMA_READ num_sge=1 sg_list=[addr=buf+0x4000 length=16384 lkey=mr1.v1] remote_addr=0x10003f9c rkey=0x00001234",
		"wr4: opcode=REG_MR mr=mr2 key=mr2.v1 mr_iova=buf+0x8000 mr_length=4096 mr_page_size=4096 access=LOCAL_WRITE",
		"wr5: opcode=RDMA_READ num_sge=1 sg_list=[addr=buf+0x8000 length=4096 lkey=mr2.v1] remote_addr=0x10007f9c rkey=0x00001234 send_flags=SIGNALED wr_cqe=cqe");
}

/* chain_wr: the SEND follows the last RDMA WR; nothing before it signals. */
static void chain_wr_send_follows(void **state)
{
	const char *wr0 = page_wr(0, "RDMA_WRITE", 0, 6, "");
	const char *wr1 = page_wr(1, "RDMA_WRITE", 6, 3, "");

	EXPECT_RUN(
		0, ARGS("-p", "siw", "--sgl", "4096x9", "--chain-wr", "write"),
		"path:",
		"path: ret=2 type=MULTI nr_ops=2 nr_mrs=0 nr_wqes=2 reason=9 entries: up to 6 SGEs per WRITE",
		"chain: RDMA_WRITE → RDMA_WRITE → SEND", wr0, wr1,
		"wr2: opcode=SEND num_sge=1 sg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey] send_flags=SIGNALED wr_cqe=send_cqe chain_wr=true");
}

/* Posted twice: the second chain retires the first registration. */
static void post_repeat_local_inv(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "mlx5", "--sgl", "4096x9", "--post", "--repeat", "2",
		     "--chain-wr", "read"),
		"chain 2/2:",
		"chain 2/2: LOCAL_INV → REG_MR → RDMA_READ → SEND",
		"wr0: opcode=LOCAL_INV invalidate_rkey=mr0.v1",
		"wr1: opcode=REG_MR mr=mr0 key=mr0.v2 mr_iova=buf+0x0 mr_length=36864 mr_page_size=4096 access=LOCAL_WRITE",
		"wr2: opcode=RDMA_READ num_sge=1 sg_list=[addr=buf+0x0 length=36864 lkey=mr0.v2] remote_addr=rbuf+0x40 rkey=rmr",
		"wr3: opcode=SEND num_sge=1 sg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey] send_flags=SIGNALED wr_cqe=send_cqe chain_wr=true",
		"post: ib_post_send=0 completions=[side=local opcode=IB_WC_SEND status=IB_WC_SUCCESS byte_len=64 wr_cqe=send_cqe; side=peer opcode=IB_WC_RECV status=IB_WC_SUCCESS byte_len=64 wr_cqe=recv_cqe] data_verified=true data=36864 bytes verified and the SEND's payload, bytes outside the transfer unchanged");
}

/* Every profile, both directions, posted: the bytes arrive. */
static void post_every_profile(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	static const char *const dirs[] = { "read", "write" };
	unsigned int p, d;

	for (p = 0; p < 3; p++) {
		for (d = 0; d < 2; d++) {
			struct result r = RUN("-p", profiles[p], "--sgl",
					      "512,4096x40,100", "--post",
					      "--offset", "700", dirs[d]);

			assert_int_equal(r.status, 0);
			assert_non_null(strstr(
				r.out,
				" data_verified=true data=163752 bytes verified, bytes outside the transfer unchanged\n"));
			free(r.out);
		}
	}
}

/* A wrong rkey: the error completion is shown and the tool exits 1. */
static void post_bad_rkey(void **state)
{
	EXPECT_RUN(
		1,
		ARGS("-p", "rxe", "--sgl", "4096x3", "--post", "--rkey", "0x5",
		     "write"),
		"post:",
		"post: ib_post_send=0 completions=[side=local opcode=IB_WC_RDMA_WRITE status=IB_WC_REM_ACCESS_ERR byte_len=0 wr_cqe=cqe] data_verified=false data=not checked: the chain did not complete with exactly the expected completions, all successful");
}

static void bvec_iova(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "rxe", "--iommu", "--bvec", "--sgl", "4096x3",
		     "--offset", "10", "--post", "write"),
		"path:",
		"path: ret=1 type=IOVA nr_ops=1 nr_mrs=0 nr_wqes=1 reason=IOMMU: the bio_vecs linked into one IOVA range of 12278 bytes",
		"chain: RDMA_WRITE",
		"wr0: opcode=RDMA_WRITE num_sge=1 sg_list=[addr=iova+0xa length=12278 lkey=local_dma_lkey] remote_addr=rbuf+0x40 rkey=rmr send_flags=SIGNALED wr_cqe=cqe",
		"post: ib_post_send=0 completions=[side=local opcode=IB_WC_RDMA_WRITE status=IB_WC_SUCCESS byte_len=12278 wr_cqe=cqe] data_verified=true data=12278 bytes verified, bytes outside the transfer unchanged");
}

static void bvec_virt_dma_multi(void **state)
{
	struct result r =
		RUN("-p", "rxe", "--bvec", "--sgl", "4096x2", "write");

	assert_int_equal(r.status, 0);
	assert_true(has_line(
		r.out,
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=virtual DMA, no IOVA API: one SGE per bio_vec, up to 32 per WRITE"));
	free(r.out);
}

static void offset_past_end(void **state)
{
	EXPECT_RUN(
		1, ARGS("--sgl", "4096x2", "--offset", "8192", "write"),
		"path:",
		"path: ret=-22 errno=-EINVAL type=none nr_ops=0 nr_mrs=0 nr_wqes=0 reason=sg_offset at or past the end of the list",
		"error: rdma_rw_ctx_init: -EINVAL: sg_offset at or past the end of the list");
}

static void mr_page_rules(void **state)
{
	struct result r =
		RUN("-p", "siw", "--sgl", "512x4", "--misalign", "0", "read");

	assert_int_equal(r.status, 1);
	assert_non_null(strstr(
		r.out,
		" bytes=2048 transfer_bytes=2048 chained_arrays=1 chain_wr=false entries=[addr=buf+0x0 length=512; addr=buf+0x1000 length=512; addr=buf+0x2000 length=512; addr=buf+0x3000 length=512]\n"));
	assert_true(has_line(
		r.out,
		"error: rdma_rw_ctx_init: -EINVAL: entry 1 after the offset does not fit in an MR of up to 256 pages with the entries before it (the MR page-list rules)"));
	free(r.out);
}

static void chained_scatterlist(void **state)
{
	struct result r = RUN("-p", "rxe", "--sgl", "4096x40", "--chain", "7",
			      "--post", "write");

	assert_int_equal(r.status, 0);
	assert_true(has_line(r.out, "chain: RDMA_WRITE → RDMA_WRITE"));
	assert_non_null(
		strstr(r.out, " chained_arrays=6 entries_per_array=7 "));
	assert_non_null(strstr(
		r.out,
		" data_verified=true data=163840 bytes verified, bytes outside the transfer unchanged\n"));
	free(r.out);
}

/* ---- JSON --------------------------------------------------------------- */

struct json {
	const char *p;
	int depth;
};

static void ws(struct json *j)
{
	while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
		j->p++;
}

static bool json_value(struct json *j);

static bool json_string(struct json *j)
{
	if (*j->p != '"')
		return false;
	for (j->p++; *j->p && *j->p != '"'; j->p++) {
		if ((unsigned char)*j->p < 0x20)
			return false;
		if (*j->p == '\\' && !*++j->p)
			return false;
	}
	if (*j->p != '"')
		return false;
	j->p++;
	return true;
}

static bool json_number(struct json *j)
{
	char *end;

	strtod(j->p, &end);
	if (end == j->p || (*j->p != '-' && (*j->p < '0' || *j->p > '9')))
		return false;
	j->p = end;
	return true;
}

static bool json_word(struct json *j, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(j->p, w, n))
		return false;
	j->p += n;
	return true;
}

/* "{" already seen (or "["): members until the closing brace. */
static bool json_members(struct json *j, bool object)
{
	char close = object ? '}' : ']';

	ws(j);
	if (*j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		ws(j);
		if (object) {
			if (!json_string(j))
				return false;
			ws(j);
			if (*j->p++ != ':')
				return false;
		}
		if (!json_value(j))
			return false;
		ws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		return *j->p++ == close;
	}
}

static bool json_value(struct json *j)
{
	bool ok;

	ws(j);
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > 64)
			return false;
		ok = json_members(j, *j->p++ == '{');
		j->depth--;
		return ok;
	case '"':
		return json_string(j);
	case 't':
		return json_word(j, "true");
	case 'f':
		return json_word(j, "false");
	case 'n':
		return json_word(j, "null");
	default:
		return json_number(j);
	}
}

static bool json_valid(const char *text)
{
	struct json j = { text, 0 };

	if (!json_value(&j))
		return false;
	ws(&j);
	return *j.p == '\0';
}

static void json_validator_rejects(void **state)
{
	assert_true(json_valid("{\"a\": [1, -2.5e3, \"x\\\"\", true, null]}"));
	assert_false(json_valid("{\"a\": [1, 2,]}"));
	assert_false(json_valid("{\"a\" 1}"));
	assert_false(json_valid("{\"a\": 1} x"));
	assert_false(json_valid("[\"unterminated]"));
}

static void json_output(void **state)
{
	struct result r = RUN("-p", "siw", "--sgl", "4096x2", "--json",
			      "--chain-wr", "--post", "--repeat", "2", "read");

	assert_int_equal(r.status, 0);
	assert_true(json_valid(r.out));
	assert_non_null(strstr(r.out, "\"opcode\": \"REG_MR\""));
	assert_non_null(strstr(r.out, "\"opcode\": \"RDMA_READ_WITH_INV\""));
	assert_non_null(strstr(r.out, "\"invalidate_rkey\": \"mr0.v2\""));
	assert_non_null(strstr(
		r.out, "\"access\": [\"LOCAL_WRITE\", \"REMOTE_WRITE\"]"));
	assert_non_null(strstr(
		r.out,
		"{\"addr\": \"buf+0x0\", \"length\": 8192, \"lkey\": \"mr0.v1\"}"));
	assert_non_null(strstr(r.out, "\"wr_cqe\": \"send_cqe\""));
	assert_non_null(strstr(r.out, "\"ok\": true"));
	free(r.out);

	r = RUN("-p", "mlx5", "--sgl", "4096x9", "--json", "--absolute",
		"read");
	assert_int_equal(r.status, 0);
	assert_true(json_valid(r.out));
	assert_non_null(strstr(r.out, "\"remote_addr\": 268435456"));
	free(r.out);

	r = RUN("-p", "siw", "--pool-free", "0", "--json", "read");
	assert_int_equal(r.status, 1);
	assert_true(json_valid(r.out));
	assert_non_null(strstr(r.out, "\"errno\": \"-EAGAIN\""));
	assert_non_null(strstr(r.out, "\"chains\": []"));
	free(r.out);
}

static void dot_output(void **state)
{
	struct result r = RUN("-p", "mlx5", "--sgl", "4096x9", "--dot",
			      "--repeat", "2", "read");

	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "digraph rdma_rw_chain {\n", 24), 0);
	assert_true(has_line(
		r.out,
		"\tc2_wr0 -> mr0 [style=dotted label=\"invalidates\"];"));
	assert_true(has_line(r.out, "}"));
	free(r.out);
}

/* ---- exact output of every format (pinned byte for byte) --------------- */

/* --help: every option, from the option table. */
static void help_text(void **state)
{
	EXPECT_RUN(
		0, ARGS("--help"),
		"Usage:", "Usage: rdmarw-chain [options] read|write",
		"Explain the work requests the R/W API builds for one RDMA READ or WRITE.",
		"",
		"Device (a software device; every attribute can be overridden):",
		"  -p, --profile NAME     mlx5, rxe (default) or siw",
		"      --iommu            emulated IOMMU (the IOVA path of --bvec)",
		"      --max-sgl-rd N     entries above which a READ registers memory",
		"      --max-send-sge N   device SGEs per send WR",
		"      --max-sge-rd N     device SGEs per RDMA READ",
		"      --fr-pages N       max_fast_reg_page_list_len",
		"      --qp-send-sge N    the QP's cap.max_send_sge (default: the device's)",
		"Local buffer:",
		"      --sgl SPEC         entry sizes: SIZE[xCOUNT][,SIZE[xCOUNT]...],",
		"                         K/M suffixes (default 4096); e.g. 4096x8, 512,100",
		"      --offset N         sg_offset (with --bvec: where the iterator starts)",
		"      --misalign N       each entry on its own page, starting N bytes in",
		"      --gap N            bytes between entries (default 0: contiguous)",
		"      --chain N          chained scatterlist arrays of N entries each",
		"      --bvec             rdma_rw_ctx_init_bvec() with one bio_vec per entry",
		"R/W API:",
		"      --force-mr         rdma_rw_set_force_mr(true) (also RDMARW_FORCE_MR=1)",
		"      --pool-size N      cap.max_rdma_ctxs, the MR pool's size",
		"                         (default: rdma_rw_mr_factor() of the buffer)",
		"      --pool-free N      take MRs out of the pool first, leaving N free",
		"      --remote-addr A    remote address (default 0x10000000)",
		"      --rkey K           remote key (default 0x1234)",
		"      --chain-wr         append a signaled SEND as chain_wr",
		"      --repeat N         build (and with --post, post) the chain N times",
		"      --post             execute each chain against a peer device and",
		"                         verify the bytes (remote buffer registered there)",
		"Output:",
		"      --json             every field of every WR and SGE, as JSON",
		"      --dot              a Graphviz digraph of the chain",
		"      --absolute         raw addresses and keys instead of buf+0x.., mr0.v1",
		"  -v, --verbose          the library's messages: -v info, -vv debug",
		"                         (RDMARW_LOG_LEVEL)",
		"  -h, --help             this text",
		"  -V, --version          the tool's and the library's version",
		"",
		"Exit status: 0 success; 1 init or post failed; 2 bad arguments.");
}

/* Text: every record of a bio_vec chain posted twice with chain_wr. */
static void text_whole_output(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "rxe", "--bvec", "--sgl", "4096x3", "--offset",
		     "100", "--repeat", "2", "--post", "--chain-wr", "write"),
		"device:",
		"device: profile=rxe protocol=RoCE iommu=false max_send_sge=32 max_sge_rd=32 max_sgl_rd=0 max_fast_reg_page_list_len=512",
		"qp: max_send_sge=32 max_read_sge=32 max_write_sge=32 max_send_wr=14 max_rdma_ctxs=1 force_mr=false pool_size=0 pool_free_at_init=0 pages_per_mr=0",
		"request: api=rdma_rw_ctx_init_bvec dir=DMA_TO_DEVICE port_num=1 nr_bvec=3 offset=100 remote_addr=rbuf+0x40 rkey=rmr bytes=12288 transfer_bytes=12188 chained_arrays=0 chain_wr=true bi_size=12188 bi_idx=0 bi_bvec_done=100 entries=[addr=buf+0x0 length=4096; addr=buf+0x1000 length=4096; addr=buf+0x2000 length=4096]",
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=virtual DMA, no IOVA API: one SGE per bio_vec, up to 32 per WRITE",
		"chain 1/2: RDMA_WRITE → SEND",
		"wr0: opcode=RDMA_WRITE num_sge=3 sg_list=[addr=buf+0x64 length=3996 lkey=local_dma_lkey; addr=buf+0x1000 length=4096 lkey=local_dma_lkey; addr=buf+0x2000 length=4096 lkey=local_dma_lkey] remote_addr=rbuf+0x40 rkey=rmr",
		"wr1: opcode=SEND num_sge=1 sg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey] send_flags=SIGNALED wr_cqe=send_cqe chain_wr=true",
		"post: ib_post_send=0 completions=[side=local opcode=IB_WC_SEND status=IB_WC_SUCCESS byte_len=64 wr_cqe=send_cqe; side=peer opcode=IB_WC_RECV status=IB_WC_SUCCESS byte_len=64 wr_cqe=recv_cqe] data_verified=true data=12188 bytes verified and the SEND's payload, bytes outside the transfer unchanged",
		"chain 2/2: RDMA_WRITE → SEND",
		"wr0: opcode=RDMA_WRITE num_sge=3 sg_list=[addr=buf+0x64 length=3996 lkey=local_dma_lkey; addr=buf+0x1000 length=4096 lkey=local_dma_lkey; addr=buf+0x2000 length=4096 lkey=local_dma_lkey] remote_addr=rbuf+0x40 rkey=rmr",
		"wr1: opcode=SEND num_sge=1 sg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey] send_flags=SIGNALED wr_cqe=send_cqe chain_wr=true",
		"post: ib_post_send=0 completions=[side=local opcode=IB_WC_SEND status=IB_WC_SUCCESS byte_len=64 wr_cqe=send_cqe; side=peer opcode=IB_WC_RECV status=IB_WC_SUCCESS byte_len=64 wr_cqe=recv_cqe] data_verified=true data=12188 bytes verified and the SEND's payload, bytes outside the transfer unchanged");
}

/* Dot: the MR, its registration and invalidation, clusters, posts. */
static void dot_whole_output(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "mlx5", "--sgl", "4096x9", "--dot", "--repeat", "2",
		     "--post", "--chain-wr", "read"),
		"digraph", "digraph rdma_rw_chain {", "\trankdir=LR;",
		"\tnode [shape=box fontname=\"monospace\"];",
		"\tdevice [label=\"device\\nprofile=mlx5\\nprotocol=InfiniBand\\niommu=false\\nmax_send_sge=30\\nmax_sge_rd=30\\nmax_sgl_rd=3\\nmax_fast_reg_page_list_len=65536\" shape=note];",
		"\tqp [label=\"qp\\nmax_send_sge=30\\nmax_read_sge=30\\nmax_write_sge=30\\nmax_send_wr=34\\nmax_rdma_ctxs=1\\nforce_mr=false\\npool_size=1\\npool_free_at_init=1\\npages_per_mr=256\" shape=note];",
		"\trequest [label=\"request\\napi=rdma_rw_ctx_init\\ndir=DMA_FROM_DEVICE\\nport_num=1\\nsg_cnt=9\\noffset=0\\nremote_addr=rbuf+0x40\\nrkey=rmr\\nbytes=36864\\ntransfer_bytes=36864\\nchained_arrays=1\\nchain_wr=true\\nentries=[addr=buf+0x0 length=4096; addr=buf+0x1000 length=4096; addr=buf+0x2000 length=4096; addr=buf+0x3000 length=4096; addr=buf+0x4000 length=4096; addr=buf+0x5000 length=4096; addr=buf+0x6000 length=4096; addr=buf+0x7000 length=4096; addr=buf+0x8000 length=4096]\" shape=note];",
		"\tpath [label=\"path\\nret=2\\ntype=MR\\nnr_ops=1\\nnr_mrs=1\\nnr_wqes=2\\nreason=READ of more than max_sgl_rd 3 entries: 1 MR of up to 256 pages\" shape=note];",
		"\tmr0 [shape=cylinder label=\"mr0\"];",
		"\tsubgraph cluster_1 {", "\tlabel=\"chain 1/2\";",
		"\tc1_wr0 [label=\"c1_wr0\\nopcode=REG_MR\\nmr=mr0\\nkey=mr0.v1\\nmr_iova=buf+0x0\\nmr_length=36864\\nmr_page_size=4096\\naccess=LOCAL_WRITE\"];",
		"\tc1_wr0 -> mr0 [style=dotted label=\"registers\"];",
		"\tc1_wr1 [label=\"c1_wr1\\nopcode=RDMA_READ\\nnum_sge=1\\nsg_list=[addr=buf+0x0 length=36864 lkey=mr0.v1]\\nremote_addr=rbuf+0x40\\nrkey=rmr\"];",
		"\tc1_wr0 -> c1_wr1;",
		"\tc1_wr2 [label=\"c1_wr2\\nopcode=SEND\\nnum_sge=1\\nsg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey]\\nsend_flags=SIGNALED\\nwr_cqe=send_cqe\\nchain_wr=true\" penwidth=2 style=dashed];",
		"\tc1_wr1 -> c1_wr2;",
		"\tc1_wr2_done [shape=ellipse label=\"send_cqe->done\"];",
		"\tc1_wr2 -> c1_wr2_done [style=dashed label=\"completion\"];",
		"\t}",
		"\tc1_post [label=\"c1_post\\nib_post_send=0\\ncompletions=[side=local opcode=IB_WC_SEND status=IB_WC_SUCCESS byte_len=64 wr_cqe=send_cqe; side=peer opcode=IB_WC_RECV status=IB_WC_SUCCESS byte_len=64 wr_cqe=recv_cqe]\\ndata_verified=true\\ndata=36864 bytes verified and the SEND's payload, bytes outside the transfer unchanged\" shape=note];",
		"\tsubgraph cluster_2 {", "\tlabel=\"chain 2/2\";",
		"\tc2_wr0 [label=\"c2_wr0\\nopcode=LOCAL_INV\\ninvalidate_rkey=mr0.v1\"];",
		"\tc2_wr0 -> mr0 [style=dotted label=\"invalidates\"];",
		"\tc2_wr1 [label=\"c2_wr1\\nopcode=REG_MR\\nmr=mr0\\nkey=mr0.v2\\nmr_iova=buf+0x0\\nmr_length=36864\\nmr_page_size=4096\\naccess=LOCAL_WRITE\"];",
		"\tc2_wr0 -> c2_wr1;",
		"\tc2_wr1 -> mr0 [style=dotted label=\"registers\"];",
		"\tc2_wr2 [label=\"c2_wr2\\nopcode=RDMA_READ\\nnum_sge=1\\nsg_list=[addr=buf+0x0 length=36864 lkey=mr0.v2]\\nremote_addr=rbuf+0x40\\nrkey=rmr\"];",
		"\tc2_wr1 -> c2_wr2;",
		"\tc2_wr3 [label=\"c2_wr3\\nopcode=SEND\\nnum_sge=1\\nsg_list=[addr=msg+0x0 length=64 lkey=local_dma_lkey]\\nsend_flags=SIGNALED\\nwr_cqe=send_cqe\\nchain_wr=true\" penwidth=2 style=dashed];",
		"\tc2_wr2 -> c2_wr3;",
		"\tc2_wr3_done [shape=ellipse label=\"send_cqe->done\"];",
		"\tc2_wr3 -> c2_wr3_done [style=dashed label=\"completion\"];",
		"\t}",
		"\tc2_post [label=\"c2_post\\nib_post_send=0\\ncompletions=[side=local opcode=IB_WC_SEND status=IB_WC_SUCCESS byte_len=64 wr_cqe=send_cqe; side=peer opcode=IB_WC_RECV status=IB_WC_SUCCESS byte_len=64 wr_cqe=recv_cqe]\\ndata_verified=true\\ndata=36864 bytes verified and the SEND's payload, bytes outside the transfer unchanged\" shape=note];",
		"}");
	EXPECT_RUN(
		1, ARGS("-p", "siw", "--pool-free", "0", "--dot", "read"),
		"digraph", "digraph rdma_rw_chain {", "\trankdir=LR;",
		"\tnode [shape=box fontname=\"monospace\"];",
		"\tdevice [label=\"device\\nprofile=siw\\nprotocol=iWARP\\niommu=false\\nmax_send_sge=6\\nmax_sge_rd=1\\nmax_sgl_rd=0\\nmax_fast_reg_page_list_len=256\" shape=note];",
		"\tqp [label=\"qp\\nmax_send_sge=6\\nmax_read_sge=1\\nmax_write_sge=6\\nmax_send_wr=10\\nmax_rdma_ctxs=1\\nforce_mr=false\\npool_size=1\\npool_free_at_init=0\\npages_per_mr=256\" shape=note];",
		"\trequest [label=\"request\\napi=rdma_rw_ctx_init\\ndir=DMA_FROM_DEVICE\\nport_num=1\\nsg_cnt=1\\noffset=0\\nremote_addr=0x10000000\\nrkey=0x00001234\\nbytes=4096\\ntransfer_bytes=4096\\nchained_arrays=1\\nchain_wr=false\\nentries=[addr=buf+0x0 length=4096]\" shape=note];",
		"\tpath [label=\"path\\nret=-11\\nerrno=-EAGAIN\\ntype=none\\nnr_ops=0\\nnr_mrs=0\\nnr_wqes=0\\nreason=registration required (iWARP READ needs MR) and the QP's MR pool ran out; no fallback on iWARP or under force_mr\" shape=note];",
		"}");
}

/* JSON: every member, an MR chain with chain_wr, posted; a failure. */
static void json_whole_output(void **state)
{
	EXPECT_RUN(
		0,
		ARGS("-p", "siw", "--sgl", "4096x2", "--json", "--chain-wr",
		     "--post", "read"),
		"{", "{", "  \"tool\": \"rdmarw-chain\",",
		"  \"relative\": true,", "  \"device\": {",
		"    \"profile\": \"siw\",", "    \"protocol\": \"iWARP\",",
		"    \"iommu\": false,", "    \"max_send_sge\": 6,",
		"    \"max_sge_rd\": 1,", "    \"max_sgl_rd\": 0,",
		"    \"max_fast_reg_page_list_len\": 256", "  },",
		"  \"qp\": {", "    \"max_send_sge\": 6,",
		"    \"max_read_sge\": 1,", "    \"max_write_sge\": 6,",
		"    \"max_send_wr\": 13,", "    \"max_rdma_ctxs\": 1,",
		"    \"force_mr\": false,", "    \"pool_size\": 1,",
		"    \"pool_free_at_init\": 1,", "    \"pages_per_mr\": 256",
		"  },", "  \"request\": {",
		"    \"api\": \"rdma_rw_ctx_init\",",
		"    \"dir\": \"DMA_FROM_DEVICE\",", "    \"port_num\": 1,",
		"    \"sg_cnt\": 2,", "    \"offset\": 0,",
		"    \"remote_addr\": \"rbuf+0x40\",", "    \"rkey\": \"rmr\",",
		"    \"bytes\": 8192,", "    \"transfer_bytes\": 8192,",
		"    \"chained_arrays\": 1,", "    \"entries_per_array\": 0,",
		"    \"chain_wr\": true,", "    \"entries\": [",
		"      {\"addr\": \"buf+0x0\", \"length\": 4096},",
		"      {\"addr\": \"buf+0x1000\", \"length\": 4096}", "    ]",
		"  },", "  \"path\": {", "    \"ret\": 2,",
		"    \"errno\": null,", "    \"type\": \"MR\",",
		"    \"nr_ops\": 1,", "    \"nr_mrs\": 1,",
		"    \"nr_wqes\": 2,",
		"    \"reason\": \"iWARP READ needs MR: 1 MR of up to 256 pages\"",
		"  },", "  \"chains\": [", "    {", "      \"call\": 1,",
		"      \"nr_wrs\": 3,", "      \"wrs\": [", "        {",
		"          \"index\": 0,", "          \"opcode\": \"REG_MR\",",
		"          \"opcode_value\": 32,", "          \"num_sge\": 0,",
		"          \"mr\": \"mr0\",", "          \"key\": \"mr0.v1\",",
		"          \"mr_iova\": \"buf+0x0\",",
		"          \"mr_length\": 8192,",
		"          \"mr_page_size\": 4096,",
		"          \"access\": [\"LOCAL_WRITE\", \"REMOTE_WRITE\"],",
		"          \"access_value\": 3,", "          \"ex\": 0,",
		"          \"send_flags\": [],",
		"          \"send_flags_value\": 0,",
		"          \"wr_cqe\": null,", "          \"chain_wr\": false",
		"        },", "        {", "          \"index\": 1,",
		"          \"opcode\": \"RDMA_READ_WITH_INV\",",
		"          \"opcode_value\": 11,", "          \"num_sge\": 1,",
		"          \"sg_list\": [",
		"            {\"addr\": \"buf+0x0\", \"length\": 8192, \"lkey\": \"mr0.v1\"}",
		"          ],", "          \"remote_addr\": \"rbuf+0x40\",",
		"          \"rkey\": \"rmr\",",
		"          \"invalidate_rkey\": \"mr0.v1\",",
		"          \"send_flags\": [],",
		"          \"send_flags_value\": 0,",
		"          \"wr_cqe\": null,", "          \"chain_wr\": false",
		"        },", "        {", "          \"index\": 2,",
		"          \"opcode\": \"SEND\",",
		"          \"opcode_value\": 2,", "          \"num_sge\": 1,",
		"          \"sg_list\": [",
		"            {\"addr\": \"msg+0x0\", \"length\": 64, \"lkey\": \"local_dma_lkey\"}",
		"          ],", "          \"ex\": 0,",
		"          \"send_flags\": [\"SIGNALED\"],",
		"          \"send_flags_value\": 2,",
		"          \"wr_cqe\": \"send_cqe\",",
		"          \"chain_wr\": true", "        }", "      ],",
		"      \"post\": {", "        \"ib_post_send\": 0,",
		"        \"errno\": null,", "        \"completions\": [",
		"          {\"side\": \"local\", \"opcode\": \"IB_WC_SEND\", \"status\": \"IB_WC_SUCCESS\", \"byte_len\": 64, \"wr_cqe\": \"send_cqe\"},",
		"          {\"side\": \"peer\", \"opcode\": \"IB_WC_RECV\", \"status\": \"IB_WC_SUCCESS\", \"byte_len\": 64, \"wr_cqe\": \"recv_cqe\"}",
		"        ],", "        \"data_verified\": true,",
		"        \"data\": \"8192 bytes verified and the SEND's payload, bytes outside the transfer unchanged\"",
		"      }", "    }", "  ],", "  \"ok\": true", "}");
	EXPECT_RUN(
		1, ARGS("-p", "siw", "--pool-free", "0", "--json", "read"), "{",
		"{", "  \"tool\": \"rdmarw-chain\",", "  \"relative\": true,",
		"  \"device\": {", "    \"profile\": \"siw\",",
		"    \"protocol\": \"iWARP\",", "    \"iommu\": false,",
		"    \"max_send_sge\": 6,", "    \"max_sge_rd\": 1,",
		"    \"max_sgl_rd\": 0,",
		"    \"max_fast_reg_page_list_len\": 256", "  },",
		"  \"qp\": {", "    \"max_send_sge\": 6,",
		"    \"max_read_sge\": 1,", "    \"max_write_sge\": 6,",
		"    \"max_send_wr\": 10,", "    \"max_rdma_ctxs\": 1,",
		"    \"force_mr\": false,", "    \"pool_size\": 1,",
		"    \"pool_free_at_init\": 0,", "    \"pages_per_mr\": 256",
		"  },", "  \"request\": {",
		"    \"api\": \"rdma_rw_ctx_init\",",
		"    \"dir\": \"DMA_FROM_DEVICE\",", "    \"port_num\": 1,",
		"    \"sg_cnt\": 1,", "    \"offset\": 0,",
		"    \"remote_addr\": \"0x10000000\",",
		"    \"rkey\": \"0x00001234\",", "    \"bytes\": 4096,",
		"    \"transfer_bytes\": 4096,", "    \"chained_arrays\": 1,",
		"    \"entries_per_array\": 0,", "    \"chain_wr\": false,",
		"    \"entries\": [",
		"      {\"addr\": \"buf+0x0\", \"length\": 4096}", "    ]",
		"  },", "  \"path\": {", "    \"ret\": -11,",
		"    \"errno\": \"-EAGAIN\",", "    \"type\": \"none\",",
		"    \"nr_ops\": 0,", "    \"nr_mrs\": 0,",
		"    \"nr_wqes\": 0,",
		"    \"reason\": \"registration required (iWARP READ needs MR) and the QP's MR pool ran out; no fallback on iWARP or under force_mr\"",
		"  },", "  \"chains\": [],", "  \"ok\": false", "}");
}

/*
 * The reasons no other case shows: @args must exit with @status and print
 * @line.
 */
static void expect_line(int status, const char *const *args, const char *line)
{
	struct result r = run_argv(args);

	assert_int_equal(r.status, status);
	if (!has_line(r.out, line))
		fail_msg("no line '%s' in:\n%s", line, r.out);
	free(r.out);
}

static void reasons(void **state)
{
	expect_line(
		0,
		ARGS("-p", "siw", "--bvec", "--sgl", "4096x2", "--offset",
		     "4096", "write"),
		"path: ret=1 type=SINGLE nr_ops=1 nr_mrs=0 nr_wqes=1 reason=the transfer lies within one bio_vec");
	expect_line(
		0,
		ARGS("-p", "mlx5", "--sgl", "4096x9", "--pool-size", "0",
		     "read"),
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=the QP has no MR pool: fell back to MULTI from MR (READ of more than max_sgl_rd 3 entries); up to 30 SGEs per READ");
	expect_line(
		1,
		ARGS("-p", "mlx5", "--sgl", "4096x9", "--pool-size", "0",
		     "--force-mr", "read"),
		"error: rdma_rw_ctx_init: -EOPNOTSUPP: registration required (force_mr) and the QP has no MR pool; no fallback on iWARP or under force_mr");
	expect_line(
		1,
		ARGS("-p", "rxe", "--pool-size", "2", "--pool-free", "1",
		     "--force-mr", "--sgl", "4096x300", "read"),
		"error: rdma_rw_ctx_init: -EAGAIN: registration required (force_mr) and the QP's MR pool ran out; no fallback on iWARP or under force_mr");
	expect_line(
		1,
		ARGS("-p", "rxe", "--bvec", "--sgl", "4096x2", "--offset",
		     "9000", "read"),
		"error: rdma_rw_ctx_init_bvec: -EINVAL: the iterator is empty: --offset 9000 of 8192 bytes");
	expect_line(
		1, ARGS("-p", "rxe", "--bvec", "--sgl", "4096,0,4096", "write"),
		"error: rdma_rw_ctx_init_bvec: -EINVAL: the iterator leaves the bio_vec array or meets an empty bio_vec");
	expect_line(
		1,
		ARGS("-p", "rxe", "--iommu", "--bvec", "--sgl", "512x3",
		     "--misalign", "0", "read"),
		"error: rdma_rw_ctx_init_bvec: -EINVAL: the IOMMU cannot link the bio_vecs into one IOVA range; a failed link is final");
	expect_line(
		1,
		ARGS("-p", "rxe", "--fr-pages", "4", "--force-mr", "--misalign",
		     "1", "--sgl", "4096x3", "read"),
		"error: rdma_rw_ctx_init: -EINVAL: entry 1 after the offset does not fit in an MR of up to 4 pages with the entries before it (the MR page-list rules)");
	expect_line(
		0,
		ARGS("-p", "mlx5", "--max-sgl-rd", "0", "--sgl", "4096x9",
		     "read"),
		"path: ret=1 type=MULTI nr_ops=1 nr_mrs=0 nr_wqes=1 reason=9 entries: up to 30 SGEs per READ");
}

/* --sgl: K suffixes, counts, single sizes; a second --sgl replaces the first. */
static void sgl_spec(void **state)
{
	expect_line(
		0, ARGS("--sgl", "512", "--sgl", "1Kx2,16", "write"),
		"request: api=rdma_rw_ctx_init dir=DMA_TO_DEVICE port_num=1 sg_cnt=3 offset=0 remote_addr=0x10000000 rkey=0x00001234 bytes=2064 transfer_bytes=2064 chained_arrays=1 chain_wr=false entries=[addr=buf+0x0 length=1024; addr=buf+0x400 length=1024; addr=buf+0x800 length=16]");
}

/* Devices the overrides make impossible: exit 1, nothing printed. */
static void bad_device(void **state)
{
	struct result r = RUN("-p", "rxe", "--max-send-sge", "0", "write");

	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	free(r.out);
}

/* ---- arguments ---------------------------------------------------------- */

static void help_and_bad_args(void **state)
{
	static const char *const bad[][4] = {
		{ NULL },
		{ "sideways" },
		{ "read", "write" },
		{ "--sgl", "4096x0", "read" },
		{ "--sgl", "4096,", "read" },
		{ "--misalign", "4096", "read" },
		{ "--json", "--dot", "read" },
		{ "--bogus", "read" },
		{ "-p", "nope", "read" },
		{ "--pool-free", "2", "write" },
	};
	struct result r = RUN("--help");
	size_t i;

	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "Usage: rdmarw-chain", 19), 0);
	free(r.out);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run_argv(bad[i]);
		assert_int_equal(r.status, 2);
		free(r.out);
	}
}

static int setup(void **state)
{
	find_tool();
	if (access(tool, X_OK)) {
		print_error("rdmarw-chain not found at %s\n", tool);
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rxe_write_single),
		cmocka_unit_test(rxe_write_sge_limit),
		cmocka_unit_test(rxe_write_at_sge_limit),
		cmocka_unit_test(siw_read_mr),
		cmocka_unit_test(mlx5_read_above_sgl_rd),
		cmocka_unit_test(mlx5_read_at_sgl_rd),
		cmocka_unit_test(mlx5_read_pool_empty_falls_back),
		cmocka_unit_test(siw_read_pool_empty_fails),
		cmocka_unit_test(force_mr_write),
		cmocka_unit_test(mr_split_with_offset),
		cmocka_unit_test(chain_wr_send_follows),
		cmocka_unit_test(post_repeat_local_inv),
		cmocka_unit_test(post_every_profile),
		cmocka_unit_test(post_bad_rkey),
		cmocka_unit_test(bvec_iova),
		cmocka_unit_test(bvec_virt_dma_multi),
		cmocka_unit_test(offset_past_end),
		cmocka_unit_test(mr_page_rules),
		cmocka_unit_test(chained_scatterlist),
		cmocka_unit_test(json_validator_rejects),
		cmocka_unit_test(json_output),
		cmocka_unit_test(dot_output),
		cmocka_unit_test(help_and_bad_args),
		cmocka_unit_test(help_text),
		cmocka_unit_test(text_whole_output),
		cmocka_unit_test(dot_whole_output),
		cmocka_unit_test(json_whole_output),
		cmocka_unit_test(reasons),
		cmocka_unit_test(sgl_spec),
		cmocka_unit_test(bad_device),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
