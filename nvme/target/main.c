// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet: an NVMe over Fabrics (RDMA) target on rdmarw devices.
 *
 *   rdmarw-nvmet [--device NAME] [--addr IP] [--port 4420]
 *                [--ram SIZE | --file PATH | --bdev PATH]...
 *                [--nqn NQN] [--config FILE] [--soft PROFILE] ...
 *
 * Options and the config file (key = value lines with the long option
 * names) are described in rdmarw-nvmet(8).  The program serves until
 * SIGINT or SIGTERM (or --duration), then disconnects every host and
 * exits 0; a bad option or config line exits 2 with a message that names
 * it, a target that cannot start exits 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rdmarw/ib_verbs.h>
#include <rdmarw/kernel.h>
#include <rdmarw/soft.h>
#include <rdmarw/version.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#endif

#include "config.h"
#include "log.h"
#include "notify.h"
#include "nvmet.h"

#define PROG "rdmarw-nvmet"
#define EXIT_USAGE 2

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;
static volatile sig_atomic_t stats_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGHUP: the main loop reads the configuration again (reload.c). */
static void on_sighup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

/* SIGUSR1: the main loop logs the counters (stats.c). */
static void on_sigusr1(int sig)
{
	(void)sig;
	stats_requested = 1;
}

/* --stats-file: rewritten whole (temporary file, rename). */
static void write_stats_file(struct nvmet_target *t, const char *path)
{
	int ret = nvmet_target_stats_write(t, path);

	if (ret)
		fprintf(stderr, PROG ": --stats-file %s: %s\n", path,
			strerror(-ret));
}

static int count_device(struct ib_device *dev, void *arg)
{
	(void)dev;
	(*(unsigned int *)arg)++;
	return 0;
}

/*
 * A wildcard address (0.0.0.0, ::) listens on every RDMA device: with
 * none it would serve nothing and say nothing.  The address, or NULL.
 */
static const char *wildcard_without_device(const struct nvmet_config *c)
{
	unsigned int devices = 0;
	const char *addr = NULL;
	u32 i;

	if (c->o.addr &&
	    (!strcmp(c->o.addr, "0.0.0.0") || !strcmp(c->o.addr, "::")))
		addr = c->o.addr;
	for (i = 0; !addr && i < c->o.nr_ports; i++)
		if (!strcmp(c->o.ports[i].addr, "0.0.0.0") ||
		    !strcmp(c->o.ports[i].addr, "::"))
			addr = c->o.ports[i].addr;
	if (!addr)
		return NULL;
	ib_device_foreach(count_device, &devices);
	return devices ? NULL : addr;
}

/* An error of the listener (the address or port), not of a namespace. */
static bool listen_error(int err)
{
	return err == EADDRNOTAVAIL || err == EADDRINUSE || err == ENODEV ||
	       err == EAFNOSUPPORT || err == EACCES;
}

/* --save-config FILE: the configuration as nvmetcli's JSON; 0 or 2. */
static int save_config(const struct nvmet_config *c)
{
	FILE *f = fopen(c->save_path, "w");
	int ret;

	if (!f) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": --save-config %s: %s",
			     c->save_path, strerror(errno));
		return EXIT_USAGE;
	}
	ret = nvmet_config_write_json(&c->o, f);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret) {
		unlink(c->save_path);
		return EXIT_USAGE;
	}
	return 0;
}

/* The start-up line of the hosts that must authenticate (DH-HMAC-CHAP). */
static void print_auth_hosts(const struct nvmet_target_opts *o)
{
	u32 i;

	if (!o->nr_host_keys) {
		printf(PROG ": no host authenticates (--dhchap-key)\n");
		return;
	}
	printf(PROG ": DH-HMAC-CHAP required of %u host%s:", o->nr_host_keys,
	       o->nr_host_keys == 1 ? "" : "s");
	for (i = 0; i < o->nr_host_keys; i++)
		printf(" %s%s", o->host_keys[i].nqn,
		       o->host_keys[i].dhchap_ctrl_key ? " (bidirectional)" :
							 "");
	printf("\n");
}

/* SIGHUP: the configuration read again and applied, or refused. */
static void do_reload(struct nvmet_target *t, const struct nvmet_config *c,
		      int argc, char **argv)
{
	char why[256];

	int ret;

	why[0] = '\0';
	nvmet_notify_reloading();
	ret = nvmet_config_reload(t, c, argc, argv, why, sizeof(why));
	if (!ret)
		fprintf(stderr, PROG ": configuration reloaded\n");
	/* a refusal was logged with its reason; the old one serves */
	nvmet_notify("READY=1\nSTATUS=%s%s", ret ? "reload refused: " : "",
		     ret ? why : "configuration reloaded");
}

