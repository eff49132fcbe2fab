/* One catalogue and one YAQL engine, loaded once and shared by 4 threads.
 * Each thread validates object models, runs a method, asks for a form
 * schema, calls a static action, evaluates YAQL that calls a host
 * function written in C and runs MuranoPL code that calls another, and
 * checks every answer. Exits 0 when all are right, 1 on the first wrong
 * one (it says which).
 *
 * Usage: threads [ROOT [ARTIFACT]]
 *   ROOT: the repository, for the packages of its examples/ (default ".");
 *   ARTIFACT: a catalogue artifact (.mcat) of those packages to load
 *   instead (`muranopl batch pack -p examples/validate -p examples/hello-app
 *   -p examples/c/doubler -o examples.mcat`, or `muranopl::artifact::pack`).
 *
 *     cc examples/c/threads.c -Iinclude -Ltarget/release -lmuranopl_capi \
 *        -lpthread -Wl,-rpath,$PWD/target/release -o threads && ./threads
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muranopl.h"

#define THREADS 4
#define ROUNDS 10

static muranopl_catalogue *catalogue; /* shared, read-only */
static muranopl_engine *engine;       /* shared, read-only once defined */
static atomic_long host_calls;        /* wrap()'s user data */

/* A host function: wrap(...) answers {"args": [...], "kwargs": {...}},
 * echoing its arguments (JSON text in, JSON text out). */
static int wrap(void *user_data, const char *args_json, const char *kwargs_json,
                muranopl_reply *reply) {
    atomic_fetch_add((atomic_long *)user_data, 1);
    size_t n = strlen(args_json) + strlen(kwargs_json) + 32;
    char *out = malloc(n);
    if (!out) {
        muranopl_reply_error(reply, "MemoryError", "out of memory");
        return MURANOPL_ERROR;
    }
    snprintf(out, n, "{\"args\": %s, \"kwargs\": %s}", args_json, kwargs_json);
    int status = muranopl_reply_value(reply, out); /* copied: free ours */
    free(out);
    return status;
}

/* A host function for MuranoPL code: twice(x) answers 2x, for an integer
 * x (com.example.Doubler's method `double` returns twice($.x)). */
static int twice(void *user_data, const char *args_json, const char *kwargs_json,
                 muranopl_reply *reply) {
    (void)user_data;
    (void)kwargs_json;
    long long x;
    char answer[32];
    if (sscanf(args_json, "[%lld]", &x) != 1) {
        muranopl_reply_error(reply, "TypeError", "twice() takes one integer");
        return MURANOPL_ERROR;
    }
    snprintf(answer, sizeof answer, "%lld", 2 * x);
    return muranopl_reply_value(reply, answer);
}

/* Fails the program when `text` (a result, or NULL) lacks `want`. */
static int expect(int thread, const char *what, int status, char *result, char *error,
                  const char *want) {
    int ok = status == MURANOPL_OK && result && strstr(result, want);
    if (!ok)
        fprintf(stderr, "thread %d: %s: status %d, wanted %s in\n  %s\n", thread, what,
                status, want, result ? result : (error ? error : "(nothing)"));
    muranopl_string_free(result);
    muranopl_string_free(error);
    return ok;
}

static const char *SERVER =
    "{\"?\": {\"id\": \"s%d\", \"type\": \"com.example.Server\"}, \"name\": \"s\","
    " \"port\": %d, \"tags\": [], \"enabled\": true,"
    " \"settings\": {\"timeout\": 1, \"label\": \"x\"}}";

static const char *DOUBLER =
    "{\"?\": {\"id\": \"d\", \"type\": \"com.example.Doubler\"}, \"x\": %d}";

static const char *HELLO =
    "{\"?\": {\"id\": \"app\", \"type\": \"com.example.Hello\"}, \"greeting\": \"hi\","
    " \"instance\": {\"?\": {\"id\": \"vm\","
    " \"type\": \"io.murano.resources.LinuxMuranoInstance\"},"
    " \"name\": \"web\", \"flavor\": \"m1.small\", \"image\": \"ubuntu\"}}";

