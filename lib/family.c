/* family.c: the known template families (family.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "family.h"
#include "util.h"

char *
family_dir(void)
{
	return data_dir("HTAM_TEMPLATES", "tools/kgen/templates", NULL);
}

int
family_known(const char *name)
{
	char *dir, *path;
	int yes;

	if (!name || !is_c_identifier(name))
		return 0;
	dir = family_dir();
	path = xasprintf("%s/%s.json", dir, name);
	yes = access(path, R_OK) == 0;
	free(path);
	free(dir);
	return yes;
}