int main(int argc, char **argv)
{
	struct soft_fabric *fabric = NULL;
	struct ib_device *dev = NULL;
	struct nvmet_target_stats st;
	struct nvmet_target *t;
	struct sigaction sa;
	struct nvmet_config c;
	const char *wildcard;
	int ret = 0;

	nvmet_log_init();
	nvmet_config_init(&c);
	ret = nvmet_config_args(&c, argc, argv);
	if (ret == NVMET_CONFIG_DONE) {
		ret = 0;
		goto out;
	}
	if (ret || nvmet_config_add_default_ns(&c)) {
		ret = EXIT_USAGE;
		goto out;
	}
	nvmet_log_max = c.log_level ? c.log_level :
			c.o.verbose ? NVMET_LOG_INFO :
				      NVMET_LOG_NOTICE;
	c.state_dir = getenv("STATE_DIRECTORY"); /* systemd's StateDirectory= */
	if (!c.state_dir || !*c.state_dir || strchr(c.state_dir, ':'))
		c.state_dir = NVMET_STATE_DIR;
	ret = nvmet_config_fill_ids(&c, NVMET_MACHINE_ID_PATH);
	if (ret) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": cannot derive identifiers: %s",
			     strerror(-ret));
		ret = 1;
		goto out;
	}
	if (c.save_path) {
		ret = save_config(&c);
		goto out;
	}
	if (c.soft && !c.o.addr)
		c.o.addr = "127.0.0.1";
	if (c.stats_interval && !c.stats_file) {
		fprintf(stderr, PROG ": --stats-interval needs --stats-file\n");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!c.o.addr && !c.o.nr_ports) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": --addr is required (--help)");
		ret = EXIT_USAGE;
		goto out;
	}

	if (c.soft) {
		struct soft_profile prof;
		struct sockaddr_storage ss;

		memset(&ss, 0, sizeof(ss));
		if (inet_pton(AF_INET, c.o.addr,
			      &((struct sockaddr_in *)&ss)->sin_addr) == 1)
			ss.ss_family = AF_INET;
		else if (inet_pton(AF_INET6, c.o.addr,
				   &((struct sockaddr_in6 *)&ss)->sin6_addr) ==
			 1)
			ss.ss_family = AF_INET6;
		fabric = soft_fabric_create();
		if (IS_ERR(fabric) || soft_profile_get(c.soft, &prof)) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": --soft %s: cannot create", c.soft);
			fabric = NULL;
			ret = 1;
			goto out;
		}
		prof.threaded = true;
		dev = soft_device_create(fabric, c.o.device, &prof);
		if (IS_ERR(dev)) {
			nvmet_printk(NVMET_LOG_ERR, PROG ": --soft %s: %s",
				     c.soft, strerror((int)-PTR_ERR(dev)));
			dev = NULL;
			ret = 1;
			goto out;
		}
		if (soft_device_add_addr(dev, (struct sockaddr *)&ss)) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": --soft: cannot give %s to %s",
				     c.o.addr, dev->name);
			ret = 1;
			goto out;
		}
		c.o.device = dev->name;
	} else {
#ifdef RDMARW_HAVE_IBV
		rdmarw_ibv_open_all();
#endif
	}

	if (c.random_ids)
		nvmet_printk(NVMET_LOG_WARNING,
			     PROG ": no machine ID in " NVMET_MACHINE_ID_PATH
				  " and none kept in %s: random namespace "
				  "identifiers and serial (--save-config "
				  "keeps them)",
			     c.state_dir);
	else if (strcmp(c.id_source, NVMET_MACHINE_ID_PATH))
		nvmet_printk(NVMET_LOG_NOTICE,
			     PROG ": no machine ID in " NVMET_MACHINE_ID_PATH
				  ": identifiers derived from %s (made once)",
			     c.id_source);
	wildcard = c.soft ? NULL : wildcard_without_device(&c);
	if (wildcard) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": cannot start: %s listens on every RDMA "
				  "device and there is none (rdmarw-info; "
				  "--soft for a software one)",
			     wildcard);
		ret = 1;
		goto out;
	}
	t = nvmet_target_create(&c.o);
	if (IS_ERR(t)) {
		/* a namespace's failure is named above: not the port's */
		if (c.o.nr_ports || !listen_error((int)-PTR_ERR(t)))
			nvmet_printk(NVMET_LOG_ERR, PROG ": cannot start: %s",
				     strerror((int)-PTR_ERR(t)));
		else
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": cannot start on %s port %u: %s",
				     c.o.addr, c.o.port ? c.o.port : 4420,
				     strerror((int)-PTR_ERR(t)));
		ret = 1;
		goto out;
	}
	if (c.o.nr_ports) {
		printf(PROG ": serving %u subsystem%s on %u port%s (JSON)\n",
		       c.o.nr_subsys, c.o.nr_subsys == 1 ? "" : "s",
		       c.o.nr_ports, c.o.nr_ports == 1 ? "" : "s");
		goto serve;
	}
	printf(PROG ": serving %s on %s port %u",
	       c.o.subnqn ? c.o.subnqn : NVMET_DEFAULT_SUBNQN, c.o.addr,
	       nvmet_target_port(t));
	if (c.soft)
		printf(" (software device %s)", c.o.device);
	printf(", %u namespace%s", c.nr_ns, c.nr_ns == 1 ? "" : "s");
	if (c.o.allow_any_host)
		printf(", any host may connect\n");
	else if (c.o.nr_hosts)
		printf(", %u allowed host%s\n", c.o.nr_hosts,
		       c.o.nr_hosts == 1 ? "" : "s");
	else
		printf(", no host allowed (--host, --allow-any-host)\n");
	if (c.soft && strcmp(c.soft, "siw-tcp"))
		printf(PROG ": (the software device serves hosts in this "
			    "process only)\n");
	else if (c.soft)
		printf(PROG ": (iWARP over TCP: hosts on other machines, the "
			    "kernel's siw among them)\n");
