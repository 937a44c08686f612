/*
 * cli/main.c: entry point of the icemaint command-line tool (placeholder until the CLI lands).
 */
#include <stdio.h>

#include "icemaint/common.h"

int main(void)
{
    printf("icemaint %s\n", icm_version());
    return 0;
}
