/* The bootstrap's draws and sums in C: numpy's resampling stream, drawn and used in one loop.

   `numpy.random.default_rng(seed).integers(0, n, size, dtype=np.int64)` for 1 < n < 2**32 is:
   a PCG64 generator (128-bit LCG, XSL-RR output), its 64-bit outputs cut into two 32-bit halves
   (low first, the high half kept for the next call), and each half mapped to [0, n) by
   Lemire's multiply-shift, drawing again while the low product word is below (2**32 - n) % n.
   Every step there is plain arithmetic, so the same documents can be drawn here from the
   generator's state, without numpy's (resamples x documents) index block in memory: each
   drawn document's counts are added at once (gather_sums) or its weight counted
   (weights). This is written here because numpy has no call that draws and sums in one pass,
   and the two passes (draw a block, then gather it) were 0.85 s of a 0.1M-document score's
   1.2 s of serial time (evaluation/stats.py, where the Python side checks at first use that
   these draws equal numpy's on the installed numpy, and falls back to numpy otherwise).

   Optional: an install without a C compiler has no such module and stats.py uses numpy. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <ctype.h>
#include <string.h>

typedef unsigned __int128 u128;

typedef struct {
    u128 state;
    u128 inc;
    int has_half;  /* a high half of the last 64-bit output is waiting to be used */
    uint32_t half;
} Stream;

/* PCG64's 128-bit multiplier */
#define MULT_HI 0x2360ED051FC65DA4ULL
#define MULT_LO 0x4385DF649FCCF645ULL

static inline uint64_t next64(Stream *s)
{
    const u128 mult = ((u128)MULT_HI << 64) | MULT_LO;
    s->state = s->state * mult + s->inc;
    uint64_t folded = (uint64_t)(s->state >> 64) ^ (uint64_t)s->state;
    unsigned rot = (unsigned)(s->state >> 122);
    return (folded >> rot) | (folded << ((64 - rot) & 63));
}

static inline uint32_t next32(Stream *s)
{
    if (s->has_half) {
        s->has_half = 0;
        return s->half;
    }
    uint64_t word = next64(s);
    s->has_half = 1;
    s->half = (uint32_t)(word >> 32);
    return (uint32_t)word;
}

/* A draw in [0, n), 1 < n < 2**32; `threshold` is (2**32 - n) % n. */
static inline uint32_t below(Stream *s, uint64_t n, uint32_t threshold)
{
    uint64_t m = (uint64_t)next32(s) * n;
    while ((uint32_t)m < threshold) {
        m = (uint64_t)next32(s) * n;
    }
    return (uint32_t)(m >> 32);
}

/* Arguments shared by every function: the generator's state as numpy gives it (state and
   increment cut into high and low 64-bit words, has_uint32, uinteger) and n. */
typedef struct {
    Stream stream;
    uint64_t n;
    uint32_t threshold;
} Draws;

static int draws_from(Draws *d, unsigned long long state_hi, unsigned long long state_lo,
                      unsigned long long inc_hi, unsigned long long inc_lo, int has_half,
                      unsigned long long half, unsigned long long n)
{
    if (n < 2 || n > 0xFFFFFFFFULL) {
        PyErr_SetString(PyExc_ValueError, "n must be in [2, 2**32)");
        return -1;
    }
    d->stream.state = ((u128)state_hi << 64) | state_lo;
    d->stream.inc = ((u128)inc_hi << 64) | inc_lo;
    d->stream.has_half = has_half != 0;
    d->stream.half = (uint32_t)half;
    d->n = n;
    d->threshold = (uint32_t)(((1ULL << 32) - n) % n);
    return 0;
}

static PyObject *state_of(const Draws *d)
{
    return Py_BuildValue("(KKiK)", (unsigned long long)(d->stream.state >> 64),
                         (unsigned long long)d->stream.state, d->stream.has_half,
                         (unsigned long long)d->stream.half);
}

/* The arguments every function takes: the generator's state as numpy gives it (state and
   increment cut into high and low 64-bit words, has_uint32, uinteger), n, then `counts` when
   asked for (C-contiguous) and `out` (C-contiguous, writable). 0, or -1 with an exception set
   and no buffer held. */
