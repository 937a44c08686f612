/*
 * tests/unit/rest_server.c: the scripted HTTP server of rest_server.h.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rest_server.h"
#include "testutil.h"

/* Script `method path` to answer with `steps` in turn (the last one repeats). */
void route_set(server *s, const char *method, const char *path, const step *steps, int n)
{
    pthread_mutex_lock(&s->mu);
    route *r = NULL;
    for (int i = 0; i < s->n_routes; i++)
        if (strcmp(s->routes[i].method, method) == 0 && strcmp(s->routes[i].path, path) == 0)
            r = &s->routes[i];
    if (r == NULL) {
        assert_true(s->n_routes < MAX_ROUTES);
        r = &s->routes[s->n_routes++];
    }
    memset(r, 0, sizeof *r);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->path, sizeof r->path, "%s", path);
    assert_true(n > 0 && n <= MAX_STEPS);
    memcpy(r->steps, steps, (size_t)n * sizeof *steps);
    r->n_steps = n;
    pthread_mutex_unlock(&s->mu);
}

void route1(server *s, const char *method, const char *path, int status, const char *body)
{
    step st = {status, NULL, body, ANSWER};
    route_set(s, method, path, &st, 1);
}

/* Serve one request on connection c; true when the connection stays open for another. */
static bool serve_one(server *s, int c)
{
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    char *end = NULL;
    bool keep = false;
    while (len < cap - 1) {
        ssize_t n = read(c, buf + len, cap - 1 - len);
        if (n <= 0)
            goto out;
        len += (size_t)n;
        buf[len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL)
            break;
    }
    if (end == NULL)
        goto out;
    size_t head = (size_t)(end - buf) + 4, clen = 0;
    const char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl != NULL && cl < end)
        clen = strtoul(cl + 17, NULL, 10);
    while (len < head + clen && len < cap - 1) {
        ssize_t n = read(c, buf + len, cap - 1 - len);
        if (n <= 0)
            goto out;
        len += (size_t)n;
    }
    buf[len] = '\0';
    req r;
    memset(&r, 0, sizeof r);
    sscanf(buf, "%7s %1023s", r.method, r.path);
    const char *hl = strstr(buf, "\r\n");
    r.headers = strndup(hl, (size_t)(end - hl) + 2);
    r.body = strndup(buf + head, clen);
    step st = {404, NULL, "{\"error\":{\"message\":\"no route\",\"type\":\"NotFound\",\"code\":404}}",
               ANSWER};
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_routes; i++) {
        route *ro = &s->routes[i];
        if (strcmp(ro->method, r.method) == 0 && strcmp(ro->path, r.path) == 0) {
            st = ro->steps[ro->next];
            if (ro->next + 1 < ro->n_steps)
                ro->next++;
        }
    }
    if (s->n_reqs < MAX_REQS)
        s->reqs[s->n_reqs++] = r;
    else {
        free(r.headers);
        free(r.body);
    }
    pthread_mutex_unlock(&s->mu);
    if (st.action == DROP)
        goto out;
    keep = st.action == KEEP;
    const char *body = st.body != NULL ? st.body : "";
    char *resp = icmt_sprintf("HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%s%s\r\n%s",
                              st.status, strlen(body), st.headers != NULL ? st.headers : "",
                              keep ? "" : "Connection: close\r\n", body);
    size_t off = 0, n = strlen(resp);
    while (off < n) {
        ssize_t w = write(c, resp + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(resp);
out:
    free(buf);
    return keep;
}

static void *serve(void *arg)
{
    server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pfd = {s->fd, POLLIN, 0};
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        /* a kept connection is served while its client sends on it; one idle for 300 ms is
         * closed, so a client that opened another meanwhile is accepted next */
        while (serve_one(s, c)) {
            struct pollfd next = {c, POLLIN, 0};
            if (poll(&next, 1, 300) <= 0)
                break;
        }
        close(c);
    }
    return NULL;
}

server *server_start(void)
{
    server *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 16), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
    return s;
}

void server_stop(server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
    for (int i = 0; i < s->n_reqs; i++) {
        free(s->reqs[i].headers);
        free(s->reqs[i].body);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* How many requests `method path` the server received. */
int count(server *s, const char *method, const char *path)
{
    int n = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_reqs; i++)
        n += strcmp(s->reqs[i].method, method) == 0 && strcmp(s->reqs[i].path, path) == 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* The i-th request (0 = first; negative: from the end). */
const req *nth(server *s, int i)
{
    assert_true(s->n_reqs > 0);
    int k = i >= 0 ? i : s->n_reqs + i;
    assert_true(k >= 0 && k < s->n_reqs);
    return &s->reqs[k];
}

/* The value of header `name` (static buffer), or NULL. */
const char *header(const req *r, const char *name)
{
    static char value[2048];
    char pat[128];
    snprintf(pat, sizeof pat, "\r\n%s:", name);
    const char *h = strcasestr(r->headers, pat);
    if (h == NULL)
        return NULL;
    h += strlen(pat);
    while (*h == ' ')
        h++;
    snprintf(value, sizeof value, "%.*s", (int)strcspn(h, "\r\n"), h);
    return value;
}
