/* The sandbox environment: credentials are dropped, --env passes or sets, --clear-env. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "supervisor/env.h"
#include "supervisor/options.h"

#include <string.h>

static void secrets(void **state)
{
        static const struct {
                const char *name;
                bool secret;
        } cases[] = {
                {"GITHUB_TOKEN", true},
                {"OPENAI_API_KEY", true},
                {"ANTHROPIC_API_KEY", true},
                {"AWS_ACCESS_KEY_ID", true},
                {"AWS_PROFILE", true},
                {"DB_PASSWORD", true},
                {"MYSQL_PWD", true},
                {"CLIENT_SECRET", true},
                {"GOOGLE_APPLICATION_CREDENTIALS", true},
                {"SSH_AUTH_SOCK", true},
                {"HF_TOKEN", true},
                {"NPM_TOKEN", true},
                {"AZURE_CLIENT_ID", true},
                {"github_token", true},
                {"DATABASE_URL", true},
                {"SENTRY_DSN", true},
                /* Issue 10. */
                {"CI_JOB_JWT", true},
                {"CI_JOB_JWT_V2", true},
                {"VAULT_ID_JWT", true},
                {"SESSION_COOKIE", true},
                {"COOKIE_SECRET_JAR", true},
                {"BASIC_AUTH", true},
                {"OAUTH_CLIENT", true},
                {"HTTP_AUTHORIZATION", true},
                {"GIT_AUTHOR_NAME", false},
                {"GIT_AUTHOR_EMAIL", false},
                {"XAUTHORITY", false},
                {"ICEAUTHORITY", false},
                {"PATH", false},
                {"HOME", false},
                {"LANG", false},
                {"TERM", false},
                {"KEYBOARD", false},
                {"TOKENIZERS_PARALLELISM", false},
                {"PYTHONPATH", false},
                {"CI", false},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (env_is_secret(cases[i].name) != cases[i].secret)
                        fail_msg("%s: expected %s", cases[i].name,
                                 cases[i].secret ? "secret" : "kept");
}

static void build(void **state)
{
        char *host[] = {"PATH=/usr/bin",     "HOME=/root",      "GITHUB_TOKEN=ghp_x",
                        "OPENAI_API_KEY=sk", "DEBUG=pass=word", NULL};
        struct env_op ops[] = {{"OPENAI_API_KEY"}, {"CI=1"}, {"HOME=/sandbox"}, {"ABSENT"}};
        struct config cfg = {.env_ops = ops, .n_env_ops = 4};
        char **env = env_build(host, &cfg);

        assert_string_equal(env_get(env, "PATH"), "/usr/bin");
        assert_string_equal(env_get(env, "HOME"), "/sandbox"); /* set overrides the host */
        assert_null(env_get(env, "GITHUB_TOKEN"));
        assert_string_equal(env_get(env, "OPENAI_API_KEY"), "sk"); /* --env NAME passes it */
        assert_string_equal(env_get(env, "CI"), "1");
        assert_string_equal(env_get(env, "DEBUG"), "pass=word"); /* values are not judged */
        assert_null(env_get(env, "ABSENT"));
        env_free(env);

        cfg.clear_env = true;
        env = env_build(host, &cfg);
        assert_null(env_get(env, "PATH"));
        assert_string_equal(env_get(env, "CI"), "1");
        assert_string_equal(env_get(env, "OPENAI_API_KEY"), "sk");
        size_t n = 0;
        while (env[n])
                n++;
        assert_int_equal(n, 3);
        env_free(env);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(secrets),
                cmocka_unit_test(build),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
