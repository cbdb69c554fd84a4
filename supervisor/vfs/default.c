/*
 * The default view. The hidden list errs on the side of hiding. A --ro or --rw of one of
 * these paths does not un-hide it (hidden wins); a run that needs one will need the policy
 * layer to drop the default entry instead.
 */
#include "supervisor/vfs/default.h"
#include "supervisor/vfs/path.h"
#include "supervisor/util.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

const char *const vfs_default_hidden_home[] = {
        /* Keys, tokens and cloud identities. */
        ".ssh",
        ".gnupg",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".kube",
        ".docker",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".password-store",
        ".config/gh",
        ".config/hub",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".gem/credentials",
        ".vault-token",
        ".terraform.d/credentials.tfrc.json",
        ".s3cfg",
        ".boto",
        ".oci",
        ".config/rclone",
        ".config/op",
        ".config/containers/auth.json",
        ".m2/settings.xml",
        ".local/share/keyrings",
        ".pki",
        ".config/git/credentials",
        ".config/glab-cli",
        ".cache/huggingface/token",
        ".huggingface/token",
        ".config/configstore", /* firebase-tools and other npm CLIs keep their tokens there */
        ".config/netlify",
        ".local/share/com.vercel.cli",
        ".config/.wrangler",
        ".wrangler",
        ".supabase/access-token",
        ".railway",
        ".fly",
        ".config/doctl",
        ".config/hcloud",
        ".config/linode-cli",
        ".config/scw",
        ".pulumi/credentials.json",
        ".config/sops",
        ".databrickscfg",
        ".config/ngrok",
        ".ngrok2",
        ".tsh",
        ".minikube",
        ".ibmcloud",
        ".jfrog",
        ".snowsql",
        ".dbt/profiles.yml",
        ".composer/auth.json",
        ".config/composer/auth.json",
        ".gradle/gradle.properties",
        ".yarnrc.yml",
        ".terraformrc",
        ".pgpass",
        ".my.cnf",
        /* AI assistants' own credentials: the agent a user sandboxes must not read the
         * account of the one that runs it (or the user's). */
        ".claude/.credentials.json",
        ".claude.json",
        ".codex/auth.json",
        ".gemini/oauth_creds.json",
        ".config/github-copilot",
        /* Wallets. */
        ".bitcoin",
        ".ethereum",
        ".electrum",
        ".config/solana",
        /* Messaging apps and password managers: their session tokens are accounts. */
        ".config/Slack",
        ".config/discord",
        ".config/Signal",
        ".config/Element",
        ".local/share/TelegramDesktop",
        ".config/Bitwarden",
        ".config/1Password",
        /* Histories: tokens typed on a command line or into a client end up there. */
        ".bash_history",
        ".zsh_history",
        ".zhistory",
        ".history",
        ".local/share/fish/fish_history",
        ".local/share/atuin",
        ".python_history",
        ".node_repl_history",
        ".psql_history",
        ".mysql_history",
        ".sqlite_history",
        ".rediscli_history",
        /* Browser and mail profiles: cookies, saved passwords, session tokens. */
        ".mozilla",
        ".thunderbird",
        ".config/google-chrome",
        ".config/google-chrome-beta",
        ".config/chromium",
        ".config/BraveSoftware",
        ".config/microsoft-edge",
        ".config/vivaldi",
        ".config/opera",
        "snap/firefox",
        "snap/chromium",
        "snap/thunderbird",
        ".var/app/org.mozilla.firefox",
        ".var/app/com.google.Chrome",
        ".var/app/org.chromium.Chromium",
        ".var/app/com.brave.Browser",
        NULL,
};

static const char *const hidden_system[] = {
        "/etc/shadow",           "/etc/shadow-",   "/etc/gshadow",     "/etc/gshadow-",
        "/etc/security/opasswd", "/etc/ssh/*_key", "/etc/ssl/private",
};

/* `pattern`: sandbox is one of the patterns below; else it names itself, whatever a HOME in
 * it holds (vfs_mount_init_literal). */
static int add(struct vfs_view *v, enum vfs_mode mode, const char *sandbox, const char *host,
               const char *except, bool pattern)
{
        struct vfs_mount m;
        int r = pattern ? vfs_mount_init(&m, mode, sandbox, host, "default view")
                        : vfs_mount_init_literal(&m, mode, sandbox, host, "default view");

        if (r < 0)
                return r;
        if (except)
                m.except = xstrdup(except);
        vfs_view_add(v, &m);
        return 0;
}

static int add_hidden(struct vfs_view *v, const char *home, uid_t uid, bool is_root)
{
        char path[PATH_MAX];
        int r = 0;

        for (size_t i = 0; vfs_default_hidden_home[i] && r >= 0; i++) {
                if (snprintf(path, sizeof(path), "%s/%s", home, vfs_default_hidden_home[i]) >=
                    (int)sizeof(path))
                        return -ENAMETOOLONG;
                r = add(v, VFS_HIDDEN, path, NULL, NULL, false);
        }
        for (size_t i = 0; i < ARRAY_SIZE(hidden_system) && r >= 0; i++)
                r = add(v, VFS_HIDDEN, hidden_system[i], NULL, NULL,
                        strchr(hidden_system[i], '*') != NULL);
        /* The user's session: D-Bus and systemd --user (a way out of any sandbox), agents. */
        snprintf(path, sizeof(path), "/run/user/%u", (unsigned)uid);
        if (r >= 0)
                r = add(v, VFS_HIDDEN, path, NULL, NULL, false);
        /* Other users' homes; the exception keeps the user's own (and its ancestors). */
        if (r >= 0)
                r = add(v, VFS_HIDDEN, "/home/*", NULL, home, true);
        if (r >= 0 && !is_root)
                r = add(v, VFS_HIDDEN, "/root", NULL, home, false);
        return r;
}

int vfs_default_view(struct vfs_view *v, const struct vfs_default *d)
{
        char home[PATH_MAX], cwd[PATH_MAX];
        int r;

        if (!d->home || !d->cwd || (d->tmp && d->tmp[0] != '/'))
                return -EINVAL;
        r = vfs_path_normalize(home, sizeof(home), d->home);
        if (r >= 0)
                r = vfs_path_normalize(cwd, sizeof(cwd), d->cwd);
        if (r >= 0)
                r = add(v, VFS_RO, "/", "/", NULL, false);
        if (r >= 0)
                r = add(v, VFS_TMP, "/tmp", d->tmp, NULL, false);
        if (r >= 0)
                r = add(v, VFS_DEV, "/dev", NULL, NULL, false);
        if (r >= 0)
                r = add(v, VFS_PROC, "/proc", NULL, NULL, false);
        /* Writing anywhere on the host is never a default, even when started from "/". */
        if (r >= 0 && strcmp(cwd, "/") != 0)
                r = add(v, d->cwd_cow ? VFS_COW : VFS_RW, cwd, cwd, NULL, false);
        return r < 0 ? r : add_hidden(v, home, d->uid, d->is_root);
}
