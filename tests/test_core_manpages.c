// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The generated man pages (docs/kdoc2man): every public function of
 * include/rdmarw/ has a well-formed page, man renders each without a
 * warning, and the converter refuses undocumented functions and parameters.
 *
 * The list of public functions is found here independently of kdoc2man (a
 * line-based scan of the headers), so a parser bug in the converter that
 * drops a declaration shows up as a missing page.  The build's pages are in
 * section 3rdmarw (docs/CMakeLists.txt); internal rdmarw__ names get none,
 * documented or not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* snprintf into an array, failing the test instead of truncating. */
#define fmt(buf, ...)                                                 \
	assert_true((size_t)snprintf(buf, sizeof(buf), __VA_ARGS__) < \
		    sizeof(buf))

static char src_dir[PATH_MAX]; /* the project's source tree */
static char man_dir[PATH_MAX]; /* <build>/docs/man3 */
#define SECTION "3rdmarw" /* the build's pages: NAME.3rdmarw */
static char kdoc2man[PATH_MAX]; /* <build>/docs/kdoc2man */
static char tmp_dir[PATH_MAX];

static void cut_dirs(char *path, int n)
{
	while (n--) {
		char *slash = strrchr(path, '/');

		assert_non_null(slash);
		*slash = '\0';
	}
}

static int find_paths(void **state)
{
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || __FILE__[0] != '/')
		return -1;
	exe[n] = '\0';
	cut_dirs(exe, 2); /* <build>/tests/test_core_manpages */
	fmt(man_dir, "%s/docs/man3", exe);
	fmt(kdoc2man, "%s/docs/kdoc2man", exe);
	fmt(src_dir, "%s", __FILE__);
	cut_dirs(src_dir, 2); /* <src>/tests/test_core_manpages.c */
	fmt(tmp_dir, "/tmp/rdmarw-manpages-XXXXXX");
	if (!mkdtemp(tmp_dir))
		return -1;
	fmt(exe, "%s/ex", tmp_dir);
	return mkdir(exe, 0777);
}

static int remove_tmp(void **state)
{
	char cmd[PATH_MAX + 16];

	fmt(cmd, "rm -rf '%s'", tmp_dir);
	return system(cmd) ? -1 : 0;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Run a shell command; collect its stdout and stderr; return its status. */
static int run(const char *cmd, char **out, char **err)
{
	char full[4 * PATH_MAX], o[PATH_MAX], e[PATH_MAX];
	int st;

	fmt(o, "%s/out", tmp_dir);
	fmt(e, "%s/err", tmp_dir);
	fmt(full, "%s >'%s' 2>'%s'", cmd, o, e);
	st = system(full);
	assert_true(WIFEXITED(st));
	*out = read_all(o);
	*err = read_all(e);
	assert_non_null(*out);
	assert_non_null(*err);
	return WEXITSTATUS(st);
}

/* ---- the independent list of public functions ---------------------------- */

struct fn {
	char name[128];
	char header[64];
};

static struct fn fns[512];
static size_t nfns;

static void scan_header(const char *dir, const char *file, regex_t *re)
{
	char path[PATH_MAX], line[1024];
	bool in_comment = false, in_macro = false;
	regmatch_t m[3];
	FILE *f;

	fmt(path, "%s/%s", dir, file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		bool cont = strlen(line) > 1 && line[strlen(line) - 2] == '\\';

		if (in_comment) {
			in_comment = !strstr(line, "*/");
			continue;
		}
		if (in_macro || line[0] == '#') {
			in_macro = cont;
			continue;
		}
		if (!strncmp(line, "/*", 2)) {
			in_comment = !strstr(line, "*/");
			continue;
		}
		if (regexec(re, line, 3, m, 0))
			continue;
		size_t n = (size_t)(m[2].rm_eo - m[2].rm_so);
		struct fn *fn = &fns[nfns++];

		assert_true(nfns < sizeof(fns) / sizeof(fns[0]));
		assert_true(n < sizeof(fn->name));
		memcpy(fn->name, line + m[2].rm_so, n);
		fn->name[n] = '\0';
		snprintf(fn->header, sizeof(fn->header), "%s", file);
		if (!strncmp(fn->name, "rdmarw__", 8) || fn->name[0] == '_')
			nfns--; /* internal */
	}
	fclose(f);
}

/* Declarations and inline definitions start in column 0, kernel style. */
static void scan_public_functions(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	regex_t re;
	DIR *d;

	assert_int_equal(regcomp(&re,
				 "^(static inline )?[A-Za-z_][A-Za-z0-9_ ]*"
				 "[ *]([a-z_][A-Za-z0-9_]*)\\(",
				 REG_EXTENDED),
			 0);
	fmt(dir, "%s/include/rdmarw", src_dir);
	d = opendir(dir);
	assert_non_null(d);
	nfns = 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		/* compat.h is kernel vocabulary, not rdmarw API (docs/). */
		if (n < 3 || strcmp(de->d_name + n - 2, ".h") ||
		    !strcmp(de->d_name, "compat.h"))
			continue;
		scan_header(dir, de->d_name, &re);
	}
	closedir(d);
	regfree(&re);
}

