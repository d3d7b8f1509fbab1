// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-info: list RDMA devices with the attributes the R/W API branches
 * on.  It creates one software device per built-in profile (mlx5, rxe, siw)
 * on a private fabric, then prints every registered device.
 *
 * Usage: rdmarw-info [-d NAME] [-v] [--json]
 */
#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h> /* real devices through libibverbs */
#endif

#include "cli.h"
#include "json.h"
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const profile_names[] = { "mlx5", "rxe", "siw" };
#define NPROFILES (sizeof(profile_names) / sizeof(profile_names[0]))

struct info_ctx {
	bool json;
	bool verbose; /* -v: every attribute, as ibv_devinfo -v */
	const char *device; /* -d: this device only */
	struct jw jw;
	int count;
};

static const char *protocol_name(const struct ib_device *dev)
{
	if (rdma_protocol_iwarp(dev, 1))
		return "iWARP";
	if (rdma_protocol_roce(dev, 1))
		return "RoCE";
	if (rdma_protocol_ib(dev, 1))
		return "InfiniBand";
	return "unknown";
}

struct cap_bit {
	const char *name;
	bool (*has)(const struct ib_device *dev);
};

static bool has_fast_reg(const struct ib_device *dev)
{
	return dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS;
}

static bool has_local_dma_lkey(const struct ib_device *dev)
{
	return (dev->attrs.device_cap_flags & IB_DEVICE_LOCAL_DMA_LKEY) ||
	       (dev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY);
}

static bool has_integrity(const struct ib_device *dev)
{
	return dev->attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER;
}

static bool has_sg_gaps(const struct ib_device *dev)
{
	return dev->attrs.kernel_cap_flags & IBK_SG_GAPS_REG;
}

static bool has_read_inv(const struct ib_device *dev)
{
	return rdma_cap_read_inv(dev, 1);
}

static const struct cap_bit caps[] = {
	{ "fast_reg", has_fast_reg },
	{ "local_dma_lkey", has_local_dma_lkey },
	{ "integrity", has_integrity },
	{ "sg_gaps", has_sg_gaps },
	{ "read_inv", has_read_inv },
};
#define NCAPS (sizeof(caps) / sizeof(caps[0]))

struct num_attr {
	const char *name;
	long long value;
};

static int num_attrs(const struct ib_device *dev, struct num_attr *out)
{
	const struct ib_device_attr *a = &dev->attrs;
	int n = 0;

	out[n++] = (struct num_attr){ "max_qp_wr", a->max_qp_wr };
	out[n++] = (struct num_attr){ "max_send_sge", a->max_send_sge };
	out[n++] = (struct num_attr){ "max_recv_sge", a->max_recv_sge };
	out[n++] = (struct num_attr){ "max_sge_rd", a->max_sge_rd };
	out[n++] = (struct num_attr){ "max_sgl_rd", a->max_sgl_rd };
	out[n++] = (struct num_attr){ "max_fast_reg_page_list_len",
				      a->max_fast_reg_page_list_len };
	out[n++] = (struct num_attr){ "max_pi_fast_reg_page_list_len",
				      a->max_pi_fast_reg_page_list_len };
	out[n++] = (struct num_attr){ "max_qp_rd_atom", a->max_qp_rd_atom };
	return n;
}

static const char *driver_name(const struct ib_device *dev)
{
	if (soft_device_is_soft(dev))
		return "soft";
#ifdef RDMARW_HAVE_IBV
	if (rdmarw_ibv_is_ibv(dev))
		return "ibv";
#endif
	return "other";
}

static void print_json(struct jw *j, struct ib_device *dev)
{
	struct num_attr attrs[16];
	int i, n = num_attrs(dev, attrs);
	size_t c;

	jw_open(j, NULL, '{');
	jw_str(j, "name", dev->name);
	jw_str(j, "driver", driver_name(dev));
	jw_str(j, "protocol", protocol_name(dev));
	for (i = 0; i < n; i++)
		jw_int(j, attrs[i].name, attrs[i].value);
	jw_open_inline(j, "caps", '{');
	for (c = 0; c < NCAPS; c++)
		jw_bool(j, caps[c].name, caps[c].has(dev));
	jw_close(j, '}');
	jw_bool(j, "virt_dma", ib_uses_virt_dma(dev));
	jw_bool(j, "iommu", dev->iommu);
	jw_close(j, '}');
}

