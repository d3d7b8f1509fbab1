// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nvmetcli's JSON (/etc/nvmet/config.json) read as rdmarw-nvmet's
 * configuration: "subsystems" (nqn, allowed_hosts, attr.allow_any_host,
 * attr.serial, namespaces with nsid, enable and device: path, uuid,
 * nguid), "ports"
 * (portid, addr with trtype "rdma", adrfam, traddr, trsvcid, and the
 * subsystems' NQNs) and "hosts" (nqn, and dhchap: key, ctrl_key, hash,
 * dhgroup: a host with a key must authenticate).  What this target has no use for
 * (referrals, ana_groups, param, discovery) is ignored; what
 * it cannot serve (another trtype, a namespace id above 16) is refused
 * with a message naming it.  A small JSON parser of its own: bounded
 * size (1 MiB) and depth (16), ASCII strings (\u escapes below 0x80).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rdmarw/kernel.h>

#include "auth.h"
#include "config.h"
#include "log.h"
#include "nvme_ids.h"
#include "nvme_proto.h"

#define PROG "rdmarw-nvmet"
#define JSON_MAX_BYTES (1u << 20)
#define JSON_MAX_DEPTH 16

enum json_type { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
	enum json_type type;
	char *str; /* J_STR; the key's name in an object's member */
	double num;
	bool b;
	struct json *kids; /* J_ARR, J_OBJ */
	char **keys; /* J_OBJ */
	u32 nr;
};

struct json_parser {
	const char *p, *end;
	const char *path;
	int line;
};

static int json_err(struct json_parser *jp, const char *what)
{
	nvmet_printk(NVMET_LOG_ERR, PROG ": %s:%d: %s", jp->path, jp->line,
		     what);
	return -EINVAL;
}

static void json_skip(struct json_parser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
				   *jp->p == '\n' || *jp->p == '\r')) {
		if (*jp->p == '\n')
			jp->line++;
		jp->p++;
	}
}

static int json_value(struct json_parser *jp, struct json *v, int depth);

