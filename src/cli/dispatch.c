/* The top of the CLI: finds the subcommand and hands it argv. Kept in the library so
 * tests can drive the whole CLI in-process. */
#include "cli/commands.h"

#include "core/err.h"

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
            knee_report(stderr, "knee: ", "unknown command '%s' (see knee --help)", argv[2]);
            return 2;
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
    if (name[0] == '-')
        knee_report(stderr, "knee: ", "unknown option '%s' (see knee --help)", name);
    else
        knee_report(stderr, "knee: ", "unknown command '%s' (see knee --help)", name);
    return 2;
}
