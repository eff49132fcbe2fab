/*
 * muranopl: a fast engine for YAQL and MuranoPL, C interface.
 *
 * Link with the shared library built by `cargo build --release`
 * (target/release/libmuranopl.so on Linux):
 *
 *     cc app.c -Iinclude -Ltarget/release -lmuranopl -o app
 *
 * Conventions:
 *  - Strings in are NUL-terminated UTF-8. Strings out are allocated by
 *    the library and freed with muranopl_string_free().
 *  - Functions that can fail return a status (MURANOPL_OK, ...) and write
 *    their result through an out pointer. On failure, when `error` is not
 *    NULL, *error receives a JSON object
 *        {"kind": "...", "message": "...", "line": N|null, "column": N|null}
 *    (line and column are 1-based positions in the expression).
 *  - A NULL where a value is required, or text that is not UTF-8, gives
 *    MURANOPL_INVALID_ARGUMENT and writes no result.
 *  - No panic crosses the boundary: it is reported as MURANOPL_PANIC.
 *  - An engine and its programs may be shared between threads.
 */
#ifndef MURANOPL_H
#define MURANOPL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MURANOPL_OK 0
#define MURANOPL_ERROR 1
#define MURANOPL_INVALID_ARGUMENT 2
#define MURANOPL_PANIC 3

typedef struct MuranoplEngine muranopl_engine;
typedef struct MuranoplProgram muranopl_program;

/* The library version (static; do not free). */
const char *muranopl_version(void);

/* Makes an engine. options_json: NULL for the defaults, or a JSON object
 * with any of "legacy" (bool, yaql 0.2 mode), "limit_iterators" (int or
 * null), "memory_quota" (bytes, int or null), "convert_sets_to_lists"
 * (bool). Returns NULL (and sets *error) on bad options. */
muranopl_engine *muranopl_engine_new(const char *options_json, char **error);

/* Frees an engine (NULL is ignored). Free its programs first. */
void muranopl_engine_free(muranopl_engine *engine);

/* Compiles an expression once, to evaluate it many times. */
int muranopl_compile(const muranopl_engine *engine, const char *expr,
                     muranopl_program **out, char **error);

/* Frees a program (NULL is ignored). */
void muranopl_program_free(muranopl_program *program);

/* Evaluates a program over JSON data (NULL means null); *result receives
 * the result as JSON text. */
int muranopl_eval(const muranopl_engine *engine, const muranopl_program *program,
                  const char *data_json, char **result, char **error);

/* Compiles and evaluates in one call. */
int muranopl_eval_expr(const muranopl_engine *engine, const char *expr,
                       const char *data_json, char **result, char **error);

/* ---- MuranoPL: object-model validation ---- */

typedef struct MuranoplValidator muranopl_validator;

/* Loads `count` packages (directories or .zip files) to validate object
 * models against. Returns NULL (and sets *error) when one cannot load. */
muranopl_validator *muranopl_validator_new(const char *const *package_dirs, size_t count,
                                           char **error);

/* Frees a validator (NULL is ignored). */
void muranopl_validator_free(muranopl_validator *validator);

/* Validates an object model (JSON text, {"Objects": ...} or a bare object).
 * *report receives {"valid": bool, "objects": n, "violations": ["$.path.prop:
 * message (contract at file:line:col)", ...]}. A model that cannot be
 * loaded at all (bad JSON, unknown class) is MURANOPL_ERROR. */
int muranopl_validate(const muranopl_validator *validator, const char *model_json,
                      char **report, char **error);

/* Frees a string the library returned (NULL is ignored). */
void muranopl_string_free(char *s);

#ifdef __cplusplus
}
#endif

#endif /* MURANOPL_H */
