// Package npy reads and writes NumPy .npy files.
//
// The .npy format (see numpy.lib.format) stores one n-dimensional array:
// a magic string "\x93NUMPY", a two-byte format version, the length of a
// header, the header itself — a Python dict literal such as
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//
// padded with spaces and terminated by '\n' so that the array data starts at
// an aligned offset — and finally the raw element data.
//
// This package supports the element types goamp computes with: float32
// ('<f4'), float64 ('<f8') and int32 ('<i4'), in little-endian ('<'),
// big-endian ('>') and native ('=') byte order. [Read] accepts format
// versions 1.0, 2.0 and 3.0, converts big-endian data to native values and
// transposes Fortran-ordered files, so an [Array] always holds its elements
// in C (row-major) order. [Write] produces exactly the bytes NumPy's
// numpy.save writes for the same array: version 1.0 (2.0 if the header
// needed it), little-endian, C order, data aligned to 64 bytes.
//
// Reading is defensive, because .npy files are often downloaded or handed
// over by other programs: the header is parsed by a small tokenizer for the
// subset of Python literals the format uses (never evaluated), its length is
// bounded, the element count is computed with overflow checks, and the data
// is read incrementally, so a tiny file claiming an enormous shape fails with
// [ErrTruncated] without a large allocation. Object arrays, whose payload is
// a Python pickle, are rejected with [ErrObjectArray] and never unpickled.
//
// All errors returned by this package have one-line messages starting with
// "npy: " and wrap one of the sentinel errors ([ErrNotNPY], [ErrTruncated],
// [ErrCorrupt], [ErrUnsupportedDType], [ErrObjectArray], [ErrInvalidArray],
// [ErrIsDirectory]) or, for I/O failures, the underlying I/O error; test for
// them with errors.Is.
//
// [WriteFile] replaces its destination atomically: readers of the path see
// either the old file or the complete new one, never a partial write.
package npy