static void print_text(struct ib_device *dev, bool verbose)
{
	struct num_attr attrs[16];
	int i, n = num_attrs(dev, attrs);
	size_t c;

	printf("%s (%s)\n", dev->name, driver_name(dev));
	printf("    %-30s %s\n", "protocol", protocol_name(dev));
	for (i = 0; verbose && i < n; i++)
		printf("    %-30s %lld\n", attrs[i].name, attrs[i].value);
	printf("    %-30s", "caps");
	for (c = 0; c < NCAPS; c++)
		if (caps[c].has(dev))
			printf(" %s", caps[c].name);
	printf("\n    %-30s %s\n", "dma",
	       ib_uses_virt_dma(dev) ? "virtual" :
	       dev->iommu	     ? "iommu" :
				       "physical");
}

static int print_one(struct ib_device *dev, void *arg)
{
	struct info_ctx *ctx = arg;

	if (ctx->device && strcmp(ctx->device, dev->name))
		return 0;
	if (ctx->json)
		print_json(&ctx->jw, dev);
	else
		print_text(dev, ctx->verbose);
	ctx->count++;
	return 0;
}

#define AT(f) CLI_FIELD(struct info_ctx, f)

/* The options, each once, in --help's order (tools/common/opts.h). */
static const struct cli_opt info_opts[] = {
	{ "ib-dev", 'd', CLI_STR, "NAME", "this device only", AT(device) },
	{ "verbose", 'v', CLI_FLAG, NULL,
	  "every attribute (the JSON has all), and the\n"
	  "library's info messages (-vv: debug)",
	  AT(verbose) },
	{ "json", 'j', CLI_FLAG, NULL, "JSON instead of text", AT(json) },
};

static const struct cli_tool info_cli = {
	.name = "rdmarw-info",
	.synopsis = "[-d NAME] [-v] [--json]",
	.about = "List RDMA devices and the attributes the R/W API uses.",
	CLI_OPTS(info_opts),
};

static int create_devices(struct soft_fabric *fabric, struct ib_device **devs)
{
	char name[32];
	size_t i;

	for (i = 0; i < NPROFILES; i++) {
		struct soft_profile p;
		int ret = soft_profile_get(profile_names[i], &p);

		if (ret)
			return ret;
		snprintf(name, sizeof(name), "soft_%s_%%d", profile_names[i]);
		devs[i] = soft_device_create(fabric, name, &p);
		if (IS_ERR(devs[i])) {
			ret = (int)PTR_ERR(devs[i]);
			devs[i] = NULL;
			return ret;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ib_device *devs[NPROFILES] = { 0 };
	struct info_ctx ctx = { 0 };
	struct soft_fabric *fabric;
	int i, ret;
	size_t d;

	i = cli_opts_parse(&info_cli, &ctx, argc, argv);
	if (i < argc)
		cli_refuse("rdmarw-info", "unexpected argument '%s'", argv[i]);
	fabric = soft_fabric_create();
	if (IS_ERR(fabric)) {
		fprintf(stderr, "rdmarw-info: no fabric: %s\n",
			cli_errno_name((int)PTR_ERR(fabric)));
		return 1;
	}
	ret = create_devices(fabric, devs);
	if (ret) {
		fprintf(stderr, "rdmarw-info: cannot create devices: %s\n",
			cli_errno_name(ret));
	} else {
#ifdef RDMARW_HAVE_IBV
		rdmarw_ibv_open_all();
#endif
		if (ctx.json) {
			jw_open(&ctx.jw, NULL, '{');
			jw_open(&ctx.jw, "devices", '[');
		}
		ib_device_foreach(print_one, &ctx);
		if (ctx.json) {
			jw_close(&ctx.jw, ']');
			jw_close(&ctx.jw, '}');
		}
		if (ctx.device && !ctx.count) {
			cli_warn(
				"rdmarw-info",
				"-d/--ib-dev '%s': no such device (rdmarw-info lists them)",
				ctx.device);
			ret = -ENODEV;
		}
	}
	for (d = 0; d < NPROFILES; d++)
		if (devs[d])
			soft_device_destroy(devs[d]);
	soft_fabric_destroy(fabric);
#ifdef RDMARW_HAVE_IBV
	rdmarw_ibv_close_all();
#endif
	return ret == -ENODEV && ctx.device ? 2 : ret ? 1 : 0;
}
