/*
 * fuzz/standalone_driver.c: replays inputs through LLVMFuzzerTestOneInput without libFuzzer, so
 * ctest can run every fuzz target's corpus in plain builds (also under ASan+UBSan).
 *
 * Arguments: the target's own corpus (a directory, replayed whole), then seed trees (files or
 * directories, walked recursively). A target may define `icm_fuzz_seed_suffixes`
 * (NULL-terminated): inside seed trees, only files whose names end in one of them are replayed.
 *
 * A replay that replays nothing proves nothing, so it fails (exit 1, the reason on stderr) rather
 * than pass silently: when the corpus is missing, empty or unreadable, or when any input cannot
 * be read. A missing seed tree (the engine-written fixtures, ../shared/fixtures) is reported and
 * skipped on a developer's machine; under CI (env CI set) it fails too, since the fixtures are
 * part of the test setup there.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const char *const icm_fuzz_seed_suffixes[] __attribute__((weak));

static unsigned long g_count;
static int g_errors;

static int wanted(const char *name, int filter)
{
    if (!filter || &icm_fuzz_seed_suffixes == NULL)
        return 1;
    size_t n = strlen(name);
    for (const char *const *s = icm_fuzz_seed_suffixes; *s; s++) {
        size_t m = strlen(*s);
        if (n >= m && strcmp(name + n - m, *s) == 0)
            return 1;
    }
    return 0;
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        g_errors++;
        return;
    }
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    uint8_t *buf = n >= 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
    size_t got = 0;
    if (buf != NULL && fseek(f, 0, SEEK_SET) == 0)
        got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (buf == NULL || got != (size_t)n) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        g_errors++;
        return;
    }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    g_count++;
}

static void walk(const char *path, int filter)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot stat %s\n", path);
        g_errors++;
        return;
    }
    if (S_ISREG(st.st_mode)) {
        const char *base = strrchr(path, '/');
        if (wanted(base ? base + 1 : path, filter))
            run_file(path);
        return;
    }
    if (!S_ISDIR(st.st_mode))
        return;
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot open the folder %s\n", path);
        g_errors++;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(len);
        if (child == NULL) {
            fprintf(stderr, "replay: out of memory below %s\n", path);
            g_errors++;
            break;
        }
        snprintf(child, len, "%s/%s", path, e->d_name);
        walk(child, filter);
        free(child);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR [SEED_TREE]...\n", argv[0]);
        return 2;
    }
    /* argv[1] is the target's own corpus (replayed whole): it must hold inputs. */
    walk(argv[1], 0);
    unsigned long own = g_count;
    if (own == 0 && g_errors == 0)
        fprintf(stderr, "replay: the corpus %s holds no input\n", argv[1]);
    const char *ci = getenv("CI");
    bool under_ci = ci != NULL && ci[0] != '\0';
    for (int i = 2; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0 && !under_ci) {
            fprintf(stderr, "replay: %s is missing: its seeds are skipped (under CI this fails)\n",
                    argv[i]);
            continue;
        }
        walk(argv[i], 1);
    }
    printf("replayed %lu inputs (%lu of the corpus, %lu seeds)\n", g_count, own, g_count - own);
    if (own == 0 || g_errors > 0) {
        fprintf(stderr, "replay: FAILED (%d inputs or folders could not be read%s)\n", g_errors,
                own == 0 ? ", and the corpus replayed nothing" : "");
        return 1;
    }
    return 0;
}
