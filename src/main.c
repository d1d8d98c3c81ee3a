/* knee: the binary is only this; everything else is in libknee (src/<module>/). */
#include "cli/commands.h"

int main(int argc, char **argv)
{
    return knee_main(argc, argv);
}
