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
// ('<f4'), float64 ('<f8') and int32 ('<i4'), and float16 ('<f2', as
// half.Float16 bits), in little-endian ('<'),
// big-endian ('>') and native ('=') byte order. [Read] accepts format
// versions 1.0, 2.0 and 3.0, converts big-endian data to native values and
// transposes Fortran-ordered files, so an [Array] always holds its elements
// in C (row-major) order. [Write] produces exactly the bytes NumPy's
// numpy.save writes for the same array: version 1.0 (2.0 if the header
// needed it), little-endian, C order, data aligned to 64 bytes.
//
// # Reading
//
// [Read] and [ReadFile] read a whole array. To look at the header first and
// refuse an array before its data is read, use [NewDecoder] or [Open],
// then [Decoder.Header] or [File.Header], then ReadArray.
//
// Reading is defensive, because .npy files are often downloaded or handed
// over by other programs: the header is parsed by a small tokenizer for the
// subset of Python literals the format uses (never evaluated), its length is
// bounded, and the element count is computed with overflow checks. The
// array data may not exceed a limit, [ReadOptions].MaxBytes, by default
// [DefaultMaxBytes] (the machine's memory): a larger array fails with
// [ErrTooLarge] from its header alone, before any data is read or memory
// allocated for it, even if the file (a sparse one, say) is as large as it
// claims. When the input's size is known in advance (regular files,
// in-memory readers), a short or overlong input fails before its data is
// read. A read needs about the size of the data in memory, Fortran order
// and pipes included; from an input of unknown size, a short input claiming
// a huge shape fails with [ErrTruncated] having allocated a small multiple
// of what it held. Object arrays, whose payload is a Python pickle, are
// rejected with [ErrObjectArray] and never unpickled.
//
// [Open] never blocks in open: a FIFO without a writer fails at once, as
// empty input, while a FIFO or pipe with a writer (bash's <(cmd),
// /dev/stdin fed by a pipe) is read as it arrives.
//
// # Writing
//
// [WriteFile] replaces its destination atomically: readers of the path see
// either the old file or the complete new one, never a partial write. It
// follows symbolic links, creating the file a dangling link names, and
// refuses a destination that is a directory ([ErrIsDirectory]) or any other
// file that is not a regular file, such as a device or FIFO
// ([ErrNotRegular]). [CheckWritable] makes the same checks before any work,
// and [WriteFileContext] stops, leaving nothing behind, when its context is
// done.
//
// # Errors
//
// All errors returned by this package have one-line messages starting with
// "npy: " (followed by the path for the functions that take one) and wrap
// exactly one of the sentinel errors ([ErrNotNPY], [ErrTruncated],
// [ErrCorrupt], [ErrUnsupportedDType], [ErrObjectArray], [ErrInvalidArray],
// [ErrIsDirectory], [ErrTooLarge], [ErrNotRegular]) or, for I/O failures
// and cancellation, the underlying error; test for them with errors.Is.
package npy
