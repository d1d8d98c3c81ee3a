/* The top of the CLI: finds the subcommand and hands it argv. Kept in the library so
 * tests can drive the whole CLI in-process. */
#include "cli/commands.h"

#include "cli/opt.h"
#include "cli/runopts.h"
#include "core/err.h"
#include "lab/lab.h"
#include "serve/serve.h"

#include <string.h>

static void usage(FILE *out)
{
    fputs("knee — an honest HTTP load generator and latency lab\n\n"
          "usage: knee <command> [options]\n"
          "       knee <command> --help\n"
          "       knee --version\n\ncommands:\n",
          out);
    for (const struct command *c = knee_commands; c->name; c++)
        fprintf(out, "  %-8s  %s\n", c->name, c->summary);
    fputs("\nexit codes: 0 ok, 1 runtime failure, 2 usage or bad input, 99 a threshold failed,\n"
          "            3 not one request succeeded (knee run) or knee capacity's verdict is INVALID\n",
          out);
}

int cli_unknown_command(const char *cmd, const char *kind, const struct command *table, const char *name)
{
    char prefix[64], list[256];
    snprintf(prefix, sizeof prefix, "knee%s%s: ", cmd[0] ? " " : "", cmd);
    struct opt_suggest s;
    opt_suggest_init(&s, name, strlen(name));
    size_t n = 0;
    list[0] = '\0';
    for (const struct command *c = table; c->name; c++) {
        opt_suggest_add(&s, c->name);
        if (n < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", c->name);
    }
    const char *near = opt_suggest_best(&s);
    if (near)
        knee_report(stderr, prefix, "unknown %s '%s': did you mean %s?", kind, name, near);
    else
        knee_report(stderr, prefix, "unknown %s '%s' (one of %s)", kind, name, list);
    return 2;
}

/* The words a flag takes, for completion (scripts/helpgen.sh reads `knee --list-values`): one
 * row per command and flag, the words from the table that defines them. */
struct value_list {
    const char *cmd, *flag;
    const char *const *words;
};
static const struct value_list value_lists[] = {
    {"run", "--arrivals", runopt_arrivals_words},
    {"run", "--when-busy", runopt_busy_words},
    {"run", "--io", runopt_io_words},
    {"run", "--tls-resume", runopt_onoff_words},
    {"run", "--targets-format", runopt_format_words},
    {"run", "--targets-order", runopt_targets_order_words},
    {"run", "--feed-order", runopt_feed_order_words},
    {"capacity", "--arrivals", runopt_arrivals_words},
    {"capacity", "--when-busy", runopt_busy_words},
    {"capacity", "--io", runopt_io_words},
    {"capacity", "--tls-resume", runopt_onoff_words},
    {"serve", "--preset", serve_preset_names},
    {"serve", "-p", serve_preset_names},
    {"lab", "", lab_experiment_names},
};

/* knee --list-values: "CMD<TAB>FLAG<TAB>word word ..." per row (FLAG empty: the positional
 * words). Hidden from --help: it is for the completion generator. */
static int list_values(void)
{
    for (size_t i = 0; i < sizeof value_lists / sizeof value_lists[0]; i++) {
        const struct value_list *v = &value_lists[i];
        printf("%s\t%s\t", v->cmd, v->flag);
        for (size_t k = 0; v->words[k]; k++)
            printf("%s%s", k ? " " : "", v->words[k]);
        putchar('\n');
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int knee_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (strcmp(name, "help") == 0 && argc > 2) {
            char *sub[] = {argv[2], "--help", NULL};
            for (const struct command *c = knee_commands; c->name; c++)
                if (strcmp(c->name, argv[2]) == 0)
                    return c->fn(2, sub);
            return cli_unknown_command("", "command", knee_commands, argv[2]);
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 || strcmp(name, "version") == 0) {
        printf("knee %s\n", KNEE_VERSION);
        return 0;
    }
    for (const struct command *c = knee_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn(argc - 1, argv + 1);
    if (name[0] != '-')
        return cli_unknown_command("", "command", knee_commands, name);
    if (strcmp(name, "--list-values") == 0 && argc == 2)
        return list_values();
    knee_report(stderr, "knee: ", "unknown option '%s' (see knee --help)", name);
    return 2;
}