static const char *find_after(const char *hay, const char *needle,
			      const char *page)
{
	const char *p = strstr(hay, needle);

	if (!p)
		fail_msg("%s: no \"%s\"", page, needle);
	return p + strlen(needle);
}

/* The sections of a function page, in order. */
static void check_function_page(const struct fn *fn)
{
	char path[PATH_MAX], want[512];
	char *page;
	const char *p;

	fmt(path, "%s/%s." SECTION, man_dir, fn->name);
	page = read_all(path);
	if (!page)
		fail_msg("%s (from %s) has no man page %s", fn->name,
			 fn->header, path);
	fmt(want, "\n.TH \"%s\" " SECTION " ", fn->name);
	p = find_after(page, want, path);
	p = find_after(p, "\n.SH NAME\n", path);
	fmt(want, "%s \\- ", fn->name);
	if (strncmp(p, want, strlen(want)))
		fail_msg("%s: NAME line does not start with \"%s\"", path,
			 want);
	p = find_after(p, "\n.SH SYNOPSIS\n", path);
	fmt(want, ".B \"#include <rdmarw/%s>\"", fn->header);
	p = find_after(p, want, path);
	fmt(want, "%s(", fn->name);
	p = find_after(p, want, path);
	p = find_after(p, "\n.SH ARGUMENTS\n", path);
	p = find_after(p, "\n.SH DESCRIPTION\n", path);
	p = find_after(p, "\n.SH RETURN\n", path);
	find_after(p, "\n.SH SEE ALSO\n.BR ", path);
	free(page);
}

static void every_public_function_has_a_page(void **state)
{
	size_t i;

	scan_public_functions();
	/* The headers hold far more than this; a scan that finds fewer is
	 * broken, not successful. */
	assert_true(nfns >= 80);
	for (i = 0; i < nfns; i++)
		check_function_page(&fns[i]);
}

/* ---- every page ---------------------------------------------------------- */

struct pages {
	char names[1024][128];
	size_t n;
};

static void list_pages(struct pages *pg)
{
	struct dirent *de;
	DIR *d = opendir(man_dir);

	assert_non_null(d);
	pg->n = 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		/* every page is in the section, none of an internal name */
		if (n < sizeof(SECTION) + 1 ||
		    strcmp(de->d_name + n - sizeof(SECTION), "." SECTION))
			fail_msg("%s: not a ." SECTION " page", de->d_name);
		if (!strncmp(de->d_name, "rdmarw__", 8))
			fail_msg("%s: a page of an internal name", de->d_name);
		assert_true(pg->n < 1024 && n < 128);
		strcpy(pg->names[pg->n++], de->d_name);
	}
	closedir(d);
	assert_true(pg->n >= 80);
}

static void every_page_is_well_formed(void **state)
{
	static struct pages pg;
	char path[PATH_MAX];
	size_t i;

	list_pages(&pg);
	for (i = 0; i < pg.n; i++) {
		char *page;
		const char *p;

		fmt(path, "%s/%s", man_dir, pg.names[i]);
		page = read_all(path);
		assert_non_null(page);
		p = find_after(page, "\n.TH \"", path);
		p = find_after(p, "\" " SECTION " ", path);
		p = find_after(p, "\n.SH NAME\n", path);
		find_after(p, " \\- ", path);
		p = find_after(p, "\n.SH SYNOPSIS\n.nf\n", path);
		p = find_after(p, "\n.fi\n", path);
		find_after(p, "\n.SH DESCRIPTION\n", path);
		free(page);
	}
}

