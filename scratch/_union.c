/* The key walk of scratch.index.schema.Union: the C half of Union._walk_py.
 *
 * walk(obj, level, depth, nkeys, max_depth, max_keys, names, json_type)
 *     -> (visits, nkeys, more_keys)
 *
 * Adds the keys of the dict ``obj`` (and of its dict values, down to ``max_depth``) to the
 * key tree ``level``: a dict of key -> [count, {type name: count}, max length, children].
 * A key that is not a string (YAML's 1, null) is counted under its ``str``. A key not in the
 * tree is added while fewer than ``max_keys`` keys were added (``nkeys`` so
 * far); past that it is counted in ``more_keys`` instead. A value's type name is
 * ``names[type(value)]``, else ``json_type(value)``. ``visits`` is the number of keys looked
 * at (the sum of the lengths of the dicts walked). Same results, in the same order, as the
 * pure-Python twin; a test holds both to it on the corpus.
 *
 * Every step is a dict or list operation on objects the caller owns, with the GIL held (the
 * values are Python objects): the gain over the twin is the interpreter's dispatch.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_ssize_t visits;
    Py_ssize_t nkeys;
    Py_ssize_t more;
    long max_depth;
    Py_ssize_t max_keys;
    PyObject *names;
    PyObject *json_type;
} Walk;

/* level[...][slot] += by (an int) */
static int bump(PyObject *entry, Py_ssize_t slot) {
    PyObject *old = PyList_GET_ITEM(entry, slot);
    Py_ssize_t n = PyLong_AsSsize_t(old);
    if (n == -1 && PyErr_Occurred()) return -1;
    PyObject *now = PyLong_FromSsize_t(n + 1);
    if (now == NULL) return -1;
    PyList_SET_ITEM(entry, slot, now);
    Py_DECREF(old);
    return 0;
}

static PyObject *new_entry(void) {
    PyObject *zero = PyLong_FromLong(0), *minus = PyLong_FromLong(-1);
    PyObject *types = PyDict_New(), *children = PyDict_New();
    PyObject *entry = NULL;
    if (zero && minus && types && children) entry = PyList_New(4);
    if (entry == NULL) {
        Py_XDECREF(zero);
        Py_XDECREF(minus);
        Py_XDECREF(types);
        Py_XDECREF(children);
        return NULL;
    }
    PyList_SET_ITEM(entry, 0, zero);
    PyList_SET_ITEM(entry, 1, types);
    PyList_SET_ITEM(entry, 2, minus);
    PyList_SET_ITEM(entry, 3, children);
    return entry;
}

static int count_type(PyObject *types, PyObject *name) {
    PyObject *got = PyDict_GetItemWithError(types, name); /* borrowed */
    Py_ssize_t n = 0;
    if (got != NULL) {
        n = PyLong_AsSsize_t(got);
        if (n == -1 && PyErr_Occurred()) return -1;
    } else if (PyErr_Occurred()) {
        return -1;
    }
    PyObject *now = PyLong_FromSsize_t(n + 1);
    if (now == NULL) return -1;
    int r = PyDict_SetItem(types, name, now);
    Py_DECREF(now);
    return r;
}

static int walk(Walk *w, PyObject *obj, PyObject *level, long depth);

/* one key ``k`` of a walked dict, its value ``v`` */
static int visit(Walk *w, PyObject *level, long depth, PyObject *k, PyObject *v) {
    int deeper = depth < w->max_depth;
    {
        /* a YAML key (1, null) is counted under its text */
        PyObject *key = PyUnicode_CheckExact(k) ? (Py_INCREF(k), k) : PyObject_Str(k);
        if (key == NULL) return -1;
        PyObject *entry = PyDict_GetItemWithError(level, key); /* borrowed */
        if (entry == NULL) {
            if (PyErr_Occurred() || w->nkeys >= w->max_keys) {
                Py_DECREF(key);
                if (PyErr_Occurred()) return -1;
                w->more++;
                return 0;
            }
            w->nkeys++;
            entry = new_entry();
            int r = entry == NULL ? -1 : PyDict_SetItem(level, key, entry);
            Py_XDECREF(entry); /* the tree holds it */
            if (r < 0) {
                Py_DECREF(key);
                return -1;
            }
        }
        Py_DECREF(key);
        if (!PyList_CheckExact(entry) || PyList_GET_SIZE(entry) != 4
                || !PyDict_CheckExact(PyList_GET_ITEM(entry, 1))
                || !PyDict_CheckExact(PyList_GET_ITEM(entry, 3))) {
            PyErr_SetString(PyExc_TypeError, "a key tree entry is not [count, {}, length, {}]");
            return -1;
        }
        Py_INCREF(entry); /* held across the calls below, which may run Python code */
        int failed = bump(entry, 0) < 0;
        if (!failed) {
            PyObject *name = PyDict_GetItemWithError(w->names, (PyObject *)Py_TYPE(v));
            PyObject *made = NULL;
            if (name == NULL && !PyErr_Occurred()) name = made = PyObject_CallOneArg(w->json_type, v);
            failed = name == NULL || count_type(PyList_GET_ITEM(entry, 1), name) < 0;
            Py_XDECREF(made);
        }
        if (!failed && (PyUnicode_CheckExact(v) || PyList_CheckExact(v) || PyDict_CheckExact(v))) {
            Py_ssize_t n = PyObject_Length(v);
            Py_ssize_t most = PyLong_AsSsize_t(PyList_GET_ITEM(entry, 2));
            if (n < 0 || (most == -1 && PyErr_Occurred())) {
                failed = 1;
            } else {
                if (n > most) {
                    PyObject *now = PyLong_FromSsize_t(n);
                    if (now == NULL) {
                        failed = 1;
                    } else {
                        PyObject *old = PyList_GET_ITEM(entry, 2);
                        PyList_SET_ITEM(entry, 2, now);
                        Py_DECREF(old);
                    }
                }
                if (!failed && PyDict_CheckExact(v) && deeper && n)
                    failed = walk(w, v, PyList_GET_ITEM(entry, 3), depth + 1) < 0;
            }
        }
        Py_DECREF(entry);
        return failed ? -1 : 0;
    }
}

static int walk(Walk *w, PyObject *obj, PyObject *level, long depth) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    w->visits += PyDict_GET_SIZE(obj);
    while (PyDict_Next(obj, &pos, &k, &v)) {
        /* held: json_type is Python code, which might change ``obj`` */
        Py_INCREF(k);
        Py_INCREF(v);
        int r = visit(w, level, depth, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r < 0) return -1;
    }
    return 0;
}

static PyObject *union_walk(PyObject *self, PyObject *args) {
    PyObject *obj, *level;
    long depth;
    Walk w = {0};
    if (!PyArg_ParseTuple(args, "O!O!lnlnO!O:walk", &PyDict_Type, &obj, &PyDict_Type, &level,
                          &depth, &w.nkeys, &w.max_depth, &w.max_keys, &PyDict_Type, &w.names,
                          &w.json_type))
        return NULL;
    if (walk(&w, obj, level, depth) < 0) return NULL;
    return Py_BuildValue("nnn", w.visits, w.nkeys, w.more);
}

static PyMethodDef methods[] = {
    {"walk", union_walk, METH_VARARGS,
     "walk(obj, level, depth, nkeys, max_depth, max_keys, names, json_type) -> "
     "(visits, nkeys, more_keys)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_union",
                                    "The key walk of scratch.index.schema.Union.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__union(void) { return PyModule_Create(&module); }
