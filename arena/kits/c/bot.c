/* {{name}}: an Arena bot in C (C99 + POSIX getline, compiles with `cc` alone).
 *
 * The arena/2 protocol is one JSON object per line on stdin/stdout. This bot needs no full JSON
 * parser: it finds the top-level "type", "request_id" and "legal_actions" of each message, and
 * answers an `act` by copying the raw JSON text of one element of legal_actions back unchanged:
 *   {"type":"action","request_id":N,"action":<element>}
 * Put your strategy in choose(); log to stderr, never to stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "{{name}}"
#define VERSION "1"

typedef struct { const char *start; size_t len; } Span;

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* The end of the JSON value starting at p (strings, numbers, literals, nested arrays/objects). */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : p;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '"') { p = skip_value(p) - 1; continue; }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') { if (--depth == 0) return p + 1; }
        }
        return p;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n') p++;
    return p;
}

/* The raw value of a top-level key of the object in line; len 0 when absent. */
static Span field(const char *line, const char *key) {
    Span none = {NULL, 0};
    size_t klen = strlen(key);
    const char *p = skip_ws(line);
    if (*p != '{') return none;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *k = p + 1, *kend = skip_value(p) - 1;
        p = skip_ws(kend + 1);
        if (*p != ':') return none;
        const char *v = skip_ws(p + 1), *vend = skip_value(v);
        if ((size_t)(kend - k) == klen && strncmp(k, key, klen) == 0) {
            Span s = {v, (size_t)(vend - v)};
            return s;
        }
        p = skip_ws(vend);
        if (*p != ',') return none;
        p = skip_ws(p + 1);
    }
    return none;
}

/* The elements of a JSON array span: fills out[] with up to max spans, returns the count. */
static int elements(Span array, Span *out, int max) {
    int n = 0;
    if (!array.len || *array.start != '[') return 0;
    const char *p = skip_ws(array.start + 1), *end = array.start + array.len;
    while (p < end && *p != ']' && n < max) {
        const char *e = skip_value(p);
        out[n].start = p;
        out[n].len = (size_t)(e - p);
        n++;
        p = skip_ws(e);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return n;
}

static int is(Span s, const char *text) {
    size_t n = strlen(text);
    return s.len == n + 2 && s.start[0] == '"' && strncmp(s.start + 1, text, n) == 0;
}

/* Your strategy: the index of the legal action to play (0 <= index < count). */
static int choose(const char *line, int count) {
    (void)line; /* the whole act message: observation included */
    (void)count;
    return 0;
}

#define MAX_ACTIONS 4096

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    static Span actions[MAX_ACTIONS];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (getline(&line, &cap, stdin) != -1) {
        Span type = field(line, "type");
        if (is(type, "hello")) {
            printf("{\"type\":\"ready\",\"name\":\"%s\",\"version\":\"%s\"}\n", NAME, VERSION);
        } else if (is(type, "act")) {
            Span id = field(line, "request_id");
            int n = elements(field(line, "legal_actions"), actions, MAX_ACTIONS);
            if (n == 0) { fprintf(stderr, "act without legal_actions\n"); continue; }
            int i = choose(line, n);
            if (i < 0 || i >= n) i = 0;
            printf("{\"type\":\"action\",\"request_id\":%.*s,\"action\":%.*s}\n",
                   (int)id.len, id.start, (int)actions[i].len, actions[i].start);
        } else if (is(type, "bye")) {
            break;
        }
        /* game_start, game_end and unknown message types need no answer. */
        fflush(stdout);
    }
    free(line);
    return 0;
}
