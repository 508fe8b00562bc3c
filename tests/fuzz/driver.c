/* driver.c: runs a fuzz target (fuzz.h) over files, without libFuzzer:
 *   fuzz-TARGET FILE|DIR...
 * each file is one input; a folder's files are all its inputs. Prints
 * "TARGET: N inputs" and exits 0, unless an input made the target fail. */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"

static long runs;

static void
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 65536;
			if (!(buf = realloc(buf, cap)))
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	runs++;
}

int
main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			run_file(argv[i]);
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			run_file(path);
		}
		if (d)
			closedir(d);
	}
	printf("%s: %ld inputs\n", name, runs);
	return 0;
}