static void *work(void *arg) {
    int t = (int)(long)arg;
    char model[512], want[128], data[32];
    for (int i = 0; i < ROUNDS; i++) {
        char *result = NULL, *error = NULL;
        int status;

        /* Validate: every other model has a port out of range. */
        int port = i % 2 ? 70000 + i : 8000 + i;
        snprintf(model, sizeof model, SERVER, t, port);
        status = muranopl_validate(catalogue, model, NULL, &result, &error);
        if (!expect(t, "validate", status, result, error,
                    i % 2 ? "\"property\":\"port\"" : "\"valid\":true"))
            return (void *)1;

        /* Run a method, with per-call limits. */
        status = muranopl_run(catalogue, HELLO, "deploy",
                              "{\"timeout_ms\": 60000, \"max_steps\": 1000000}", &result,
                              &error);
        if (!expect(t, "run", status, result, error, "hi from 10.0.0."))
            return (void *)1;

        /* The form schema of a class. */
        status = muranopl_schema(catalogue, "com.example.Hello", NULL, &result, &error);
        if (!expect(t, "schema", status, result, error, "\"greeting\""))
            return (void *)1;

        /* A static action. */
        status = muranopl_static_action(catalogue, "com.example.Hello", "shout",
                                        "{\"text\": \"hey\", \"times\": 2}", NULL, &result,
                                        &error);
        if (!expect(t, "static action", status, result, error, "[\"HEY\", \"HEY\"]"))
            return (void *)1;

        /* YAQL calling the host function. */
        snprintf(data, sizeof data, "%d", t * 100 + i);
        status = muranopl_eval_expr(
            engine, "let(r => wrap($, tag => 'x')) -> [$r.args[0] * 2, $r.kwargs.tag]", data,
            "{\"timeout_ms\": 10000}", &result, &error);
        snprintf(want, sizeof want, "[%d, \"x\"]", 2 * (t * 100 + i));
        if (!expect(t, "host function", status, result, error, want))
            return (void *)1;

        /* MuranoPL calling a host function: one result per application. */
        snprintf(model, sizeof model, DOUBLER, t * 100 + i);
        status = muranopl_run(catalogue, model, "double", NULL, &result, &error);
        snprintf(want, sizeof want, "\"value\":[%d]", 2 * (t * 100 + i));
        if (!expect(t, "MuranoPL host function", status, result, error, want))
            return (void *)1;
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char validate_dir[4096], hello_dir[4096], doubler_dir[4096];
    snprintf(validate_dir, sizeof validate_dir, "%s/examples/validate", root);
    snprintf(hello_dir, sizeof hello_dir, "%s/examples/hello-app", root);
    snprintf(doubler_dir, sizeof doubler_dir, "%s/examples/c/doubler", root);
    const char *packages[] = {validate_dir, hello_dir, doubler_dir};
    const char *artifact[] = {argc > 2 ? argv[2] : NULL};
    char *error = NULL;

    /* The engine and its host functions first: the catalogue's MuranoPL
     * code sees the functions of the engine it is loaded with. */
    engine = muranopl_engine_new(NULL, &error);
    if (!engine || muranopl_engine_define(engine, "wrap", wrap, &host_calls, &error) ||
        muranopl_engine_define(engine, "twice", twice, NULL, &error)) {
        fprintf(stderr, "engine: %s\n", error);
        muranopl_string_free(error);
        return 1;
    }

    /* Load once, from package directories or an artifact (the core
     * library is built in; a search path would go in the fourth and fifth
     * arguments, as `-L` gives it). */
    if (artifact[0])
        catalogue = muranopl_catalogue_load_with(engine, artifact, 1, NULL, 0, &error);
    else
        catalogue = muranopl_catalogue_load_with(engine, packages, 3, NULL, 0, &error);
    if (!catalogue) {
        fprintf(stderr, "load: %s\n", error);
        muranopl_string_free(error);
        return 1;
    }

    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, work, (void *)t)) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    int failed = 0;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(threads[t], &r);
        failed |= r != NULL;
    }

    /* Freed once every thread is done with them. */
    muranopl_engine_free(engine);
    muranopl_catalogue_free(catalogue);
    if (failed)
        return 1;
    if (atomic_load(&host_calls) != THREADS * ROUNDS) {
        fprintf(stderr, "host function called %ld times\n", (long)atomic_load(&host_calls));
        return 1;
    }
    printf("ok: %d threads x %d rounds (validate, run, schema, static action, host functions "
           "from YAQL and MuranoPL)\n",
           THREADS, ROUNDS);
    return 0;
}