static int parse(PyObject *args, Draws *d, Py_buffer *counts, Py_buffer *out)
{
    unsigned long long state_hi, state_lo, inc_hi, inc_lo, half, n;
    int has_half;
    PyObject *counts_obj = NULL, *out_obj = NULL;
    int parsed = counts != NULL
                     ? PyArg_ParseTuple(args, "KKKKpKKOO", &state_hi, &state_lo, &inc_hi,
                                        &inc_lo, &has_half, &half, &n, &counts_obj, &out_obj)
                     : PyArg_ParseTuple(args, "KKKKpKKO", &state_hi, &state_lo, &inc_hi,
                                        &inc_lo, &has_half, &half, &n, &out_obj);
    if (!parsed || draws_from(d, state_hi, state_lo, inc_hi, inc_lo, has_half, half, n) < 0) {
        return -1;
    }
    if (counts != NULL &&
        PyObject_GetBuffer(counts_obj, counts, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    if (PyObject_GetBuffer(out_obj, out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) <
        0) {
        if (counts != NULL) {
            PyBuffer_Release(counts);
        }
        return -1;
    }
    return 0;
}

/* A buffer's item type as its struct letter (a byte-order prefix dropped; the item size is
   checked apart), or 0 for a format of more than one item. */
static char letter(const Py_buffer *buf)
{
    const char *format = buf->format != NULL ? buf->format : "B";
    if (*format == '@' || *format == '=' || *format == '<') {
        format++;
    }
    return (format[0] != '\0' && format[1] == '\0') ? format[0] : 0;
}

static int refuse(const char *message)
{
    PyErr_SetString(PyExc_ValueError, message);
    return -1;
}

#define RELEASE(buf)                                                                       \
    do {                                                                                   \
        if ((buf).obj != NULL) {                                                           \
            PyBuffer_Release(&(buf));                                                      \
        }                                                                                  \
    } while (0)

PyDoc_STRVAR(draw_doc,
             "draw(state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger, n, out)\n--\n\n"
             "Fill `out` (uint32, C-contiguous) with draws in [0, n), as numpy's integers;\n"
             "return the generator's state after them (state_hi, state_lo, has_uint32,\n"
             "uinteger).");

static PyObject *draw(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer out = {0};
    Draws d;
    if (parse(args, &d, NULL, &out) < 0) {
        return NULL;
    }
    if (letter(&out) != 'I' || out.itemsize != 4) {
        refuse("out: uint32 expected");
        RELEASE(out);
        return NULL;
    }
    uint32_t *o = (uint32_t *)out.buf;
    Py_ssize_t count = out.len / 4;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        o[i] = below(&d.stream, d.n, d.threshold);
    }
    Py_END_ALLOW_THREADS
    RELEASE(out);
    return state_of(&d);
}

PyDoc_STRVAR(gather_sums_doc,
             "gather_sums(state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger, n, counts,\n"
             "            out)\n--\n\n"
             "For each row of `out` (int64, resamples x k, C-contiguous): n draws, and the sum\n"
             "of the drawn rows of `counts` (n x k, C-contiguous, integers of 1, 2, 4 or 8\n"
             "bytes, signed or not), added as 64-bit integers (wrapping, as numpy's int64\n"
             "sums). Returns the generator's state after the draws.");

/* One loop per item type: each draw adds the k counts of the drawn document's row. */
#define GATHER(T)                                                                          \
    do {                                                                                   \
        const T *w = (const T *)counts.buf;                                                \
        for (Py_ssize_t r = 0; r < rows; r++) {                                            \
            uint64_t *acc = o + r * k;                                                     \
            memset(acc, 0, (size_t)k * 8);                                                 \
            for (uint64_t j = 0; j < d.n; j++) {                                           \
                const T *row = w + (Py_ssize_t)below(&d.stream, d.n, d.threshold) * k;     \
                for (Py_ssize_t c = 0; c < k; c++) {                                       \
                    acc[c] += (uint64_t)(int64_t)row[c];                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

static int gather_checked(Py_buffer *counts, Py_buffer *out, uint64_t n)
{
    char type = letter(counts);
    Py_ssize_t size = counts->itemsize;
    if (type == 0 || strchr("bhilqBHILQ", type) == NULL ||
        (size != 1 && size != 2 && size != 4 && size != 8)) {
        return refuse("counts: integers expected");
    }
    if ((letter(out) != 'l' && letter(out) != 'q') || out->itemsize != 8) {
        return refuse("out: int64 expected");
    }
    Py_ssize_t k = counts->len / size / (Py_ssize_t)n;
    if (k < 1 || counts->len != (Py_ssize_t)n * k * size || out->len % (8 * k) != 0) {
        return refuse("counts and out do not match n");
    }
    return 0;
}

static PyObject *gather_sums(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer counts = {0}, out = {0};
    Draws d;
    if (parse(args, &d, &counts, &out) < 0) {
        return NULL;
    }
    if (gather_checked(&counts, &out, d.n) < 0) {
        RELEASE(counts);
        RELEASE(out);
        return NULL;
    }
    int is_signed = islower((unsigned char)letter(&counts));
    Py_ssize_t size = counts.itemsize;
    Py_ssize_t k = counts.len / size / (Py_ssize_t)d.n;
    uint64_t *o = (uint64_t *)out.buf;
    Py_ssize_t rows = out.len / 8 / k;
    Py_BEGIN_ALLOW_THREADS
    switch (size * (is_signed ? -1 : 1)) {
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;
    case 4: GATHER(uint32_t); break;
    case 8: GATHER(uint64_t); break;
    case -1: GATHER(int8_t); break;
    case -2: GATHER(int16_t); break;
    case -4: GATHER(int32_t); break;
    default: GATHER(int64_t); break;
    }
    Py_END_ALLOW_THREADS
    RELEASE(counts);
    RELEASE(out);
    return state_of(&d);
}

PyDoc_STRVAR(weights_doc,
             "weights(state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger, n, out)\n--\n\n"
             "For each row of `out` (float32 or float64, rows x n, C-contiguous): n draws, and\n"
             "how often each document was drawn (a bincount of the row). Returns the state.");

/* One loop per float type: each row zeroed, then one added at each drawn document. */
#define COUNT(T, ONE)                                                                      \
    do {                                                                                   \
        T *o = (T *)out.buf;                                                               \
        for (Py_ssize_t start = 0; start < cells; start += (Py_ssize_t)d.n) {              \
            for (uint64_t j = 0; j < d.n; j++) {                                           \
                o[start + below(&d.stream, d.n, d.threshold)] += ONE;                      \
            }                                                                              \
        }                                                                                  \
    } while (0)

static PyObject *weights(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer out = {0};
    Draws d;
    if (parse(args, &d, NULL, &out) < 0) {
        return NULL;
    }
    char type = letter(&out);
    Py_ssize_t size = out.itemsize;
    if (!((type == 'f' && size == 4) || (type == 'd' && size == 8)) ||
        out.len % (size * (Py_ssize_t)d.n) != 0) {
        refuse("out must hold float32 or float64 rows of n");
        RELEASE(out);
        return NULL;
    }
    Py_ssize_t cells = out.len / size;
    Py_BEGIN_ALLOW_THREADS
    memset(out.buf, 0, (size_t)out.len);
    if (type == 'f') {
        COUNT(float, 1.0f);
    } else {
        COUNT(double, 1.0);
    }
    Py_END_ALLOW_THREADS
    RELEASE(out);
    return state_of(&d);
}

static PyMethodDef methods[] = {
    {"draw", draw, METH_VARARGS, draw_doc},
    {"gather_sums", gather_sums, METH_VARARGS, gather_sums_doc},
    {"weights", weights, METH_VARARGS, weights_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_resample",
    "numpy's bootstrap draws (PCG64, bounded integers) and their sums in one loop.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__resample(void) { return PyModule_Create(&module); }
