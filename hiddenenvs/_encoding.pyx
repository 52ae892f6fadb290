# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled building block of the games' observation tensors.

An env builds one information-state tensor per step; a game that writes it as "zeros
with ones at these places" spent most of that time in numpy's per-call overhead
(``np.zeros`` then ``tensor[index_list] = 1``, which converts the Python list first).
"""

cimport numpy as cnp

cnp.import_array()


def float32_ones_at(tuple shape, list indices):
    """A new C-ordered float32 array of ``shape``, zero but 1.0 at the flat ``indices``
    (non-negative, below the size; repeats allowed)."""
    cdef cnp.npy_intp dims[8]
    cdef Py_ssize_t nd = len(shape), axis
    cdef Py_ssize_t size = 1, index
    if nd > 8:
        raise ValueError(f"float32_ones_at: at most 8 dimensions, got shape {shape}")
    for axis in range(nd):
        dims[axis] = shape[axis]
        if dims[axis] < 0:
            raise ValueError(f"float32_ones_at: negative dimension in shape {shape}")
        size *= dims[axis]
    tensor = cnp.PyArray_ZEROS(<int> nd, dims, cnp.NPY_FLOAT32, 0)
    cdef float *data = <float *> cnp.PyArray_DATA(tensor)
    for item in indices:
        index = item
        if index < 0 or index >= size:
            raise IndexError(f"float32_ones_at: index {index} is outside a tensor of shape {shape}")
        data[index] = 1.0
    return tensor
