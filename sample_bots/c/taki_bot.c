/*
 * A Super Taki sample bot in C, speaking protocol version 1 (protocol/PROTOCOL.md).
 * No dependencies beyond the C library: it carries its own small MessagePack reader
 * and writer.
 *
 *   make -C sample_bots/c && sample_bots/c/taki_bot [NAME]
 *
 * Policy: break a +3 when it can; otherwise play the first card offered (keeping a
 * +3 Breaker, which costs three cards in one's own turn, for last); otherwise take the
 * first legal action. It always declares "last card" (an untrue declaration costs
 * nothing).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROTOCOL_VERSION 1
#define MAX_MESSAGE (1u << 20)   /* 1 MiB: the protocol's limit on one message */
#define MAX_ELEMENTS 65536u      /* entries of one array or map */
#define MAX_DEPTH 64             /* nesting; the protocol allows 32 inside a message */

/* ------------------------------------------------------------------ diagnostics */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("taki_bot: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ------------------------------------------------------------ MessagePack values */

typedef enum { V_NIL, V_BOOL, V_INT, V_STR, V_ARRAY, V_MAP, V_OTHER } vtype;

typedef struct value {
    vtype type;
    int64_t i;              /* V_BOOL: 0 or 1; V_INT: the number (clamped to int64) */
    const char *s;          /* V_STR: the bytes, inside the input buffer, not NUL-ended */
    uint32_t len;           /* V_STR: length in bytes */
    uint32_t n;             /* V_ARRAY: items; V_MAP: entries */
    struct value *items;    /* V_ARRAY: n items; V_MAP: 2n, key then value */
} value;

enum { P_OK = 0, P_MORE = 1, P_BAD = 2 };

typedef struct {
    const uint8_t *p;
    size_t len;
    size_t pos;
    const char *error;      /* why P_BAD */
} reader;

static int need(reader *r, size_t n)
{
    return r->len - r->pos >= n;
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t x = 0;
    for (int k = 0; k < n; k++)
        x = (x << 8) | p[k];
    return x;
}

/* Reads an n-byte big-endian length or number after the tag; P_MORE if missing. */
static int take_uint(reader *r, int n, uint64_t *out)
{
    if (!need(r, (size_t)n))
        return P_MORE;
    *out = be(r->p + r->pos, n);
    r->pos += (size_t)n;
    return P_OK;
}

static int skip_bytes(reader *r, uint64_t n)
{
    if (r->len - r->pos < n)
        return P_MORE;
    r->pos += (size_t)n;
    return P_OK;
}

static void free_value(value *v);

/*
 * Decodes one value at r->pos into *v. With build == 0 it only checks that the value
 * is complete and well formed, and allocates nothing (v->items stays NULL); with
 * build != 0 it builds the whole tree, to be released with free_value().
 * Returns P_OK (r->pos moved past the value), P_MORE (the input ends inside the value)
 * or P_BAD (malformed).
 */
static int parse(reader *r, value *v, int build, int depth)
{
    memset(v, 0, sizeof *v);
    if (depth > MAX_DEPTH) {
        r->error = "nesting too deep";
        return P_BAD;
    }
    if (!need(r, 1))
        return P_MORE;
    uint8_t tag = r->p[r->pos++];
    uint64_t n = 0;
    int rc;
    int is_map = 0;

    if (tag <= 0x7f) {                      /* positive fixint */
        v->type = V_INT;
        v->i = tag;
        return P_OK;
    }
    if (tag >= 0xe0) {                      /* negative fixint */
        v->type = V_INT;
        v->i = (int8_t)tag;
        return P_OK;
    }
    if (tag >= 0xa0 && tag <= 0xbf) {       /* fixstr */
        n = tag & 0x1f;
        goto string;
    }
    if (tag >= 0x90 && tag <= 0x9f) {       /* fixarray */
        n = tag & 0x0f;
        goto container;
    }
    if (tag >= 0x80 && tag <= 0x8f) {       /* fixmap */
        n = tag & 0x0f;
        is_map = 1;
        goto container;
    }
    switch (tag) {
    case 0xc0:
        v->type = V_NIL;
        return P_OK;
    case 0xc2:
    case 0xc3:
        v->type = V_BOOL;
        v->i = tag == 0xc3;
        return P_OK;
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {   /* uint 8/16/32/64 */
        uint64_t x;
        if ((rc = take_uint(r, 1 << (tag - 0xcc), &x)) != P_OK)
            return rc;
        v->type = V_INT;
        v->i = x > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)x;
        return P_OK;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {   /* int 8/16/32/64 */
        int bytes = 1 << (tag - 0xd0);
        uint64_t x;
        if ((rc = take_uint(r, bytes, &x)) != P_OK)
            return rc;
        v->type = V_INT;
        if (bytes < 8 && (x >> (8 * bytes - 1)))  /* sign-extend */
            x |= ~(uint64_t)0 << (8 * bytes);
        v->i = x > (uint64_t)INT64_MAX ? -(int64_t)(~x) - 1 : (int64_t)x;
        return P_OK;
    }
    case 0xd9: case 0xda: case 0xdb:                /* str 8/16/32 */
        if ((rc = take_uint(r, 1 << (tag - 0xd9), &n)) != P_OK)
            return rc;
        goto string;
    case 0xdc: case 0xdd:                           /* array 16/32 */
        if ((rc = take_uint(r, 2 << (tag - 0xdc), &n)) != P_OK)
            return rc;
        goto container;
    case 0xde: case 0xdf:                           /* map 16/32 */
        if ((rc = take_uint(r, 2 << (tag - 0xde), &n)) != P_OK)
            return rc;
        is_map = 1;
        goto container;
    /* Types the protocol never sends; skipped whole so a stray one cannot derail us. */
    case 0xca:                                      /* float 32 */
        v->type = V_OTHER;
        return skip_bytes(r, 4);
    case 0xcb:                                      /* float 64 */
        v->type = V_OTHER;
        return skip_bytes(r, 8);
    case 0xc4: case 0xc5: case 0xc6:                /* bin 8/16/32 */
        if ((rc = take_uint(r, 1 << (tag - 0xc4), &n)) != P_OK)
            return rc;
        v->type = V_OTHER;
        return skip_bytes(r, n);
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:  /* fixext 1/2/4/8/16 */
        v->type = V_OTHER;
        return skip_bytes(r, 1 + (1u << (tag - 0xd4)));
    case 0xc7: case 0xc8: case 0xc9:                /* ext 8/16/32 */
        if ((rc = take_uint(r, 1 << (tag - 0xc7), &n)) != P_OK)
            return rc;
        v->type = V_OTHER;
        return skip_bytes(r, n + 1);
    default:                                        /* 0xc1: never used */
        r->error = "reserved byte 0xc1";
        return P_BAD;
    }

string:
    if (n > MAX_MESSAGE) {
        r->error = "string too long";
        return P_BAD;
    }
    if (!need(r, (size_t)n))
        return P_MORE;
    v->type = V_STR;
    v->s = (const char *)(r->p + r->pos);
    v->len = (uint32_t)n;
    r->pos += (size_t)n;
    return P_OK;

container:
    if (n > MAX_ELEMENTS) {
        r->error = "array or map too large";
        return P_BAD;
    }
    v->type = is_map ? V_MAP : V_ARRAY;
    v->n = (uint32_t)n;
    size_t count = (size_t)n * (is_map ? 2 : 1);
    /* Every element takes at least one byte: a short buffer cannot hold them yet. */
    if (r->len - r->pos < count)
        return P_MORE;
    if (build && count) {
        v->items = calloc(count, sizeof *v->items);
        if (!v->items)
            die("out of memory");
    }
    for (size_t k = 0; k < count; k++) {
        value shallow;
        value *child = build ? &v->items[k] : &shallow;
        rc = parse(r, child, build, depth + 1);
        if (rc == P_OK && is_map && k % 2 == 0 && child->type != V_STR) {
            r->error = "map key is not a string";
            rc = P_BAD;
        }
        if (rc != P_OK) {
            free_value(v);
            return rc;
        }
    }
    return P_OK;
}

static void free_value(value *v)
{
    if ((v->type == V_ARRAY || v->type == V_MAP) && v->items) {
        size_t count = (size_t)v->n * (v->type == V_MAP ? 2 : 1);
        for (size_t k = 0; k < count; k++)
            free_value(&v->items[k]);
        free(v->items);
    }
    v->items = NULL;
    v->n = 0;
}

static int str_is(const value *v, const char *s)
{
    size_t len = strlen(s);
    return v && v->type == V_STR && v->len == len && memcmp(v->s, s, len) == 0;
}

/* The value of key in map m, or NULL. */
static const value *get(const value *m, const char *key)
{
    if (!m || m->type != V_MAP)
        return NULL;
    for (uint32_t k = 0; k < m->n; k++)
        if (str_is(&m->items[2 * k], key))
            return &m->items[2 * k + 1];
    return NULL;
}

static int get_int(const value *m, const char *key, int64_t *out)
{
    const value *v = get(m, key);
    if (!v || v->type != V_INT)
        return 0;
    *out = v->i;
    return 1;
}

/* ------------------------------------------------------------ MessagePack writer */

typedef struct {
    uint8_t data[256];
    size_t len;
} writer;

static void put(writer *w, const void *bytes, size_t n)
{
    if (w->len + n > sizeof w->data)
        die("answer too long");
    memcpy(w->data + w->len, bytes, n);
    w->len += n;
}

static void put_byte(writer *w, uint8_t b)
{
    put(w, &b, 1);
}

static void put_be(writer *w, uint64_t x, int n)
{
    for (int k = n - 1; k >= 0; k--)
        put_byte(w, (uint8_t)(x >> (8 * k)));
}

static void put_map(writer *w, uint8_t entries)  /* up to 15 entries */
{
    put_byte(w, (uint8_t)(0x80 | entries));
}

static void put_str(writer *w, const char *s)
{
    size_t n = strlen(s);
    if (n < 32) {
        put_byte(w, (uint8_t)(0xa0 | n));
    } else if (n < 256) {
        put_byte(w, 0xd9);
        put_be(w, n, 1);
    } else {
        put_byte(w, 0xda);
        put_be(w, n, 2);
    }
    put(w, s, n);
}

static void put_uint(writer *w, uint64_t x)
{
    if (x < 128) {
        put_byte(w, (uint8_t)x);
    } else if (x < 0x100) {
        put_byte(w, 0xcc);
        put_be(w, x, 1);
    } else if (x < 0x10000) {
        put_byte(w, 0xcd);
        put_be(w, x, 2);
    } else if (x < 0x100000000u) {
        put_byte(w, 0xce);
        put_be(w, x, 4);
    } else {
        put_byte(w, 0xcf);
        put_be(w, x, 8);
    }
}

static void put_bool(writer *w, int b)
{
    put_byte(w, b ? 0xc3 : 0xc2);
}

/* Writes the whole message to stdout at once; there is no stdio buffer to flush. */
static void send(const writer *w)
{
    size_t done = 0;
    while (done < w->len) {
        ssize_t k = write(STDOUT_FILENO, w->data + done, w->len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("cannot write to stdout: %s", strerror(errno));
        done += (size_t)k;
    }
}

/* ------------------------------------------------------------------------ policy */

static const char *bot_name = "c-bot";

static int choose(const value *legal)
{
    int first_play = -1, breaker_play = -1;
    for (uint32_t k = 0; k < legal->n; k++) {
        const value *kind = get(&legal->items[k], "kind");
        if (str_is(kind, "break"))
            return (int)k;
        if (str_is(kind, "play") || str_is(kind, "play_combo")) {
            if (str_is(get(&legal->items[k], "card"), "+3_breaker")) {
                if (breaker_play < 0)
                    breaker_play = (int)k;
            } else if (first_play < 0) {
                first_play = (int)k;
            }
        }
    }
    if (first_play >= 0)
        return first_play;
    if (breaker_play >= 0)
        return breaker_play;
    return 0;
}

/* Returns 0 to go on, 1 to exit. */
static int handle(const value *msg)
{
    const value *type = get(msg, "type");
    writer w = {.len = 0};

    if (str_is(type, "hello")) {
        int64_t version = 0;
        if (!get_int(msg, "protocol", &version) || version != PROTOCOL_VERSION)
            die("unsupported protocol version");
        put_map(&w, 3);
        put_str(&w, "type");
        put_str(&w, "bot_hello");
        put_str(&w, "protocol");
        put_uint(&w, PROTOCOL_VERSION);
        put_str(&w, "name");
        put_str(&w, bot_name);
        send(&w);
    } else if (str_is(type, "decide") || str_is(type, "react")) {
        int64_t id = 0;
        const value *legal = get(msg, "legal");
        if (!get_int(msg, "id", &id) || id < 0 || !legal || legal->type != V_ARRAY
            || legal->n == 0)
            die("malformed request");
        put_map(&w, 4);
        put_str(&w, "type");
        put_str(&w, "action");
        put_str(&w, "id");
        put_uint(&w, (uint64_t)id);
        put_str(&w, "choice");
        put_uint(&w, (uint64_t)choose(legal));
        put_str(&w, "last_card");
        put_bool(&w, 1);
        send(&w);
    } else if (str_is(type, "game_start") || str_is(type, "game_over")) {
        /* nothing to remember for this policy */
    } else if (str_is(type, "error")) {
        const value *reason = get(msg, "reason"), *text = get(msg, "message");
        int has_reason = reason && reason->type == V_STR, has_text = text && text->type == V_STR;
        fprintf(stderr, "taki_bot: forfeited: %.*s: %.*s\n",
                has_reason ? (int)reason->len : 0, has_reason ? reason->s : "",
                has_text ? (int)text->len : 0, has_text ? text->s : "");
        return 1;
    } else if (str_is(type, "shutdown")) {
        return 1;
    } else {
        fprintf(stderr, "taki_bot: ignoring a message of unknown type\n");
    }
    return 0;
}

/* ------------------------------------------------------------------------- input */

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] != '\0')
        bot_name = argv[1];
    signal(SIGPIPE, SIG_IGN);  /* a closed pipe is reported by write() instead */

    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        die("out of memory");

    for (;;) {
        if (len == cap) {
            if (cap >= 2 * (size_t)MAX_MESSAGE)
                die("message over the size limit");
            cap *= 2;
            uint8_t *grown = realloc(buf, cap);
            if (!grown)
                die("out of memory");
            buf = grown;
        }
        ssize_t got = read(STDIN_FILENO, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            die("cannot read stdin: %s", strerror(errno));
        if (got == 0) {
            if (len)
                fprintf(stderr, "taki_bot: input ended inside a message\n");
            break;  /* end of input: the referee has gone */
        }
        len += (size_t)got;

        /* Decode every complete message in the buffer; keep the rest for later. */
        size_t start = 0;
        for (;;) {
            reader check = {buf + start, len - start, 0, NULL};
            value shallow;
            int rc = parse(&check, &shallow, 0, 0);
            if (rc == P_MORE)
                break;
            if (rc == P_BAD)
                die("malformed input: %s", check.error ? check.error : "?");
            reader r = {buf + start, len - start, 0, NULL};
            value msg;
            if (parse(&r, &msg, 1, 0) != P_OK)
                die("malformed input");
            int stop = msg.type == V_MAP ? handle(&msg) : 0;
            if (msg.type != V_MAP)
                fprintf(stderr, "taki_bot: ignoring a message that is not a map\n");
            free_value(&msg);
            start += r.pos;
            if (stop) {
                free(buf);
                return 0;
            }
        }
        memmove(buf, buf + start, len - start);
        len -= start;
    }
    free(buf);
    return 0;
}
