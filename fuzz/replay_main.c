// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A libFuzzer target's inputs replayed without libFuzzer (any compiler):
 * each argument is a file or a directory of files, each file one call of
 * LLVMFuzzerTestOneInput().  The CTest entries test_fuzz_*_replay run a
 * target's seed corpus this way in every build, so that gcc, valgrind and
 * the sanitizer builds see the same inputs as the fuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int replay_dir(const char *dir, int *n)
{
	struct dirent **ents;
	char path[4096];
	int k = scandir(dir, &ents, NULL, alphasort);

	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			if (replay_file(path))
				return -1;
			++*n;
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		int ret;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: cannot stat\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = replay_dir(argv[i], &n);
		} else {
			ret = replay_file(argv[i]);
			n++;
		}
		if (ret) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			return 1;
		}
	}
	printf("replayed %d inputs\n", n);
	return n ? 0 : 1;
}
