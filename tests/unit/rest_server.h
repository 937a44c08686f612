/*
 * tests/unit/rest_server.h: a scripted HTTP server on 127.0.0.1 for the REST catalog tests
 * (test_rest_catalog.c, test_rest_credentials.c): each `method path` (query included) answers
 * its scripted steps in turn, the last one repeating, and every request is recorded. A request
 * no route names gets 404.
 */
#ifndef ICMT_REST_SERVER_H
#define ICMT_REST_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define MAX_REQS 64
#define MAX_ROUTES 16
#define MAX_STEPS 4

/* DROP: read the request, close without an answer; KEEP: answer and keep the connection
 * open for the client's next request (keep-alive) */
enum { ANSWER = 0, DROP = 1, KEEP = 2 };

typedef struct step {
    int status;
    const char *headers; /* extra header lines, each ending in \r\n; NULL none */
    const char *body;
    int action;
} step;

typedef struct route {
    char method[8];
    char path[512];
    step steps[MAX_STEPS];
    int n_steps, next;
} route;

typedef struct req {
    char method[8];
    char path[1024];
    char *headers;
    char *body;
} req;

typedef struct server {
    int fd, port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t mu;
    req reqs[MAX_REQS];
    int n_reqs;
    route routes[MAX_ROUTES];
    int n_routes;
} server;

/* Script `method path` to answer with `steps` in turn (the last one repeats). */
void route_set(server *s, const char *method, const char *path, const step *steps, int n);
/* One answer, repeated. */
void route1(server *s, const char *method, const char *path, int status, const char *body);
/* A new server listening on a free loopback port (s->port); server_stop ends and frees it. */
server *server_start(void);
void server_stop(server *s);
/* How many requests `method path` the server received. */
int count(server *s, const char *method, const char *path);
/* The i-th request (0 = first; negative: from the end). */
const req *nth(server *s, int i);
/* The value of header `name` of a recorded request (static buffer), or NULL. */
const char *header(const req *r, const char *name);

#endif /* ICMT_REST_SERVER_H */
