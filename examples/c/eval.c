/* Evaluates a YAQL expression over JSON data through the C interface.
 * Usage: eval EXPR [JSON]; prints the result, or the error and exits 1. */
#include <stdio.h>
#include "muranopl.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s EXPR [JSON]\n", argv[0]);
        return 2;
    }
    char *error = NULL;
    muranopl_engine *engine = muranopl_engine_new(NULL, &error);
    if (!engine) {
        fprintf(stderr, "%s\n", error);
        muranopl_string_free(error);
        return 1;
    }
    muranopl_program *program = NULL;
    int status = muranopl_compile(engine, argv[1], &program, &error);
    if (status == MURANOPL_OK) {
        char *result = NULL;
        status = muranopl_eval(engine, program, argc > 2 ? argv[2] : NULL, NULL, &result,
                               &error);
        if (status == MURANOPL_OK) {
            printf("%s\n", result);
            muranopl_string_free(result);
        }
        muranopl_program_free(program);
    }
    if (status != MURANOPL_OK) {
        fprintf(stderr, "%s\n", error);
        muranopl_string_free(error);
    }
    muranopl_engine_free(engine);
    return status == MURANOPL_OK ? 0 : 1;
}
