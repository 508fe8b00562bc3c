/* family.h: the template families htam has: a family is known when its
 * file is among the families' files (kgen's templates, found beside the
 * tools or installed, or under $HTAM_TEMPLATES), so a new family is a new
 * file and no list in the code. */
#ifndef HTAM_FAMILY_H
#define HTAM_FAMILY_H

/* Is name a family with a file <templates>/<name>.json? */
int family_known(const char *name);

/* The folder of the families' files (the caller frees it). */
char *family_dir(void);

#endif
