#include "supervisor/scratch.h"
#include "supervisor/error.h"
#include "supervisor/sup.h"
#include "supervisor/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *scratch_base(void)
{
        const char *tmp = getenv("TMPDIR");
        struct stat st;

        if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
            access("/dev/shm", W_OK | X_OK) == 0)
                return "/dev/shm"; /* tmpfs: shared memory that is memory */
        return tmp && tmp[0] == '/' ? tmp : "/tmp";
}

int scratch_setup(struct supervisor *sup, struct error *err)
{
        char dir[PATH_MAX], shm[PATH_MAX + 8];
        const char *base = scratch_base();

        if (snprintf(dir, sizeof(dir), "%s/stockade-XXXXXX", base) >= (int)sizeof(dir))
                return make_error(err, 0, "scratch directory: `%s` is too long", base);
        if (!mkdtemp(dir))
                return make_error(err, errno, "create a scratch directory in `%s`", base);
        sup->scratch = xstrdup(dir);
        snprintf(shm, sizeof(shm), "%s/shm", dir);
        if (mkdir(shm, 0700) < 0)
                return make_error(err, errno, "create `%s`", shm);
        /* Root running the command as another user: the user's, like its /dev/shm files. */
        if (sup->cfg->set_user && geteuid() == 0 &&
            (chown(shm, sup->cfg->uid, sup->cfg->gid) < 0 || chmod(dir, 0711) < 0))
                return make_error(err, errno, "give `%s` to the command's user", shm);
        sup->shm_dir = xstrdup(shm);
        return places_add(&sup->places, shm, PLACE_TREE, err);
}

const char *scratch_parent(const struct supervisor *sup)
{
        return sup->scratch ? scratch_base() : NULL;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (type == FTW_DP)
                rmdir(path);
        else
                unlink(path);
        return 0;
}

void scratch_remove(struct supervisor *sup)
{
        if (!sup->scratch)
                return;
        nftw(sup->scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        free(sup->scratch);
        free(sup->shm_dir);
        sup->scratch = sup->shm_dir = NULL;
}