serve:
	print_auth_hosts(&c.o);
	fflush(stdout);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_sighup;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);
	/*
	 * Every port listens and SIGTERM stops it cleanly: a service manager
	 * may start what needs it (and stop it at once).
	 */
	nvmet_notify(
		"READY=1\nSTATUS=serving %u subsystem%s on %u port%s",
		c.o.nr_subsys ? c.o.nr_subsys : 1, c.o.nr_subsys > 1 ? "s" : "",
		c.o.nr_ports ? c.o.nr_ports : 1, c.o.nr_ports > 1 ? "s" : "");
	{
		struct timespec start, now, nap = { 0, 50 * 1000 * 1000 };
		time_t last_stats;

		clock_gettime(CLOCK_MONOTONIC, &start);
		last_stats = start.tv_sec;
		while (!stop_requested) {
			nanosleep(&nap, NULL);
			if (reload_requested) {
				reload_requested = 0;
				do_reload(t, &c, argc, argv);
			}
			if (stats_requested) {
				stats_requested = 0;
				nvmet_target_stats_log(t, stderr);
				if (c.stats_file)
					write_stats_file(t, c.stats_file);
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (c.stats_file && c.stats_interval &&
			    now.tv_sec - last_stats >= c.stats_interval) {
				last_stats = now.tv_sec;
				write_stats_file(t, c.stats_file);
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (c.duration > 0 &&
			    (double)(now.tv_sec - start.tv_sec) +
					    (double)(now.tv_nsec -
						     start.tv_nsec) /
						    1e9 >=
				    c.duration)
				break;
		}
	}
	nvmet_notify("STOPPING=1\nSTATUS=disconnecting every host");
	nvmet_target_get_stats(t, &st);
	nvmet_target_destroy(t);
	if (c.print_stats)
		printf(PROG
		       ": %llu controllers, %llu queues, %llu commands, "
		       "%llu errors, %llu keep-alive expiries, %llu rejects, "
		       "%llu waits for data buffers\n",
		       (unsigned long long)st.ctrls_created,
		       (unsigned long long)st.queues_created,
		       (unsigned long long)st.cmds,
		       (unsigned long long)st.errors,
		       (unsigned long long)st.kato_expired,
		       (unsigned long long)st.rejects,
		       (unsigned long long)st.data_waits);
	if (c.print_stats && c.o.poll_groups)
		printf(PROG ": poll groups slept %llu times, %llu of them "
			    "woken by a completion\n",
		       (unsigned long long)st.poll_sleeps,
		       (unsigned long long)st.poll_wakeups);
	printf(PROG ": stopped\n");
out:
	if (dev && soft_device_destroy(dev))
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": the software device is still busy");
	if (fabric)
		soft_fabric_destroy(fabric);
#ifdef RDMARW_HAVE_IBV
	if (!c.soft)
		rdmarw_ibv_close_all();
#endif
	nvmet_config_free(&c);
	return ret;
}