static int json_hex(const char *s)
{
	int i, v = 0;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A string at jp->p (the quote); *@out is the caller's to free. */
static int json_string(struct json_parser *jp, char **out)
{
	const char *s = ++jp->p;
	size_t n = 0;
	char *d;

	d = malloc((size_t)(jp->end - s) + 1);
	if (!d)
		return -ENOMEM;
	for (; jp->p < jp->end && *jp->p != '"'; jp->p++) {
		unsigned char c = (unsigned char)*jp->p;
		int u;

		if (c < 0x20 || c >= 0x7f)
			goto bad;
		if (c != '\\') {
			d[n++] = (char)c;
			continue;
		}
		if (++jp->p >= jp->end)
			goto bad;
		switch (*jp->p) {
		case '"':
		case '\\':
		case '/':
			d[n++] = *jp->p;
			break;
		case 'n':
			d[n++] = '\n';
			break;
		case 't':
			d[n++] = '\t';
			break;
		case 'u':
			if (jp->end - jp->p < 5)
				goto bad;
			u = json_hex(jp->p + 1);
			if (u <= 0 || u >= 0x80)
				goto bad;
			d[n++] = (char)u;
			jp->p += 4;
			break;
		default:
			goto bad;
		}
	}
	if (jp->p >= jp->end)
		goto bad;
	jp->p++;
	d[n] = '\0';
	*out = d;
	return 0;
bad:
	free(d);
	return json_err(jp, "bad JSON string (ASCII only)");
}

static void json_free(struct json *v)
{
	u32 i;

	if (!v)
		return;
	for (i = 0; i < v->nr; i++) {
		json_free(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

/* One more member (array element, or object member named @key). */
static struct json *json_push(struct json *v, char *key)
{
	struct json *kids;
	char **keys;

	kids = realloc(v->kids, (v->nr + 1) * sizeof(*kids));
	if (!kids)
		return NULL;
	v->kids = kids;
	if (v->type == J_OBJ) {
		keys = realloc(v->keys, (v->nr + 1) * sizeof(*keys));
		if (!keys)
			return NULL;
		v->keys = keys;
		keys[v->nr] = key;
	}
	memset(&kids[v->nr], 0, sizeof(*kids));
	return &kids[v->nr++];
}

static int json_container(struct json_parser *jp, struct json *v, int depth)
{
	char close = v->type == J_OBJ ? '}' : ']';
	int ret;

	jp->p++;
	json_skip(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct json *kid;

		json_skip(jp);
		if (v->type == J_OBJ) {
			if (jp->p >= jp->end || *jp->p != '"')
				return json_err(jp, "expected a member name");
			ret = json_string(jp, &key);
			if (ret)
				return ret;
			json_skip(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				free(key);
				return json_err(jp, "expected ':'");
			}
			jp->p++;
		}
		kid = json_push(v, key);
		if (!kid) {
			free(key);
			return -ENOMEM;
		}
		ret = json_value(jp, kid, depth + 1);
		if (ret)
			return ret;
		json_skip(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return json_err(jp, "expected ',' or the end of a list");
	}
}

static int json_value(struct json_parser *jp, struct json *v, int depth)
{
	char *end;

	if (depth > JSON_MAX_DEPTH)
		return json_err(jp, "JSON nested too deep");
	json_skip(jp);
	if (jp->p >= jp->end)
		return json_err(jp, "unexpected end of the JSON");
	switch (*jp->p) {
	case '{':
		v->type = J_OBJ;
		return json_container(jp, v, depth);
	case '[':
		v->type = J_ARR;
		return json_container(jp, v, depth);
	case '"':
		v->type = J_STR;
		return json_string(jp, &v->str);
	}
	if (jp->end - jp->p >= 4 && !strncmp(jp->p, "true", 4)) {
		v->type = J_BOOL;
		v->b = true;
		jp->p += 4;
		return 0;
	}
	if (jp->end - jp->p >= 5 && !strncmp(jp->p, "false", 5)) {
		v->type = J_BOOL;
		jp->p += 5;
		return 0;
	}
	if (jp->end - jp->p >= 4 && !strncmp(jp->p, "null", 4)) {
		v->type = J_NULL;
		jp->p += 4;
		return 0;
	}
	if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9')) {
		v->type = J_NUM;
		v->num = strtod(jp->p, &end); /* the buffer ends with a NUL */
		if (end == jp->p || end > jp->end)
			return json_err(jp, "bad JSON number");
		jp->p = end;
		return 0;
	}
	return json_err(jp, "not JSON");
}

static const struct json *json_get(const struct json *o, const char *key)
{
	u32 i;

	if (!o || o->type != J_OBJ)
		return NULL;
	for (i = 0; i < o->nr; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

static const char *json_str(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);

	return v && v->type == J_STR ? v->str : NULL;
}

/* nvmetcli writes attributes as strings ("1"), numbers as numbers. */
static bool json_true(const struct json *v)
{
	if (!v)
		return false;
	if (v->type == J_STR)
		return !strcmp(v->str, "1") || !strcmp(v->str, "true");
	if (v->type == J_NUM)
		return v->num != 0;
	return v->type == J_BOOL && v->b;
}

/* ---- nvmetcli's model ------------------------------------------------------ */

static const char *json_opt_str(const struct json *o, const char *key);

static int cfg_err(const char *path, const char *what, const char *name)
{
	nvmet_printk(NVMET_LOG_ERR, PROG ": %s: %s%s%s", path, what,
		     name ? ": " : "", name ? name : "");
	return -EINVAL;
}

/*
 * A UUID or NGUID as configfs shows them (%pUb: 8-4-4-4-12 hex digits),
 * or 32 hex digits; 0 or -EINVAL.
 */
static int json_parse_id(const char *s, u8 out[16])
{
	size_t len = s ? strlen(s) : 0, i, n = 0;

	if (len != 36 && len != 32)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char ch = s[i];
		int v;

		if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (ch != '-')
				return -EINVAL;
			continue;
		}
		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			v = ch - 'A' + 10;
		else
			return -EINVAL;
		if (n & 1)
			out[n / 2] = (u8)(out[n / 2] | v);
		else
			out[n / 2] = (u8)(v << 4);
		n++;
	}
	return 0;
}

/* device.uuid and device.nguid ("" or absent: derived). */
static int json_ns_ids(const char *path, const struct nvmet_subsys_opts *s,
		       const struct json *dev, struct nvmet_ns_opts *ns)
{
	const char *uuid = json_opt_str(dev, "uuid");
	const char *nguid = json_opt_str(dev, "nguid");

	if (uuid && json_parse_id(uuid, ns->uuid))
		return cfg_err(path, "namespace device.uuid is not a UUID",
			       s->nqn);
	if (nguid && json_parse_id(nguid, ns->nguid))
		return cfg_err(path, "namespace device.nguid is not 16 bytes",
			       s->nqn);
	return 0;
}

static int json_namespace(const char *path, struct nvmet_subsys_opts *s,
			  const struct json *n)
{
	const struct json *nsid = json_get(n, "nsid");
	const char *dev = json_str(json_get(n, "device"), "path");
	const struct json *enable = json_get(n, "enable");
	struct nvmet_ns_opts *ns;
	struct stat st;
	u32 id;

	if (!nsid || nsid->type != J_NUM || nsid->num < 1 ||
	    nsid->num > NVMET_MAX_NAMESPACES || nsid->num != (u32)nsid->num)
		return cfg_err(path, "namespace nsid not in 1..16", s->nqn);
	if (enable && !json_true(enable))
		return 0; /* disabled: not served */
	id = (u32)nsid->num;
	ns = &s->ns[id - 1];
	if (ns->type != NVMET_BACKEND_NONE)
		return cfg_err(path, "namespace nsid given twice", s->nqn);
	if (!dev || !dev[0])
		return cfg_err(path, "namespace without device.path", s->nqn);
	ns->path = dev;
	ns->type = !stat(dev, &st) && S_ISBLK(st.st_mode) ? NVMET_BACKEND_BDEV :
							    NVMET_BACKEND_FILE;
	return json_ns_ids(path, s, json_get(n, "device"), ns);
}

static int json_subsys(struct nvmet_config *c, const char *path,
		       const struct json *j)
{
	const struct json *attr = json_get(j, "attr");
	const struct json *hosts = json_get(j, "allowed_hosts");
	const struct json *nss = json_get(j, "namespaces");
	struct nvmet_subsys_opts *s;
	const char **h;
	u32 i;
	int ret;

	if (c->nr_subsys >= NVMET_MAX_SUBSYS)
		return cfg_err(path, "too many subsystems", NULL);
	s = &c->subsys[c->nr_subsys++];
	memset(s, 0, sizeof(*s));
	s->nqn = json_str(j, "nqn");
	if (!nvme_nqn_valid(s->nqn))
		return cfg_err(path, "subsystem without a valid nqn", NULL);
	s->serial = json_str(attr, "serial");
	s->allow_any_host = json_true(json_get(attr, "allow_any_host"));
	if (hosts && hosts->type == J_ARR && hosts->nr) {
		h = calloc(hosts->nr, sizeof(*h));
		if (!h)
			return -ENOMEM;
		c->json_hosts[c->nr_subsys - 1] = h;
		for (i = 0; i < hosts->nr; i++) {
			if (hosts->kids[i].type != J_STR)
				return cfg_err(path, "allowed_hosts holds NQNs",
					       s->nqn);
			h[i] = hosts->kids[i].str;
		}
		s->hosts = h;
		s->nr_hosts = hosts->nr;
	}
	for (i = 0; nss && nss->type == J_ARR && i < nss->nr; i++) {
		ret = json_namespace(path, s, &nss->kids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int json_port(struct nvmet_config *c, const char *path,
		     const struct json *j)
{
	const struct json *addr = json_get(j, "addr");
	const struct json *subs = json_get(j, "subsystems");
	const char *trtype = json_str(addr, "trtype");
	const char *svc = json_str(addr, "trsvcid");
	struct nvmet_port_opts *p;
	const char **names;
	unsigned long v;
	char *end;
	u32 i;

	if (c->nr_ports >= NVMET_MAX_PORTS)
		return cfg_err(path, "too many ports", NULL);
	if (!trtype || strcmp(trtype, "rdma"))
		return cfg_err(path, "port trtype is not rdma",
			       trtype ? trtype : "(none)");
	p = &c->ports[c->nr_ports++];
	memset(p, 0, sizeof(*p));
	p->addr = json_str(addr, "traddr");
	if (!p->addr)
		return cfg_err(path, "port without addr.traddr", NULL);
	if (svc) {
		v = strtoul(svc, &end, 10);
		if (!*svc || *end || !v || v > 65535)
			return cfg_err(path, "bad addr.trsvcid", svc);
		p->port = (u16)v;
	}
	if (!subs || subs->type != J_ARR || !subs->nr)
		return cfg_err(path, "port lists no subsystem", p->addr);
	names = calloc(subs->nr, sizeof(*names));
	if (!names)
		return -ENOMEM;
	c->json_port_subsys[c->nr_ports - 1] = names;
	for (i = 0; i < subs->nr; i++) {
		if (subs->kids[i].type != J_STR)
			return cfg_err(path, "port subsystems are NQNs",
				       p->addr);
		names[i] = subs->kids[i].str;
	}
	p->subsys = names;
	p->nr_subsys = subs->nr;
	return 0;
}

/* "" is nvmetcli's unset attribute. */
static const char *json_opt_str(const struct json *o, const char *key)
{
	const char *v = json_str(o, key);

	return v && v[0] ? v : NULL;
}

static bool json_key_valid(const char *secret)
{
	struct nvme_dhchap_key k;
	int ret;

	if (!secret)
		return true;
	ret = nvme_auth_parse_key(secret, &k);
	nvme_auth_wipe(&k, sizeof(k));
	return !ret;
}

/* The keys parse, the hash and group are known (secrets not echoed). */
static int json_host_check(const char *path, const struct nvmet_host_opts *h)
{
	if (!json_key_valid(h->dhchap_key))
		return cfg_err(path, "dhchap key is not a DHHC-1 key", h->nqn);
	if (!json_key_valid(h->dhchap_ctrl_key))
		return cfg_err(path, "dhchap ctrl_key is not a DHHC-1 key",
			       h->nqn);
	if (h->dhchap_hash &&
	    nvme_auth_hmac_id(h->dhchap_hash) == NVME_AUTH_HASH_INVALID)
		return cfg_err(path, "unknown dhchap hash", h->dhchap_hash);
	if (h->dhchap_dhgroup && nvme_auth_dhgroup_id(h->dhchap_dhgroup) ==
					 NVME_AUTH_DHGROUP_INVALID)
		return cfg_err(path, "unknown dhchap dhgroup",
			       h->dhchap_dhgroup);
	return 0;
}

/* hosts[i]: a host with dhchap.key goes into the DH-HMAC-CHAP table. */
static int json_host(struct nvmet_config *c, const char *path,
		     const struct json *j)
{
	const struct json *d = json_get(j, "dhchap");
	struct nvmet_host_opts *h;
	const char *nqn = json_str(j, "nqn");

	if (!nqn || !nvme_nqn_valid(nqn))
		return cfg_err(path, "a host without a valid nqn", NULL);
	if (d && d->type != J_OBJ)
		return cfg_err(path, "dhchap is not an object", nqn);
	if (!json_opt_str(d, "key")) {
		if (json_opt_str(d, "ctrl_key"))
			return cfg_err(path, "dhchap ctrl_key without key",
				       nqn);
		return 0;
	}
	if (c->o.nr_host_keys >= NVMET_MAX_HOSTS)
		return cfg_err(path, "too many hosts with dhchap keys", NULL);
	h = &c->host_keys[c->o.nr_host_keys++];
	h->nqn = nqn;
	h->dhchap_key = json_opt_str(d, "key");
	h->dhchap_ctrl_key = json_opt_str(d, "ctrl_key");
	h->dhchap_hash = json_opt_str(d, "hash");
	h->dhchap_dhgroup = json_opt_str(d, "dhgroup");
	c->o.host_keys = c->host_keys;
	return json_host_check(path, h);
}

static int json_apply(struct nvmet_config *c, const char *path,
		      const struct json *root)
{
	const struct json *hosts = json_get(root, "hosts");
	const struct json *subs = json_get(root, "subsystems");
	const struct json *ports = json_get(root, "ports");
	u32 i;
	int ret;

	if (!root || root->type != J_OBJ)
		return cfg_err(path, "not an nvmetcli configuration", NULL);
	if (!subs || subs->type != J_ARR || !subs->nr)
		return cfg_err(path, "no subsystems", NULL);
	if (!ports || ports->type != J_ARR || !ports->nr)
		return cfg_err(path, "no ports", NULL);
	for (i = 0; i < subs->nr; i++) {
		ret = json_subsys(c, path, &subs->kids[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < ports->nr; i++) {
		ret = json_port(c, path, &ports->kids[i]);
		if (ret)
			return ret;
	}
	for (i = 0; hosts && hosts->type == J_ARR && i < hosts->nr; i++) {
		ret = json_host(c, path, &hosts->kids[i]);
		if (ret)
			return ret;
	}
	c->o.subsys = c->subsys;
	c->o.nr_subsys = c->nr_subsys;
	c->o.ports = c->ports;
	c->o.nr_ports = c->nr_ports;
	return 0;
}

int nvmet_config_read_json(struct nvmet_config *c, const char *path,
			   const char *text, size_t len)
{
	struct json_parser jp = { text, text + len, path, 1 };
	struct json *root;
	int ret;

	if (len > JSON_MAX_BYTES)
		return cfg_err(path, "larger than 1 MiB", NULL);
	if (c->json)
		return cfg_err(path, "a second JSON configuration", NULL);
	root = calloc(1, sizeof(*root));
	if (!root)
		return -ENOMEM;
	c->json = root;
	ret = json_value(&jp, root, 0);
	if (ret)
		return ret;
	json_skip(&jp);
	if (jp.p != jp.end)
		return json_err(&jp, "text after the JSON value");
	return json_apply(c, path, root);
}

void nvmet_config_free_json(struct nvmet_config *c)
{
	u32 i;

	for (i = 0; i < NVMET_MAX_SUBSYS; i++)
		free(c->json_hosts[i]);
	for (i = 0; i < NVMET_MAX_PORTS; i++)
		free(c->json_port_subsys[i]);
	json_free(c->json);
	free(c->json);
	c->json = NULL;
}

/* ---- writing nvmetcli's JSON ------------------------------------------------- */

/* @s as a JSON string (the options' strings are printable ASCII). */
static void json_put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void json_put_strs(FILE *f, const char *const *v, u32 n)
{
	u32 i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : " ", f);
		json_put_str(f, v[i]);
	}
	fputs(n ? " ]" : "]", f);
}

static bool json_id_set(const u8 *id)
{
	static const u8 none[16];

	return memcmp(id, none, sizeof(none)) != 0;
}

/* A UUID or NGUID as nvmetcli writes it (configfs' %pUb). */
static void json_put_id(FILE *f, const u8 *id)
{
	int i;

	fputc('"', f);
	for (i = 0; i < 16; i++)
		fprintf(f, "%s%02x",
			i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
			id[i]);
	fputc('"', f);
}

static void json_put_subsys(FILE *f, const struct nvmet_subsys_opts *s,
			    bool last)
{
	bool first = true;
	u32 i;

	fputs("    {\n      \"allowed_hosts\": ", f);
	json_put_strs(f, s->hosts, s->nr_hosts);
	fprintf(f, ",\n      \"attr\": {\n        \"allow_any_host\": \"%d\"",
		s->allow_any_host ? 1 : 0);
	if (s->serial) {
		fputs(",\n        \"serial\": ", f);
		json_put_str(f, s->serial);
	}
	fputs("\n      },\n      \"namespaces\": [", f);
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		if (s->ns[i].type == NVMET_BACKEND_NONE)
			continue;
		fputs(first ? "\n" : ",\n", f);
		first = false;
		fputs("        {\n          \"device\": {\n", f);
		if (json_id_set(s->ns[i].nguid)) {
			fputs("            \"nguid\": ", f);
			json_put_id(f, s->ns[i].nguid);
			fputs(",\n", f);
		}
		fputs("            \"path\": ", f);
		json_put_str(f, s->ns[i].path);
		if (json_id_set(s->ns[i].uuid)) {
			fputs(",\n            \"uuid\": ", f);
			json_put_id(f, s->ns[i].uuid);
		}
		fprintf(f,
			"\n          },\n          \"enable\": 1,\n"
			"          \"nsid\": %u\n        }",
			i + 1);
	}
	fputs(first ? "],\n      \"nqn\": " : "\n      ],\n      \"nqn\": ", f);
	json_put_str(f, s->nqn);
	fprintf(f, "\n    }%s\n", last ? "" : ",");
}

static void json_put_port(FILE *f, const struct nvmet_port_opts *p,
			  const struct nvmet_subsys_opts *subs, u32 nr_subs,
			  u32 portid, bool last)
{
	const char *all[NVMET_MAX_SUBSYS];
	u32 i;

	fputs("    {\n      \"addr\": {\n        \"adrfam\": ", f);
	json_put_str(f, strchr(p->addr, ':') ? "ipv6" : "ipv4");
	fputs(",\n        \"traddr\": ", f);
	json_put_str(f, p->addr);
	fprintf(f,
		",\n        \"treq\": \"not specified\",\n"
		"        \"trsvcid\": \"%u\",\n        \"trtype\": \"rdma\"\n"
		"      },\n      \"portid\": %u,\n      \"referrals\": [],\n"
		"      \"subsystems\": ",
		p->port ? p->port : NVMF_RDMA_DEFAULT_PORT, portid);
	if (p->nr_subsys) {
		json_put_strs(f, p->subsys, p->nr_subsys);
	} else {
		for (i = 0; i < nr_subs; i++)
			all[i] = subs[i].nqn;
		json_put_strs(f, all, nr_subs);
	}
	fprintf(f, "\n    }%s\n", last ? "" : ",");
}

/* Was host @k of subsystem @i listed before (each host is written once)? */
static bool json_host_before(const struct nvmet_subsys_opts *subs, u32 i, u32 k)
{
	u32 a, b;

	for (a = 0; a <= i; a++)
		for (b = 0; b < (a == i ? k : subs[a].nr_hosts); b++)
			if (!strcmp(subs[a].hosts[b], subs[i].hosts[k]))
				return true;
	return false;
}

static const struct nvmet_host_opts *
json_host_key(const struct nvmet_target_opts *o, const char *nqn)
{
	u32 i;

	for (i = 0; o->host_keys && i < o->nr_host_keys; i++)
		if (o->host_keys[i].nqn && !strcmp(o->host_keys[i].nqn, nqn))
			return &o->host_keys[i];
	return NULL;
}

/* One hosts[] entry, with its dhchap object when it has a key. */
static void json_put_host(FILE *f, const struct nvmet_target_opts *o,
			  const char *nqn, bool first)
{
	const struct nvmet_host_opts *h = json_host_key(o, nqn);

	fputs(first ? "\n    { \"nqn\": " : ",\n    { \"nqn\": ", f);
	json_put_str(f, nqn);
	if (h) {
		fputs(", \"dhchap\": { \"key\": ", f);
		json_put_str(f, h->dhchap_key);
		fputs(", \"ctrl_key\": ", f);
		json_put_str(f, h->dhchap_ctrl_key ? h->dhchap_ctrl_key : "");
		fputs(", \"hash\": ", f);
		json_put_str(f,
			     h->dhchap_hash ? h->dhchap_hash : "hmac(sha256)");
		fputs(", \"dhgroup\": ", f);
		json_put_str(f, h->dhchap_dhgroup ? h->dhchap_dhgroup : "null");
		fputs(" }", f);
	}
	fputs(" }", f);
}

/* Is @nqn one of the subsystems' allowed hosts? */
static bool json_host_listed(const struct nvmet_subsys_opts *subs, u32 nr,
			     const char *nqn)
{
	u32 i, k;

	for (i = 0; i < nr; i++)
		for (k = 0; k < subs[i].nr_hosts; k++)
			if (!strcmp(subs[i].hosts[k], nqn))
				return true;
	return false;
}

int nvmet_config_write_json(const struct nvmet_target_opts *o, FILE *f)
{
	struct nvmet_subsys_opts quick_s;
	struct nvmet_port_opts quick_p;
	const struct nvmet_subsys_opts *subs = o->subsys;
	const struct nvmet_port_opts *ports = o->ports;
	u32 nr_subs = o->nr_subsys, nr_ports = o->nr_ports, i, j;

	if (!nr_subs) {
		memset(&quick_s, 0, sizeof(quick_s));
		quick_s.nqn = o->subnqn ? o->subnqn : NVMET_DEFAULT_SUBNQN;
		quick_s.serial = o->serial;
		memcpy(quick_s.ns, o->ns, sizeof(quick_s.ns));
		quick_s.hosts = o->hosts;
		quick_s.nr_hosts = o->nr_hosts;
		quick_s.allow_any_host = o->allow_any_host;
		subs = &quick_s;
		nr_subs = 1;
	}
	if (!nr_ports) {
		memset(&quick_p, 0, sizeof(quick_p));
		quick_p.addr = o->addr;
		quick_p.port = o->port;
		ports = &quick_p;
		nr_ports = 1;
	}
	for (i = 0; i < nr_subs; i++)
		for (j = 0; j < NVMET_MAX_NAMESPACES; j++)
			if (subs[i].ns[j].type == NVMET_BACKEND_RAM) {
				nvmet_printk(NVMET_LOG_ERR,
					     PROG
					     ": %s: namespace %u is in memory: "
					     "nvmetcli has no such device",
					     subs[i].nqn, j + 1);
				return -EINVAL;
			}
	for (i = 0; i < nr_ports; i++)
		if (!ports[i].addr) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": a port without an address");
			return -EINVAL;
		}
	fputs("{\n  \"hosts\": [", f);
	for (i = 0, j = 0; i < nr_subs; i++) {
		u32 k;

		for (k = 0; k < subs[i].nr_hosts; k++) {
			if (json_host_before(subs, i, k))
				continue;
			json_put_host(f, o, subs[i].hosts[k], !j++);
		}
	}
	for (i = 0; o->host_keys && i < o->nr_host_keys; i++) {
		const char *nqn = o->host_keys[i].nqn;

		if (nqn && !json_host_listed(subs, nr_subs, nqn))
			json_put_host(f, o, nqn, !j++);
	}
	fputs(j ? "\n  ],\n  \"ports\": [\n" : "],\n  \"ports\": [\n", f);
	for (i = 0; i < nr_ports; i++)
		json_put_port(f, &ports[i], subs, nr_subs, i + 1,
			      i + 1 == nr_ports);
	fputs("  ],\n  \"subsystems\": [\n", f);
	for (i = 0; i < nr_subs; i++)
		json_put_subsys(f, &subs[i], i + 1 == nr_subs);
	fputs("  ]\n}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- the reader for other readers (the stats tests) ---------------------- */

int nvmet_json_parse(const char *text, size_t len, struct json **out)
{
	struct json_parser jp = { text, text + len, "json", 1 };
	struct json *root;
	int ret;

	*out = NULL;
	if (len > JSON_MAX_BYTES)
		return -EINVAL;
	root = calloc(1, sizeof(*root));
	if (!root)
		return -ENOMEM;
	ret = json_value(&jp, root, 0);
	if (!ret) {
		json_skip(&jp);
		if (jp.p != jp.end)
			ret = json_err(&jp, "text after the JSON value");
	}
	if (ret) {
		nvmet_json_free(root);
		return ret;
	}
	*out = root;
	return 0;
}

void nvmet_json_free(struct json *v)
{
	if (!v)
		return;
	json_free(v);
	free(v);
}

const struct json *nvmet_json_get(const struct json *o, const char *key)
{
	return json_get(o, key);
}

u32 nvmet_json_len(const struct json *a)
{
	return a && (a->type == J_ARR || a->type == J_OBJ) ? a->nr : 0;
}

const struct json *nvmet_json_at(const struct json *a, u32 i)
{
	return i < nvmet_json_len(a) ? &a->kids[i] : NULL;
}

const char *nvmet_json_string(const struct json *v)
{
	return v && v->type == J_STR ? v->str : NULL;
}

int nvmet_json_u64(const struct json *v, u64 *out)
{
	if (!v || v->type != J_NUM || v->num < 0 ||
	    v->num > 9007199254740992.0 || v->num != (double)(u64)v->num)
		return -EINVAL;
	*out = (u64)v->num;
	return 0;
}
