/*
 * fuzz/standalone_driver.c: replays inputs through LLVMFuzzerTestOneInput without libFuzzer, so
 * ctest can run every fuzz target's corpus in plain builds (also under ASan+UBSan).
 *
 * Arguments are files or directories (walked recursively). A target may define
 * `icm_fuzz_seed_suffixes` (NULL-terminated): inside directories, only files whose names end in
 * one of them are replayed (the checked-in corpus is always replayed whole). A missing directory
 * is skipped, so a checkout without fixtures still replays its own corpus.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const char *const icm_fuzz_seed_suffixes[] __attribute__((weak));

static unsigned long g_count;

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
    if (f == NULL)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    g_count++;
}

static void walk(const char *path, int filter)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISREG(st.st_mode)) {
        const char *base = strrchr(path, '/');
        if (wanted(base ? base + 1 : path, filter))
            run_file(path);
        return;
    }
    if (!S_ISDIR(st.st_mode))
        return;
    DIR *d = opendir(path);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(len);
        snprintf(child, len, "%s/%s", path, e->d_name);
        walk(child, filter);
        free(child);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    /* argv[1] is the target's own corpus (replayed whole); later arguments are seed trees. */
    for (int i = 1; i < argc; i++)
        walk(argv[i], i > 1);
    printf("replayed %lu inputs\n", g_count);
    return 0;
}