static bool have(const char *prog)
{
	char cmd[128];

	fmt(cmd, "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

/*
 * Render one page with man (all groff warnings on) and, when groff is
 * there, with groff alone; return what they said on stderr.
 */
static char *render(const char *path, char **out)
{
	char cmd[2 * PATH_MAX], *err, *gout, *gerr;
	int st;

	fmt(cmd, "MANWIDTH=80 MANPAGER=cat PAGER=cat man --warnings=w -l '%s'",
	    path);
	st = run(cmd, out, &err);
	if (st)
		fail_msg("man -l %s: status %d: %s", path, st, err);
	if (!have("groff"))
		return err;
	fmt(cmd, "groff -man -Tutf8 -ww -z '%s'", path);
	assert_int_equal(run(cmd, &gout, &gerr), 0);
	err = realloc(err, strlen(err) + strlen(gerr) + 1);
	assert_non_null(err);
	strcat(err, gerr);
	free(gout);
	free(gerr);
	return err;
}

static void man_renders_every_page_without_warnings(void **state)
{
	static struct pages pg;
	char path[PATH_MAX];
	char *out, *err;
	size_t i;

	if (!have("man"))
		skip();
	/* The check itself: a page with an unknown request is reported. */
	fmt(path, "%s/bad.3", tmp_dir);
	write_file(path, ".TH bad 3\n.SH NAME\nbad \\- bad\n.XX oops\n");
	err = render(path, &out);
	assert_non_null(strstr(err, "XX"));
	free(out);
	free(err);

	list_pages(&pg);
	for (i = 0; i < pg.n; i++) {
		fmt(path, "%s/%s", man_dir, pg.names[i]);
		err = render(path, &out);
		if (*err)
			fail_msg("%s: %s", pg.names[i], err);
		/* The rendered page has its sections, not raw requests. */
		assert_non_null(strstr(out, "NAME"));
		assert_non_null(strstr(out, "SYNOPSIS"));
		assert_null(strstr(out, ".SH"));
		free(out);
		free(err);
	}
}

/* ---- the converter's own rules ------------------------------------------- */

/* Run kdoc2man on one header holding @text; return its exit status. */
static int convert(const char *text, const char *opts, char **out, char **err)
{
	char hdr[PATH_MAX], cmd[4 * PATH_MAX];

	fmt(hdr, "%s/ex/t.h", tmp_dir);
	write_file(hdr, text);
	fmt(cmd, "'%s' %s '%s'", kdoc2man, opts, hdr);
	return run(cmd, out, err);
}

static void expect_refused(const char *text, const char *message)
{
	char *out, *err;

	assert_int_equal(convert(text, "", &out, &err), 1);
	if (!strstr(err, message))
		fail_msg("expected \"%s\" in:\n%s", message, err);
	assert_non_null(strstr(err, "t.h:"));
	free(out);
	free(err);
}

static void converter_refuses_missing_documentation(void **state)
{
	expect_refused("int f(int a);\n",
		       "public function 'f' has no kernel-doc comment");
	expect_refused("/* not kernel-doc */\n"
		       "static inline int f(void)\n{\n\treturn 0;\n}\n",
		       "public function 'f' has no kernel-doc comment");
	expect_refused("/**\n * f() - g\n * @a: one\n *\n * Return: 0.\n */\n"
		       "int f(int a,\n      int b);\n",
		       "parameter 'b' of 'f' is not documented");
	expect_refused("/**\n * f() - g\n * @fn: callback\n */\n"
		       "void f(int (*fn)(int x), void *arg);\n",
		       "parameter 'arg' of 'f' is not documented");
	expect_refused("/**\n * f() - g\n * @a: one\n * @c: none\n */\n"
		       "void f(int a);\n",
		       "'f' documents '@c', which is not a parameter");
	expect_refused("/**\n * f() - g\n * @a: one\n */\nint f(int a);\n",
		       "'f' returns a value but has no \"Return:\" section");
	expect_refused("/**\n * g() - g\n */\nvoid f(void);\n",
		       "kernel-doc comment for 'g' is followed by the "
		       "declaration of 'f'");
	expect_refused("/**\n * f() - g\n */\n",
		       "kernel-doc comment for 'f' is not followed by its "
		       "declaration");
	expect_refused("/**\n * f()\n */\nvoid f(void);\n",
		       "'f' has no short description");
	expect_refused("/**\n * f() - a\n */\nvoid f(void);\n"
		       "/**\n * f() - b\n */\nvoid f(void);\n",
		       "'f' is documented again");
}

static void converter_accepts_internal_and_undocumented_types(void **state)
{
	char *out, *err;

	/* Internal names, structs, typedefs and macros need no comment. */
	assert_int_equal(convert("void rdmarw__helper(int a);\n"
				 "struct s { int a; };\n"
				 "typedef void (*cb_t)(int x);\n"
				 "#define M(x) ((x) + 1)\n"
				 "struct fwd;\n",
				 "-l", &out, &err),
			 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	free(out);
	free(err);
}

static const char valid_header[] =
	"/* SPDX */\n"
	"#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
	"/**\n"
	" * DOC: Overview\n"
	" * Not tied to a declaration.\n"
	" */\n"
	"/**\n"
	" * struct ex_obj - an object\n"
	" * @a: first\n"
	" * @cb: callback\n"
	" */\n"
	"struct ex_obj {\n"
	"\tint a; /* trailing comment */\n"
	"\t/** @cb: inline member doc */\n"
	"\tvoid (*cb)(int x);\n"
	"};\n"
	"/**\n"
	" * enum ex_mode - modes\n"
	" * @EX_A: mode a\n"
	" */\n"
	"enum ex_mode { EX_A };\n"
	"/**\n"
	" * typedef ex_cb_t - a callback type\n"
	" */\n"
	"typedef int (*ex_cb_t)(void *arg);\n"
	"/**\n"
	" * ex_walk() - walk the objects, with a purpose\n"
	" *     that goes on\n"
	" * @obj: the object; see &struct ex_obj\n"
	" * @fn: called per object,\n"
	" *      with @arg\n"
	" * @arg: passed to @fn\n"
	" * @names: an array\n"
	" * @fmt: a format\n"
	" * @...: its arguments\n"
	" *\n"
	" * Walks, unlike ex_other(), and never returns %NULL.\n"
	" *\n"
	" * - first point\n"
	" * - second point\n"
	" *\n"
	" * Context: any thread.\n"
	" * RETURNS: 0, or -EINVAL.\n"
	" *\n"
	" * And a second paragraph.\n"
	" * Note: \\\\ and .dot are escaped.\n"
	" */\n"
	"int ex_walk(struct ex_obj *obj, int (*fn)(struct ex_obj *, void *),\n"
	"\t    void *arg, const char *names[4], const char *fmt, ...)\n"
	"\t__attribute__((format(printf, 5, 6)));\n"
	"/**\n"
	" * ex_other - no parentheses, no parameters\n"
	" */\n"
	"static inline void ex_other(void)\n"
	"{\n"
	"\tstruct { int x; } y = { 0 }; (void)y; \"}\";\n"
	"}\n"
	"/**\n"
	" * EX_MACRO() - a macro\n"
	" * @x: value\n"
	" */\n"
	"#define EX_MACRO(x) \\\n\t((x) + 1)\n"
	"#ifdef __cplusplus\n}\n#endif\n";

static void converter_renders_valid_kernel_doc(void **state)
{
	char dir[PATH_MAX], opts[PATH_MAX + 8], path[PATH_MAX];
	char *out, *err, *page;

	fmt(dir, "%s/man", tmp_dir);
	assert_int_equal(mkdir(dir, 0777), 0);
	/* A page of an earlier run is removed; a foreign file is kept. */
	fmt(path, "%s/stale.3", dir);
	write_file(path, ".\\\" Generated by kdoc2man from x.h\n");
	fmt(path, "%s/foreign.3", dir);
	write_file(path, ".TH foreign 3\n");
	fmt(opts, "-l -s 'ex 1.0' -o '%s'", dir);
	if (convert(valid_header, opts, &out, &err))
		fail_msg("kdoc2man failed:\n%s", err);
	assert_string_equal(err, "");
	assert_string_equal(out, "struct_ex_obj\nenum_ex_mode\n"
				 "typedef_ex_cb_t\nex_walk\nex_other\n"
				 "EX_MACRO\n");
	free(out);
	free(err);
	assert_int_equal(access(path, F_OK), 0);
	fmt(path, "%s/stale.3", dir);
	assert_int_not_equal(access(path, F_OK), 0);

	fmt(path, "%s/ex_walk.3", dir);
	page = read_all(path);
	assert_non_null(page);
	static const char *const want[] = {
		".TH \"ex_walk\" 3 \"\" \"ex 1.0\"",
		"\n.SH NAME\nex_walk \\- walk the objects, with a purpose "
		"that goes on\n",
		"\n.B \"#include <ex/t.h>\"\n",
		"\n.BI \"int ex_walk(struct ex_obj *\" \"obj\" \",\"\n",
		"\n.BI \"            int (*\" \"fn\" "
		"\")(struct ex_obj *, void *),\"\n",
		"\n.BI \"            const char *\" \"names\" \"[4],\"\n",
		"\n.B \"            ...);\"\n",
		"\n.SH ARGUMENTS\n.TP\n.I \"obj\"\nthe object; see "
		"\\fBstruct ex_obj\\fP\n",
		"\n.I \"fn\"\ncalled per object, with \\fIarg\\fP\n",
		"\n.I \"...\"\nits arguments\n",
		"\n.SH DESCRIPTION\nWalks, unlike \\fBex_other\\fP(), and never "
		"returns \\fBNULL\\fP.\n.PP\n.IP \\(bu 2\nfirst point\n"
		".IP \\(bu 2\nsecond point\n",
		"\n.SH CONTEXT\nany thread.\n",
		"\n.SH RETURN\n0, or \\-EINVAL.\n.PP\nAnd a second paragraph.\n",
		"\n.SH NOTES\n\\e\\e and .dot are escaped.\n",
		"\n.SH SEE ALSO\n.BR \"ex_other\" (3),\n"
		".BR \"struct_ex_obj\" (3),\n.BR \"typedef_ex_cb_t\" (3)\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(page, want[i]))
			fail_msg("ex_walk.3 lacks:\n%s\n--- page:\n%s", want[i],
				 page);
	free(page);

	fmt(path, "%s/ex_other.3", dir);
	page = read_all(path);
	assert_non_null(page);
	assert_non_null(strstr(page, "\n.B \"static inline void "
				     "ex_other(void);\"\n"));
	assert_non_null(strstr(page, "\n.SH ARGUMENTS\nNone.\n"));
	assert_non_null(strstr(page, "\n.SH DESCRIPTION\nNo parentheses, "
				     "no parameters.\n"));
	assert_non_null(strstr(page, "\n.SH RETURN\nNothing.\n"));
	free(page);

	fmt(path, "%s/struct_ex_obj.3", dir);
	page = read_all(path);
	assert_non_null(page);
	/* whatis(1) parses "struct_ex_obj, ex_obj", not "struct ex_obj" */
	assert_non_null(strstr(page, "\n.SH NAME\nstruct_ex_obj, ex_obj \\- "
				     "an object\n"));
	assert_non_null(strstr(page, "\nstruct ex_obj {\n    int a;\n"
				     "    void (*cb)(int x);\n};\n"));
	assert_non_null(strstr(page, "\n.SH MEMBERS\n.TP\n.I \"a\"\nfirst\n"));
	free(page);

	fmt(path, "%s/EX_MACRO.3", dir);
	page = read_all(path);
	assert_non_null(page);
	assert_non_null(strstr(page, "\n.BI \"#define EX_MACRO(\" \"x\" "
				     "\")\"\n"));
	free(page);
}

/* -S: the section in the file name, .TH and SEE ALSO; Environment; no
 * page for a documented internal name. */
static void converter_section_environment_internal(void **state)
{
	static const char text[] =
		"/**\n * ex_a() - a\n *\n * Environment: EX_VAR sets it.\n"
		" */\nvoid ex_a(void);\n"
		"/**\n * rdmarw__ex() - internal\n */\nvoid rdmarw__ex(void);\n"
		"/**\n * ex_b() - b, unlike ex_a()\n */\nvoid ex_b(void);\n";
	char dir[PATH_MAX], opts[PATH_MAX + 16], path[PATH_MAX];
	char *out, *err, *page;

	fmt(dir, "%s/man3x", tmp_dir);
	fmt(opts, "-l -S 3ex -o '%s'", dir);
	if (convert(text, opts, &out, &err))
		fail_msg("kdoc2man failed:\n%s", err);
	assert_string_equal(out, "ex_a\nex_b\n");
	free(out);
	free(err);
	fmt(path, "%s/rdmarw__ex.3ex", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	fmt(path, "%s/ex_a.3", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	fmt(path, "%s/ex_b.3ex", dir);
	page = read_all(path);
	assert_non_null(page);
	assert_non_null(strstr(page, "\n.TH \"ex_b\" 3ex \"\" "));
	assert_non_null(strstr(page, "\n.SH SEE ALSO\n.BR \"ex_a\" (3ex)\n"));
	free(page);
	fmt(path, "%s/ex_a.3ex", dir);
	page = read_all(path);
	assert_non_null(page);
	assert_non_null(strstr(page, "\n.SH RETURN\nNothing.\n"
				     ".SH ENVIRONMENT\nEX_VAR sets it.\n"));
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_public_function_has_a_page),
		cmocka_unit_test(every_page_is_well_formed),
		cmocka_unit_test(man_renders_every_page_without_warnings),
		cmocka_unit_test(converter_refuses_missing_documentation),
		cmocka_unit_test(
			converter_accepts_internal_and_undocumented_types),
		cmocka_unit_test(converter_renders_valid_kernel_doc),
		cmocka_unit_test(converter_section_environment_internal),
	};

	return cmocka_run_group_tests(tests, find_paths, remove_tmp);
}
